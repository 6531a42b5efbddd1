import Foundation
import HeraldCore
import HeraldEngine
import HeraldProviderMocks
import HeraldServerTestSupport
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import HeraldAPI
@testable import HeraldHomeAssistant
@testable import HeraldServer

/// Home Assistant's own `mobile_app` notify code (`scripts/ha-notify.py`, from the
/// `homeassistant` wheel in `scripts/bootstrap`'s `.python/homeassistant` environment) against the relay on a real port,
/// with the mock APNs and FCM servers receiving what the engine sends.
@Suite("Home Assistant push relay with Home Assistant's notify code", .serialized)
struct HomeAssistantRelayHATests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/ha-notify.py").path
    static let device = "Herald Test Phone"

    /// One notify call as Home Assistant reported it: what it logged, and what it raised.
    struct Send {
        var logs: [(level: String, message: String)]
        var exception: String?
    }

    @Test(
        "Home Assistant logs the rate limits of each 201, and the 151st message of the day as rate-limited")
    func dailyLimit() async throws {
        let harness = try await EngineHarness(dialects: HomeAssistantCaller.dialects())
        let token = Fixtures.fcmToken()
        try await Self.live(harness) { api, port in
            _ = try await api.register(#"{"platform":"android","token":"\#(token)"}"#)
            let sends = try await Self.notify(
                port: port, token: token, appID: HomeAssistantCaller.androidAppID, message: "Door opened",
                title: "Home", data: #"{"channel":"alarms","tag":"door"}"#, count: 151)
            try #require(sends.count == 151)
            for (index, send) in sends.prefix(150).enumerated() {
                #expect(send.exception == nil)
                #expect(send.logs.count == 1)
                #expect(send.logs.first?.level == "INFO")
                // Nothing is sent before the relay answers (here: before the drain below).
                let prefix =
                    "mobile_app push notification rate limits for \(Self.device): 0 sent, 150 allowed, "
                    + "0 errors, resets in "
                #expect(send.logs.first?.message.hasPrefix(prefix) == true, "\(send.logs)")
            }
            let refused = try #require(sends.last)
            #expect(refused.exception == nil)
            #expect(refused.logs.map(\.level) == ["WARNING", "WARNING"])
            let warning = refused.logs.first?.message ?? ""
            #expect(warning.hasPrefix("This device has reached its maximum of 150 notifications per day."))
            #expect(warning.hasSuffix("This message is generated externally to Home Assistant."))
            #expect(
                refused.logs.last?.message.hasPrefix(
                    "mobile_app push notification rate limits for \(Self.device): 0 sent, 150 allowed, 1 errors, "
                        + "resets in ") == true)

            try await harness.drain()
            #expect(harness.fcm.requests.count == 150)
            let message = harness.fcm.requests.first?.json?.objectValue?["message"]?.objectValue
            #expect(message?["notification"] == nil)
            #expect(message?["data"]?.objectValue?["message"] == .string("Door opened"))
            #expect(message?["data"]?.objectValue?["title"] == .string("Home"))
            #expect(message?["data"]?.objectValue?["channel"] == .string("alarms"))
            #expect(message?["data"]?.objectValue?["webhook_id"] == .string("herald-test-webhook"))
        }
    }

    @Test(
        "Home Assistant delivers to an iOS device through APNs, and to a token Herald had never seen")
    func appleAndUnknown() async throws {
        let harness = try await EngineHarness(dialects: HomeAssistantCaller.dialects())
        let token = Fixtures.apnsToken()
        try await Self.live(harness) { api, port in
            _ = try await api.register(#"{"platform":"ios","token":"\#(token)"}"#)
            let sent = try await Self.notify(
                port: port, token: token, appID: HomeAssistantCaller.iOSAppID, message: "Motion", title: "Garden",
                data: #"{"push":{"badge":2,"interruption-level":"time-sensitive"},"group":"cameras"}"#)
            #expect(sent.first?.exception == nil)
            #expect(sent.first?.logs.first?.level == "INFO")
            #expect(sent.first?.logs.first?.message.contains("0 sent, 150 allowed, 0 errors") == true)
            let command = try await Self.notify(
                port: port, token: token, appID: HomeAssistantCaller.iOSAppID, message: "request_location_update")
            #expect(command.first?.logs.first?.message.contains("0 sent, 150 allowed, 0 errors") == true)

            // A token Herald has never seen (the Companion app registered it with Home Assistant only).
            let unknown = try await Self.notify(
                port: port, token: Fixtures.apnsToken(), appID: HomeAssistantCaller.iOSAppID, message: "Hello")
            #expect(unknown.first?.exception == nil)
            #expect(unknown.first?.logs.map(\.level) == ["INFO"])
            #expect(unknown.first?.logs.first?.message.contains("0 sent, 150 allowed, 0 errors") == true)

            try await harness.drain()
            #expect(harness.apns.requests.count == 3)
            let alert = harness.apns.requests.first { $0.header("apns-push-type") == "alert" }
            let aps = alert?.json?.objectValue?["aps"]?.objectValue
            #expect(aps?["alert"] == .object(["title": .string("Garden"), "body": .string("Motion")]))
            #expect(aps?["badge"] == .number(2))
            #expect(aps?["interruption-level"] == .string("time-sensitive"))
            #expect(aps?["thread-id"] == .string("cameras"))
            let background = harness.apns.requests.first { $0.header("apns-push-type") == "background" }
            #expect(
                background?.json?.objectValue?["homeassistant"]
                    == .object(["command": .string("request_location_update")]))
        }
    }

    @Test(
        "A token never seen is relayed; once FCM refuses it, Home Assistant logs the relay's error and FCM hears nothing more"
    )
    func unseenAndRefused() async throws {
        let harness = try await EngineHarness(dialects: HomeAssistantCaller.dialects())
        let fresh = Fixtures.fcmToken()
        let dead = Fixtures.fcmToken()
        try await Self.live(harness) { api, port in
            let first = try await Self.notify(
                port: port, token: fresh, appID: HomeAssistantCaller.androidAppID, message: "Door opened")
            #expect(first.first?.exception == nil)
            #expect(first.first?.logs.map(\.level) == ["INFO"])
            #expect(first.first?.logs.first?.message.contains("0 sent, 150 allowed, 0 errors") == true)
            try await harness.drain()
            #expect(harness.fcm.requests.map(\.token) == [fresh])

            // Another phone, another mobile_app registration.
            harness.fcm.script(token: dead, .unregistered)
            let accepted = try await Self.notify(
                port: port, token: dead, appID: HomeAssistantCaller.androidAppID, message: "Motion",
                webhookID: "second-phone")
            #expect(accepted.first?.logs.map(\.level) == ["INFO"])
            try await harness.drain()
            #expect(harness.fcm.requests.count == 2)

            let refused = try await Self.notify(
                port: port, token: dead, appID: HomeAssistantCaller.androidAppID, message: "Motion again",
                webhookID: "second-phone")
            #expect(refused.first?.exception == nil)
            #expect(refused.first?.logs.map(\.level) == ["ERROR"])
            let error = refused.first?.logs.first?.message ?? ""
            #expect(error.hasPrefix("The push service reported this device's token as no longer valid."))
            #expect(error.hasSuffix("This message is generated externally to Home Assistant."))
            try await harness.drain()
            #expect(harness.fcm.requests.count == 2)
        }
    }

    @Test(
        "Two relay apps: each Companion app's new tokens go to the app whose app_ids lists it")
    func twoApps() async throws {
        var dialects = DialectSettings()
        dialects.homeAssistant = [
            "demo": HomeAssistantRelayConfiguration(relay: true, companionAppIDs: [HomeAssistantCaller.androidAppID]),
            "other": HomeAssistantRelayConfiguration(relay: true, companionAppIDs: [HomeAssistantCaller.iOSAppID]),
        ]
        let harness = try await EngineHarness(dialects: dialects, otherApps: ["other"])
        let android = Fixtures.fcmToken()
        let apple = Fixtures.apnsToken()
        try await Self.live(harness) { _, port in
            for (token, appID) in [(android, HomeAssistantCaller.androidAppID), (apple, HomeAssistantCaller.iOSAppID)] {
                let sent = try await Self.notify(port: port, token: token, appID: appID, message: "Hello")
                #expect(sent.first?.logs.map(\.level) == ["INFO"], "\(appID)")
            }
            let stranger = try await Self.notify(
                port: port, token: Fixtures.fcmToken(), appID: "com.example.fork", message: "Hello")
            #expect(stranger.first?.logs.map(\.level) == ["ERROR"])
            #expect(stranger.first?.logs.first?.message.contains("home_assistant.app_ids") == true)

            let store = harness.server.store
            #expect(try await store.installation(appID: "demo", service: .fcm, token: android) != nil)
            #expect(try await store.installation(appID: "other", service: .apns, token: apple) != nil)
            try await harness.drain()
            #expect(harness.fcm.requests.count == 1)
            #expect(harness.apns.requests.count == 1)
        }
    }

    @Test(
        "The new-token limit at its boundary: Home Assistant logs the relay's warning for the token past it")
    func newTokenLimit() async throws {
        var dialects = DialectSettings()
        dialects.homeAssistant = ["demo": HomeAssistantRelayConfiguration(relay: true, newTokensPerMinute: 2)]
        let harness = try await EngineHarness(dialects: dialects)
        try await Self.live(harness) { _, port in
            var levels: [[String]] = []
            for phone in 0..<3 {
                let sent = try await Self.notify(
                    port: port, token: Fixtures.fcmToken(), appID: HomeAssistantCaller.androidAppID, message: "Hi",
                    webhookID: "phone-\(phone)")
                levels.append(sent.first?.logs.map(\.level) ?? [])
                if levels.count == 3 {
                    #expect(
                        sent.first?.logs.first?.message.hasPrefix("Herald registers at most 2 new push tokens") == true)
                }
            }
            #expect(levels == [["INFO"], ["INFO"], ["WARNING"]])
            try await harness.drain()
            #expect(harness.fcm.requests.count == 2)
        }
    }

    /// The counters Home Assistant logs after an answer: "N sent, M allowed, E errors".
    static func counted(_ send: Send?) -> String? {
        guard let line = send?.logs.last?.message, let start = line.range(of: ": ")?.upperBound,
            let end = line.range(of: ", resets in")?.lowerBound
        else { return nil }
        return String(line[start..<end])
    }

    @Test(
        "rateLimits: successful is what the provider took and errors what it refused; the maximum counts what the relay accepted"
    )
    func providerOutcomes() async throws {
        let harness = try await EngineHarness(dialects: HomeAssistantCaller.dialects(maximumPerDay: 3))
        let token = Fixtures.fcmToken()
        try await Self.live(harness) { api, port in
            func notify(_ message: String) async throws -> Send? {
                try await Self.notify(
                    port: port, token: token, appID: HomeAssistantCaller.androidAppID, message: message
                ).first
            }
            // The relay answers once the push is queued: its own outcome is not in its answer yet.
            #expect(Self.counted(try await notify("One")) == "0 sent, 3 allowed, 0 errors")
            try await harness.drain()
            harness.fcm.script(
                token: token,
                .error(
                    status: 400, rpcStatus: "INVALID_ARGUMENT", message: "Invalid value at 'message.data'",
                    errorCode: "INVALID_ARGUMENT",
                    fieldViolations: [.init(field: "message.data", description: "Invalid value")]),
                times: 1)
            #expect(Self.counted(try await notify("Two")) == "1 sent, 3 allowed, 0 errors")
            try await harness.drain()
            #expect(Self.counted(try await notify("Three")) == "1 sent, 3 allowed, 1 errors")
            // The third was accepted and is not sent yet: the maximum is reached all the same.
            let refused = try await notify("Four")
            #expect(refused?.logs.map(\.level) == ["WARNING", "WARNING"])
            #expect(Self.counted(refused) == "1 sent, 3 allowed, 2 errors")
            try await harness.drain()
            #expect(harness.fcm.requests.count == 3)
            // Once the provider answered: 2 taken, 1 refused by FCM and 1 by the relay (the 429); 3 accepted.
            let limits = try await HomeAssistantCaller(client: api.client).rateLimits(token: token)
            #expect(limits.rateLimitCounts == [2, 2, 4, 3, 0])
        }
    }

    @Test(
        "An invalidated token is pushed to once a day: a refusal keeps it invalidated, a delivery revives its installation"
    )
    func invalidatedRetry() async throws {
        let harness = try await EngineHarness(dialects: HomeAssistantCaller.dialects())
        let token = Fixtures.fcmToken()
        let clock = harness.server.clock
        let store = harness.server.store
        try await Self.live(harness) { _, port in
            func levels(_ message: String) async throws -> [String]? {
                try await Self.notify(
                    port: port, token: token, appID: HomeAssistantCaller.androidAppID, message: message
                ).first?.logs.map(\.level)
            }
            harness.fcm.script(token: token, .unregistered, times: 2)
            #expect(try await levels("First") == ["INFO"])
            try await harness.drain()
            let invalidated = try #require(try await store.installation(appID: "demo", service: .fcm, token: token))
            #expect(!invalidated.valid)
            #expect(try await levels("Too soon") == ["ERROR"])
            clock.advance(by: .seconds(23 * 3600))
            #expect(try await levels("Still too soon") == ["ERROR"])
            #expect(harness.fcm.requests.count == 1)

            // A day after the invalidation: one retry, claimed in the store (so once between nodes).
            clock.advance(by: .seconds(3600 + 1))
            #expect(try await levels("Retry") == ["INFO"])
            #expect(try await levels("Same hour") == ["ERROR"])
            try await harness.drain()
            #expect(harness.fcm.requests.map(\.token) == [token, token])
            // FCM refused it again: still invalidated, since the same time (its clean-up is not put off).
            let still = try #require(try await store.installation(appID: "demo", service: .fcm, token: token))
            #expect(!still.valid)
            #expect(still.invalidatedAt == invalidated.invalidatedAt)

            clock.advance(by: .seconds(23 * 3600))
            #expect(try await levels("Not yet") == ["ERROR"])
            clock.advance(by: .seconds(3600 + 1))
            #expect(try await levels("Retry again") == ["INFO"])
            try await harness.drain()
            let revived = try #require(try await store.installation(appID: "demo", service: .fcm, token: token))
            #expect(revived.valid)
            #expect(revived.invalidatedAt == nil)
            #expect(try await levels("As usual") == ["INFO"])
            try await harness.drain()
            #expect(harness.fcm.requests.count == 4)
        }
    }

    @Test(
        "A reload that changes apns_environment moves the relay's APNs installations; their invalidated tokens are retried at once"
    )
    func reloadMovesEnvironment() async throws {
        var dialects = DialectSettings()
        dialects.homeAssistant = ["demo": HomeAssistantRelayConfiguration(relay: true, apnsEnvironment: .sandbox)]
        let harness = try await EngineHarness(dialects: dialects, apnsSandbox: .separate)
        let sandbox = try #require(harness.sandboxAPNs)
        let token = Fixtures.apnsToken()
        let native = Fixtures.apnsToken()
        let store = harness.server.store
        try await Self.live(harness) { api, port in
            func levels(_ message: String) async throws -> [String]? {
                // An app id of the harness's APNs topic: the mock APNs serves that topic only.
                try await Self.notify(port: port, token: token, appID: EngineHarness.topic, message: message)
                    .first?.logs.map(\.level)
            }
            // A store build's token adopted as a sandbox one: APNs's sandbox does not know it.
            sandbox.script(token: token, .badDeviceToken)
            _ = try await api.register(#"{"platform":"ios","token":"\#(native)","environment":"sandbox"}"#)
            #expect(try await levels("First") == ["INFO"])
            try await harness.drain()
            #expect(sandbox.requests.count == 1)
            #expect(try await store.installation(appID: "demo", service: .apns, token: token)?.valid == false)
            #expect(try await levels("Refused") == ["ERROR"])

            // The operator fixes the setting and reloads (SIGHUP).
            let before = harness.server.configuration
            var fixed = before
            fixed.dialects.homeAssistant = [
                "demo": HomeAssistantRelayConfiguration(relay: true, apnsEnvironment: .production)
            ]
            let loaded = fixed
            let reloader = ConfigurationReloader(
                configuration: before, file: nil, store: store, apps: harness.server.apps,
                dispatcher: harness.server.dispatcher, logger: Logger(label: "test"), load: { loaded })
            #expect(await reloader.reload(from: before, reason: "SIGHUP") != nil)
            // The harness's provider clients are made in memory, not from its configuration: put them
            // back, as a reload of the same credentials makes them again.
            _ = harness.server.dispatcher.replaceTransports(["demo": harness.transports])

            let moved = try #require(try await store.installation(appID: "demo", service: .apns, token: token))
            #expect(moved.environment == .production)
            #expect(!moved.valid)
            // Not registered by the relay: it keeps the environment it was registered with.
            #expect(try await store.installation(appID: "demo", service: .apns, token: native)?.environment == .sandbox)
            #expect(try await levels("After the reload") == ["INFO"])
            try await harness.drain()
            #expect(harness.apns.requests.count == 1)
            #expect(sandbox.requests.count == 1)
            #expect(try await store.installation(appID: "demo", service: .apns, token: token)?.valid == true)
        }
    }

    /// Runs `test` with the harness's router on a real port, then stops the mocks.
    static func live(
        _ harness: EngineHarness, _ test: @Sendable (API, Int) async throws -> Void
    ) async throws {
        let app = Application(router: try harness.server.router().router)
        do {
            try await app.test(.live) { client in
                let port = try #require(client.port)
                try await test(API(client: client), port)
            }
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }

    /// Calls the notify service `count` times through `scripts/ha-notify.py`.
    static func notify(
        port: Int, token: String, appID: String, message: String, title: String? = nil, data: String? = nil,
        count: Int = 1, webhookID: String? = nil
    ) async throws -> [Send] {
        // `--name=value`: an FCM token (or a message) may start with "-", which argparse would take for an option.
        var arguments = [
            try TestPython.homeAssistant.interpreter(), script, "--push-url=http://127.0.0.1:\(port)/ha/push",
            "--push-token=\(token)",
            "--app-id=\(appID)", "--device-name=\(device)", "--message=\(message)", "--count=\(count)",
        ]
        if let title { arguments.append("--title=\(title)") }
        if let data { arguments.append("--data=\(data)") }
        if let webhookID { arguments.append("--webhook-id=\(webhookID)") }
        let (status, output, errors) = try await run(arguments)
        guard status == 0 else { throw TestFailure("ha-notify.py failed (\(status)): \(errors)") }
        let results = try JSONValue.parse(Array(output.utf8)).objectValue?["results"]
        guard case .array(let items)? = results else { throw TestFailure("ha-notify.py printed \(output)") }
        return items.map { item in
            let object = item.objectValue ?? [:]
            var logs: [(String, String)] = []
            if case .array(let records)? = object["logs"] {
                for record in records {
                    if case .string(let level)? = record.objectValue?["level"],
                        case .string(let text)? = record.objectValue?["message"]
                    {
                        logs.append((level, text))
                    }
                }
            }
            var exception: String?
            if case .string(let text)? = object["exception"] { exception = text }
            return Send(logs: logs, exception: exception)
        }
    }

    /// Runs a command; its exit status, standard output and standard error.
    static func run(_ arguments: [String]) async throws -> (Int32, String, String) {
        try await ScriptProcess.run(arguments)
    }
}

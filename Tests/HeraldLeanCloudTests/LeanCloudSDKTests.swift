import Foundation
import HeraldCore
import HeraldProviderMocks
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HeraldAPI
@testable import HeraldLeanCloud

/// `scripts/leancloud-sdk-test.py` (LeanCloud's own Python SDK, in `scripts/bootstrap`'s `.python/leancloud` environment)
/// against Herald on a real port, with the mock APNs (production and sandbox) and FCM servers
/// receiving what the engine sends.
@Suite("LeanCloud push API with LeanCloud's Python SDK")
struct LeanCloudSDKTests {
    static let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts")
    static let script = scripts.appendingPathComponent("leancloud-sdk-test.py").path

    @Test(
        "The SDK saves, subscribes, queries and deletes installations, pushes each kind, and reads the status")
    func sdk() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects(), apnsSandbox: .separate)
        let app = Application(router: try harness.server.router().router)
        do {
            try await app.test(.live) { client in
                let port = try #require(client.port)
                let (status, output, errors) = try await Self.runWithWorkers(port: port, harness: harness)
                #expect(status == 0, "\(errors)")
                guard status == 0 else { return }
                try await harness.drain()
                let result = try JSONValue.parse(Array(output.utf8))
                try Self.check(result, harness: harness)
            }
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }

    @Test(
        "The push guide's fifteen curl requests, byte for byte (scripts/leancloud-doc-requests.py), checked against the seed itself"
    )
    func guideRequests() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects(clientPush: true))
        let app = Application(router: try harness.server.router().router)
        let seed = Self.scripts.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("shared/seeds/003_8f774a6a03a8d631.txt").path
        var arguments = try TestPython.tools.command(
            Self.scripts.appendingPathComponent("leancloud-doc-requests.py").path, ["--json", "strict"])
        // The seed beside the clone (CI's layout): the script first checks its requests are still the seed's.
        if FileManager.default.fileExists(atPath: seed) { arguments += ["--seed", seed] }
        let command = arguments
        do {
            try await app.test(.live) { client in
                let port = try #require(client.port)
                var environment = ProcessInfo.processInfo.environment
                environment["LEANCLOUD_API_SERVER"] = "http://127.0.0.1:\(port)"
                environment["HERALD_LC_APP_ID"] = LeanCloudClient.appID
                environment["HERALD_LC_APP_KEY"] = LeanCloudClient.appKey
                let scriptEnvironment = environment
                let (status, output, errors) = try await withThrowingTaskGroup(of: (Int32, String, String)?.self) {
                    group in
                    group.addTask { try await ScriptProcess.run(command, environment: scriptEnvironment) }
                    group.addTask {
                        while !Task.isCancelled {
                            try await harness.drain()
                            try? await Task.sleep(for: .milliseconds(5))
                        }
                        return nil
                    }
                    defer { group.cancelAll() }
                    while let result = try await group.next() { if let result { return result } }
                    throw TestFailure("the script did not run")
                }
                #expect(status == 0, "\(errors)")
                let result = try JSONValue.parse(Array(output.utf8))
                #expect(result.objectValue?["json"] == .string("strict"), "\(output)")
            }
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }

    /// What the mocks received against what the script says each push must reach.
    static func check(_ result: JSONValue, harness: EngineHarness) throws {
        let root = try #require(result.objectValue)
        let ios = try #require(root["installations"]?.objectValue?["ios"]?.objectValue)
        let android = try #require(root["installations"]?.objectValue?["android"]?.objectValue)
        let token = try #require(ios["deviceToken"]?.text)
        let registrationID = try #require(android["registrationId"]?.text)
        let notifications = try #require(root["notifications"]?.objectValue)
        #expect(
            Set(notifications.keys) == ["channel", "where", "sandbox", "scheduled", "expired", "silent", "increment"])
        let production = harness.apns.requests.filter { $0.token == token }
        let sandbox = harness.sandboxAPNs?.requests.filter { $0.token == token } ?? []
        let fcm = harness.fcm.requests.filter { $0.token == registrationID }
        func alerts(_ requests: [MockAPNsServer.RecordedRequest]) -> [String] {
            requests.compactMap { $0.json?.objectValue?["aps"]?.objectValue?["alert"]?.objectValue?["body"]?.text }
        }
        for (name, value) in notifications {
            let push = try #require(value.objectValue)
            var expect: [String] = []
            if case .array(let items)? = push["expect"] { expect = items.compactMap(\.text) }
            let alert = push["data"]?.objectValue?["alert"]?.text
            let apnsAlerts = alerts(push["apns"]?.text == "development" ? sandbox : production)
            if let alert {
                #expect(apnsAlerts.contains(alert) == expect.contains("ios"), "\(name) on APNs")
                let fcmBodies = fcm.compactMap {
                    $0.json?.objectValue?["message"]?.objectValue?["notification"]?.objectValue?["body"]?.text
                }
                #expect(fcmBodies.contains(alert) == expect.contains("android"), "\(name) on FCM")
            }
            // "done" once finished, an error message for the expired one; subscribers: the devices reached.
            #expect(push["status"]?.text == (expect.isEmpty ? LeanCloudExpected.expired : "done"), "\(name) status")
            #expect(push["subscribers"] == .number(JSONNumber(expect.count)), "\(name) subscribers")
        }
        // The push 6 s ahead read "in queue" (at once, before its push time) until it was "done".
        let statuses = notifications["scheduled"]?.objectValue?["statuses"]?.arrayValue?.compactMap(\.text) ?? []
        #expect(statuses.first == "in queue")
        #expect(statuses.last == "done")
        #expect(Set(statuses) == ["in queue", "done"])
        // Per platform: the title is Android's, the iOS alert is the alert text alone.
        let run = try #require(root["run"]?.text)
        let channelAPNs = production.first { alerts([$0]) == ["channel \(run)"] }
        #expect(
            channelAPNs?.json?.objectValue?["aps"]?.objectValue?["alert"]
                == .object(["body": .string("channel \(run)")]))
        let channelFCM = fcm.compactMap { $0.json?.objectValue?["message"]?.objectValue?["notification"] }
        #expect(channelFCM.contains(.object(["title": .string("Herald"), "body": .string("channel \(run)")])))
        // Production: channel, where, increment, scheduled; the sandbox: the dev push only.
        #expect(production.count == 4)
        #expect(sandbox.count == 1)
        #expect(alerts(sandbox).allSatisfy { $0.hasPrefix("sandbox ") })
        // The increment push carried the stored badge plus one, which the installation keeps.
        let badges = production.compactMap { $0.json?.objectValue?["aps"]?.objectValue?["badge"] }
        #expect(badges.contains(.number(JSONNumber(7))))
        #expect(ios["badge"] == .number(JSONNumber(7)))
        // FCM: the channel and scheduled pushes, and the silent action push as data only.
        #expect(fcm.count == 3)
        let silent = fcm.compactMap { $0.json?.objectValue?["message"]?.objectValue }
            .first { $0["data"]?.objectValue?["action"] != nil }
        #expect(silent?["notification"] == nil)
        #expect(silent?["data"]?.objectValue?["action"] == .string("com.example.UPDATE"))
        #expect(silent?["data"]?.objectValue?["extra"] == .string("x"))
        let errors = try #require(root["errors"]?.objectValue)
        #expect(errors["forbidden"] == .number(JSONNumber(119)))
        #expect(errors["unauthorized"] == .number(JSONNumber(401)))
        // The app key's push, client push off: 119, and the message names the setting to turn on.
        #expect(errors["push"] == .number(JSONNumber(119)))
        #expect(errors["pushMessage"]?.text?.contains("app.demo.leancloud.client_push") == true)
    }

    /// Runs the script against `port` while the engine's due jobs are worked and the harness's
    /// clock follows the wall clock (the script polls each push's status until it is done).
    static func runWithWorkers(port: Int, harness: EngineHarness) async throws -> (Int32, String, String) {
        try await withThrowingTaskGroup(of: (Int32, String, String)?.self) { group in
            group.addTask { try await run(port: port) }
            group.addTask {
                while !Task.isCancelled {
                    let clock = harness.server.clock
                    clock.advance(by: .seconds(max(0, Date().timeIntervalSince(clock.date))))
                    try await harness.drain()
                    try? await Task.sleep(for: .milliseconds(5))
                }
                return nil
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let result { return result }
            }
            throw TestFailure("the script did not run")
        }
    }

    /// Runs the script against `port`; its exit status, standard output and standard error.
    static func run(port: Int) async throws -> (Int32, String, String) {
        var environment = ProcessInfo.processInfo.environment
        environment["LEANCLOUD_API_SERVER"] = "http://127.0.0.1:\(port)"
        environment["HERALD_LC_APP_ID"] = LeanCloudClient.appID
        environment["HERALD_LC_APP_KEY"] = LeanCloudClient.appKey
        environment["HERALD_LC_MASTER_KEY"] = LeanCloudClient.masterKey
        for name in ["LC_API_SERVER", "LEANCLOUD_APP_ENV", "LEAN_CLI_HAVE_STAGING"] { environment[name] = nil }
        return try await ScriptProcess.run(TestPython.leanCloud.command(script), environment: environment)
    }
}

extension JSONValue {
    fileprivate var text: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}

import Foundation
import HTTPTypes
import HeraldCore
import HeraldEngine
import HeraldProviderMocks
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

@testable import HeraldAPI
@testable import HeraldHomeAssistant

@Suite("Home Assistant push relay, through the router and the mock providers", .serialized)
struct HomeAssistantRelayTests {
    /// The next UTC midnight after `date`, as the relay writes `resetsAt`.
    static func nextMidnight(after date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let midnight = calendar.date(byAdding: .day, value: 1, to: calendar.startOfDay(for: date))!
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"
        return formatter.string(from: midnight)
    }

    @Test("A notification is accepted with 201 and rateLimits, and reaches FCM as the Android app reads it")
    func androidDelivery() async throws {
        let harness = try await EngineHarness(dialects: HomeAssistantCaller.dialects())
        let token = Fixtures.fcmToken()
        try await harness.run { api in
            _ = try await api.register(#"{"platform":"android","token":"\#(token)"}"#)
            let ha = HomeAssistantCaller(client: api.client)
            let answer = try await ha.send(
                "Front door opened", title: "Home",
                data: #"""
                    {"channel": "alarms", "tag": "door", "group": "security", "priority": "high", "ttl": 0, \#
                    "persistent": true, "clickAction": "/lovelace/doors", \#
                    "actions": [{"action": "OPEN", "title": "Open"}], \#
                    "android": {"collapse_key": "door", "notification": {"channel_id": "alarms"}}, \#
                    "data": {"extra": "1"}}
                    """#, token: token)
            #expect(answer.status == .created)
            #expect(answer.isJSON)
            let id = try #require(answer.string("messageId"))
            #expect(answer.string("target") == token)
            #expect(answer["sentPayload"]?.objectValue != nil)
            // Queued, not sent yet: `successful` counts it once FCM took it.
            #expect(answer.rateLimitCounts == [0, 0, 1, 150, 149])
            #expect(answer.string("rateLimits.resetsAt") == Self.nextMidnight(after: harness.server.clock.date))

            try await harness.drain()
            #expect(try await api.notification(id).string("status") == "done")
            #expect(try await ha.rateLimits(token: token).rateLimitCounts == [1, 0, 1, 150, 149])
            let request = try #require(harness.fcm.requests.first)
            #expect(request.token == token)
            let message = try #require(request.json?.objectValue?["message"]?.objectValue)
            // Data-only: the Companion app builds the notification from data.
            #expect(message["notification"] == nil)
            let data = try #require(message["data"]?.objectValue)
            #expect(data["message"] == .string("Front door opened"))
            #expect(data["title"] == .string("Home"))
            #expect(data["channel"] == .string("alarms"))
            #expect(data["tag"] == .string("door"))
            #expect(data["group"] == .string("security"))
            #expect(data["persistent"] == .string("true"))
            #expect(data["clickAction"] == .string("/lovelace/doors"))
            #expect(data["action_1_key"] == .string("OPEN"))
            #expect(data["action_1_title"] == .string("Open"))
            #expect(data["webhook_id"] == .string(HomeAssistantCaller.webhookID))
            #expect(data["extra"] == .string("1"))
            let android = try #require(message["android"]?.objectValue)
            #expect(android["collapse_key"] == .string("door"))
            #expect(android["priority"] == .string("high"))
            #expect(android["ttl"] == .string("0s"))
            #expect(android["notification"]?.objectValue?["channel_id"] == .string("alarms"))
        }
    }

    @Test("Apple devices, on APNs and through FCM, get the alert the iOS app expects, with data.apns and data.push")
    func appleDelivery() async throws {
        let harness = try await EngineHarness(dialects: HomeAssistantCaller.dialects())
        let token = Fixtures.apnsToken()
        let fcmToken = Fixtures.fcmToken()
        try await harness.run { api in
            _ = try await api.register(#"{"platform":"ios","token":"\#(token)"}"#)
            _ = try await api.register(#"{"platform":"ios","service":"fcm","token":"\#(fcmToken)"}"#)
            let ha = HomeAssistantCaller(client: api.client)
            let data = #"""
                {"subtitle": "Camera 2", "tag": "garden", "group": "cameras", "url": "/lovelace/cameras", \#
                "image": "https://ha.example.com/api/camera_proxy/camera.garden", \#
                "push": {"badge": "3", "interruption-level": "time-sensitive", "sound": "chime.caf"}, \#
                "apns": {"payload": {"custom": {"camera": "garden"}}, "headers": {"apns-expiration": "0"}}}
                """#
            for device in [token, fcmToken] {
                let answer = try await ha.send(
                    "Motion in the garden", title: "Garden", data: data, token: device,
                    appID: HomeAssistantCaller.iOSAppID)
                #expect(answer.status == .created)
            }
            try await harness.drain()

            // Through FCM: the notification, and the apns block as the iOS app reads it, data.apns merged in.
            let message = try #require(harness.fcm.requests.first?.json?.objectValue?["message"]?.objectValue)
            #expect(
                message["notification"]
                    == .object(["title": .string("Garden"), "body": .string("Motion in the garden")]))
            let block = try #require(message["apns"]?.objectValue)
            #expect(
                block["headers"]
                    == .object([
                        "apns-push-type": .string("alert"), "apns-collapse-id": .string("garden"),
                        "apns-expiration": .string("0"),
                    ]))
            let fcmPayload = try #require(block["payload"]?.objectValue)
            #expect(fcmPayload["custom"] == .object(["camera": .string("garden")]))
            #expect(fcmPayload["url"] == .string("/lovelace/cameras"))
            #expect(fcmPayload["aps"]?.objectValue?["thread-id"] == .string("cameras"))
            #expect(fcmPayload["aps"]?.objectValue?["badge"] == .number(3))

            let request = try #require(harness.apns.requests.first)
            #expect(request.token == token)
            #expect(request.header("apns-push-type") == "alert")
            #expect(request.header("apns-collapse-id") == "garden")
            #expect(request.header("apns-expiration") == "0")
            let body = try #require(request.json?.objectValue)
            let aps = try #require(body["aps"]?.objectValue)
            #expect(
                aps["alert"]
                    == .object([
                        "title": .string("Garden"), "subtitle": .string("Camera 2"),
                        "body": .string("Motion in the garden"),
                    ]))
            #expect(aps["badge"] == .number(3))
            #expect(aps["sound"] == .string("chime.caf"))
            #expect(aps["interruption-level"] == .string("time-sensitive"))
            #expect(aps["thread-id"] == .string("cameras"))
            #expect(aps["category"] == .string("DYNAMIC"))
            #expect(aps["mutable-content"] == .number(1))
            #expect(body["url"] == .string("/lovelace/cameras"))
            #expect(
                body["attachment"]
                    == .object([
                        "url": .string("https://ha.example.com/api/camera_proxy/camera.garden"),
                        "content-type": .string("jpeg"),
                    ]))
            #expect(body["custom"] == .object(["camera": .string("garden")]))
            #expect(body["webhook_id"] == .string(HomeAssistantCaller.webhookID))
        }
    }

    @Test("Commands go as silent pushes: a background APNs push with homeassistant.command, data-only on FCM")
    func commands() async throws {
        let harness = try await EngineHarness(dialects: HomeAssistantCaller.dialects())
        let apnsToken = Fixtures.apnsToken()
        let fcmToken = Fixtures.fcmToken()
        let iosFCMToken = Fixtures.fcmToken()
        try await harness.run { api in
            _ = try await api.register(#"{"platform":"ios","token":"\#(apnsToken)"}"#)
            _ = try await api.register(#"{"platform":"android","token":"\#(fcmToken)"}"#)
            _ = try await api.register(#"{"platform":"ios","service":"fcm","token":"\#(iosFCMToken)"}"#)
            let ha = HomeAssistantCaller(client: api.client)
            let ios = try await ha.send(
                "request_location_update", token: apnsToken, appID: HomeAssistantCaller.iOSAppID)
            #expect(ios.status == .created)
            let android = try await ha.send("command_dnd", data: #"{"command": "off"}"#, token: fcmToken)
            #expect(android.status == .created)
            let clear = try await ha.send(
                "clear_notification", data: #"{"tag": "door"}"#, token: iosFCMToken,
                appID: HomeAssistantCaller.iOSAppID)
            #expect(clear.status == .created)
            try await harness.drain()

            let apns = try #require(harness.apns.requests.first)
            #expect(apns.header("apns-push-type") == "background")
            #expect(apns.header("apns-priority") == "5")
            let body = try #require(apns.json?.objectValue)
            #expect(body["aps"] == .object(["content-available": .number(1)]))
            #expect(body["homeassistant"] == .object(["command": .string("request_location_update")]))

            let messages = harness.fcm.requests.compactMap { $0.json?.objectValue?["message"]?.objectValue }
            let dnd = try #require(messages.first { $0["token"] == .string(fcmToken) })
            #expect(dnd["notification"] == nil)
            #expect(dnd["data"]?.objectValue?["message"] == .string("command_dnd"))
            #expect(dnd["data"]?.objectValue?["command"] == .string("off"))

            let viaFCM = try #require(messages.first { $0["token"] == .string(iosFCMToken) })
            #expect(viaFCM["notification"] == nil)
            let apnsBlock = try #require(viaFCM["apns"]?.objectValue)
            #expect(apnsBlock["headers"]?.objectValue?["apns-push-type"] == .string("background"))
            let payload = try #require(apnsBlock["payload"]?.objectValue)
            #expect(payload["aps"]?.objectValue?["content-available"] == .number(1))
            #expect(payload["aps"]?.objectValue?["alert"] == nil)
            #expect(
                payload["homeassistant"] == .object(["command": .string("clear_notification"), "tag": .string("door")]))
        }
    }

    @Test("Apple options: clear_badge, sound none, critical sounds, actionable categories, delete_alert")
    func appleOptions() async throws {
        let harness = try await EngineHarness(dialects: HomeAssistantCaller.dialects())
        let token = Fixtures.apnsToken()
        try await harness.run { api in
            _ = try await api.register(#"{"platform":"ios","token":"\#(token)"}"#)
            let ha = HomeAssistantCaller(client: api.client)
            let sends: [(String, String?)] = [
                ("clear_badge", nil),
                ("Quiet", #"{"push": {"sound": "none"}}"#),
                (
                    "Smoke!",
                    #"{"push": {"sound": {"name": "default", "critical": "1", "volume": "0.8"}, "category": "alarm"}}"#
                ),
                ("Lights", #"{"entity_id": "camera.door", "action_data": {"scene": "evening"}}"#),
                ("delete_alert", #"{"push": {"badge": 4}}"#),
            ]
            for (message, data) in sends {
                let answer = try await ha.send(message, data: data, token: token, appID: HomeAssistantCaller.iOSAppID)
                #expect(answer.status == .created, "\(message)")
                // One at a time, so the mock receives them in order.
                try await harness.drain()
            }
            let bodies = harness.apns.requests.compactMap { $0.json?.objectValue }
            try #require(bodies.count == 5)
            #expect(bodies[0]["aps"] == .object(["badge": .number(0)]))
            #expect(bodies[1]["aps"] == .object(["alert": .object(["body": .string("Quiet")])]))
            let critical = bodies[2]["aps"]?.objectValue
            #expect(
                critical?["sound"]
                    == .object(["name": .string("default"), "critical": .number(1), "volume": .number(0.8)]))
            #expect(critical?["category"] == .string("ALARM"))
            let actionable = bodies[3]
            #expect(actionable["entity_id"] == .string("camera.door"))
            #expect(actionable["homeassistant"] == .object(["scene": .string("evening")]))
            #expect(actionable["aps"]?.objectValue?["category"] == .string("DYNAMIC"))
            #expect(actionable["aps"]?.objectValue?["mutable-content"] == .number(1))
            #expect(bodies[4]["aps"] == .object(["badge": .number(4)]))
        }
    }

    @Test("The maximum-th notification of the day is accepted, the next is refused with 429, commands still go")
    func rateLimitBoundary() async throws {
        let token = Fixtures.fcmToken()
        let engine = try await EngineHarness(dialects: HomeAssistantCaller.dialects())
        try await engine.run { api in
            _ = try await api.register(#"{"platform":"android","token":"\#(token)"}"#)
            let ha = HomeAssistantCaller(client: api.client)
            for number in 1...150 {
                let answer = try await ha.send("Message \(number)", token: token)
                guard answer.status == .created else {
                    Issue.record("message \(number) answered \(answer.status)")
                    return
                }
                if number == 150 { #expect(answer.rateLimitCounts == [0, 0, 150, 150, 0]) }
            }
            let refused = try await ha.send("Message 151", token: token)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.isJSON)
            #expect(refused.string("errorType") == "RateLimited")
            #expect(refused.string("target") == token)
            let midnight = Self.nextMidnight(after: engine.server.clock.date)
            #expect(refused.string("message")?.contains(midnight) == true)
            #expect(refused.string("errorMessage") != nil)
            // The maximum counts what the relay accepted, not what the provider took so far (nothing).
            #expect(refused.rateLimitCounts == [0, 1, 151, 150, 0])
            #expect(refused.string("rateLimits.resetsAt") == midnight)

            // Companion commands neither count nor stop at the limit, as in Home Assistant's relay.
            let command = try await ha.send("request_location_update", token: token)
            #expect(command.status == .created)
            #expect(command.rateLimitCounts == [0, 1, 151, 150, 0])

            let check = try await ha.rateLimits(token: token)
            #expect(check.status == .ok)
            #expect(check.isJSON)
            #expect(check.string("target") == token)
            #expect(check.rateLimitCounts == [0, 1, 151, 150, 0])
            #expect(check.string("rateLimits.resetsAt") == midnight)
            // Only the 150 accepted and the command were stored.
            let list = try await api.call(.get, "/v1/notifications?limit=200")
            #expect(list.items.count == 151)
            // Once FCM took them: the 150, not the command.
            try await engine.drain()
            #expect(try await ha.rateLimits(token: token).rateLimitCounts == [150, 1, 151, 150, 0])
        }
    }

    @Test("The day's counters reset at UTC midnight")
    func resetAtMidnight() async throws {
        let harness = try await EngineHarness(dialects: HomeAssistantCaller.dialects(maximumPerDay: 2))
        let clock = harness.server.clock
        let token = Fixtures.fcmToken()
        // One second before the next UTC midnight.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let midnight = calendar.date(byAdding: .day, value: 1, to: calendar.startOfDay(for: clock.date))!
        clock.advance(by: .seconds(midnight.timeIntervalSince(clock.date) - 1))
        try await harness.run { api in
            _ = try await api.register(#"{"platform":"android","token":"\#(token)"}"#)
            let ha = HomeAssistantCaller(client: api.client)
            #expect(try await ha.send("one", token: token).status == .created)
            #expect(try await ha.send("two", token: token).status == .created)
            let refused = try await ha.send("three", token: token)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.string("rateLimits.resetsAt") == Self.nextMidnight(after: clock.date))

            clock.advance(by: .seconds(2))
            let next = try await ha.send("four", token: token)
            #expect(next.status == .created)
            #expect(next.rateLimitCounts == [0, 0, 1, 2, 1])
            #expect(next.string("rateLimits.resetsAt") == Self.nextMidnight(after: clock.date))
            #expect(try await ha.rateLimits(token: token).rateLimitCounts == [0, 0, 1, 2, 1])
        }
    }

    @Test("The counters survive a restart on the same database")
    func countersSurviveRestart() async throws {
        let harness = try await EngineHarness(dialects: HomeAssistantCaller.dialects(maximumPerDay: 3))
        let token = Fixtures.fcmToken()
        try await harness.run { api in
            _ = try await api.register(#"{"platform":"android","token":"\#(token)"}"#)
            let ha = HomeAssistantCaller(client: api.client)
            #expect(try await ha.send("one", token: token).status == .created)
            #expect(try await ha.send("two", token: token).status == .created)
        }
        let engine = try await EngineHarness()
        try await harness.server.restarted(transports: ["demo": engine.transports]) { client in
            let ha = HomeAssistantCaller(client: client)
            #expect(try await ha.rateLimits(token: token).rateLimitCounts == [0, 0, 2, 3, 1])
            let third = try await ha.send("three", token: token)
            #expect(third.status == .created)
            #expect(third.rateLimitCounts == [0, 0, 3, 3, 0])
            #expect(try await ha.send("four", token: token).status == .tooManyRequests)
        }
        await engine.stop()
    }

    @Test("Unknown tokens of a closed relay, and invalidated tokens, are refused with Home Assistant's error body")
    func unknownTokens() async throws {
        var dialects = HomeAssistantCaller.dialects()
        dialects.homeAssistant["demo"]?.registeredOnly = true
        dialects.homeAssistant["other"] = HomeAssistantRelayConfiguration(relay: false)
        let harness = try await EngineHarness(dialects: dialects)
        let token = Fixtures.fcmToken()
        let invalid = Fixtures.fcmToken()
        try await harness.run { api in
            _ = try await api.register(#"{"platform":"android","token":"\#(token)"}"#)
            _ = try await api.register(#"{"platform":"android","token":"\#(invalid)"}"#)
            let ha = HomeAssistantCaller(client: api.client)
            // FCM says the app instance is gone: the engine invalidates the installation.
            harness.fcm.script(token: invalid, .unregistered)
            #expect(try await ha.send("First", token: invalid).status == .created)
            try await harness.drain()
            #expect(harness.fcm.requests.count == 1)

            let unknown = try await ha.send("Hello", token: Fixtures.fcmToken())
            #expect(unknown.status == .notFound)
            #expect(unknown.isJSON)
            #expect(unknown.string("errorType") == "UnknownToken")
            #expect(unknown.string("errorMessage") != nil)
            #expect(unknown.string("message")?.contains("Open the Companion app") == true)
            #expect(try await ha.rateLimits(token: Fixtures.apnsToken()).status == .notFound)

            let gone = try await ha.send("Hello", token: invalid)
            #expect(gone.status == .gone)
            #expect(gone.string("errorType") == "InvalidToken")
            #expect(gone.string("message")?.contains("registers a new token") == true)

            // Nothing more was stored or sent.
            #expect(harness.fcm.requests.count == 1)
            #expect(try await api.call(.get, "/v1/notifications").items.count == 1)
            #expect(try await ha.rateLimits(token: token).rateLimitCounts == [0, 0, 0, 150, 150])
        }
    }

    @Test("A token registered for delivery through AWS SNS is found too (here: an app without SNS set up)")
    func snsToken() async throws {
        let harness = try await EngineHarness(dialects: HomeAssistantCaller.dialects())
        let token = Fixtures.fcmToken()
        try await harness.run { api in
            _ = try await api.register(#"{"platform":"android","service":"sns","token":"\#(token)"}"#)
            let answer = try await HomeAssistantCaller(client: api.client).send("Hello", token: token)
            // Found (not UnknownToken), and refused because this app has no SNS transport.
            #expect(answer.string("errorType") == "ProviderMisconfigured")
            #expect(answer.string("message")?.contains("sns") == true, "\(String(describing: answer.json))")
        }
    }

    @Test("Malformed requests are refused with 400 and count nothing")
    func malformed() async throws {
        let harness = try await EngineHarness(dialects: HomeAssistantCaller.dialects())
        let token = Fixtures.fcmToken()
        try await harness.run { api in
            _ = try await api.register(#"{"platform":"android","token":"\#(token)"}"#)
            let ha = HomeAssistantCaller(client: api.client)
            let info = #""registration_info": {"app_id": "a", "app_version": "1"}"#
            let bodies = [
                "not json", "[]", #"{"push_token": "\#(token)", \#(info)}"#,
                #"{"message": 5, "push_token": "\#(token)", \#(info)}"#,
                #"{"message": "x", \#(info)}"#, #"{"message": "x", "push_token": "\#(token)"}"#,
                #"{"message": "x", "push_token": "\#(token)", "registration_info": {"app_version": "1"}}"#,
                #"{"message": "x", "push_token": "\#(token)", \#(info), "data": []}"#,
                #"{"message": "x", "push_token": "\#(token)", \#(info), "data": {"priority": "urgent"}}"#,
                #"{"message": "x", "push_token": "\#(token)", \#(info), "data": {"ttl": -1}}"#,
            ]
            for body in bodies {
                let answer = try await ha.post(body: body)
                #expect(answer.status == .badRequest, "\(body)")
                #expect(answer.isJSON)
                #expect(answer.string("errorType") == "InvalidRequest", "\(body)")
                #expect(answer.string("message") != nil)
            }
            #expect(try await ha.post("/ha/push/rate_limits", body: "{}").status == .badRequest)
            #expect(try await ha.rateLimits(token: token).rateLimitCounts == [0, 0, 0, 150, 150])
            #expect(try await api.call(.get, "/v1/notifications").items.isEmpty)
        }
    }

    @Test("An oversized notification is refused with 413 and counted as an error")
    func oversized() async throws {
        let harness = try await EngineHarness(dialects: HomeAssistantCaller.dialects())
        let token = Fixtures.fcmToken()
        try await harness.run { api in
            _ = try await api.register(#"{"platform":"android","token":"\#(token)"}"#)
            let ha = HomeAssistantCaller(client: api.client)
            let long = String(repeating: "x", count: 5000)
            let answer = try await ha.send("Hello", data: #"{"data": {"blob": "\#(long)"}}"#, token: token)
            #expect(answer.status == .contentTooLarge)
            #expect(answer.isJSON)
            #expect(answer.string("errorType") == "PayloadTooLarge")
            #expect(answer.string("errorMessage")?.contains("FCM") == true)
            #expect(answer.string("message")?.contains("shorter") == true)
            #expect(try await ha.rateLimits(token: token).rateLimitCounts == [0, 1, 1, 150, 150])

            let huge = String(repeating: "y", count: 70 * 1024)
            let body = try await ha.send(huge, token: token)
            #expect(body.status == .contentTooLarge)
            #expect(body.string("errorType") == "PayloadTooLarge")
            #expect(try await api.call(.get, "/v1/notifications").items.isEmpty)
        }
    }

    @Test("A provider the app has not configured is refused with ProviderMisconfigured and counted as an error")
    func misconfigured() async throws {
        let harness = try await ServerHarness(dialects: HomeAssistantCaller.dialects())
        let token = Fixtures.fcmToken()
        try await harness.run { api in
            _ = try await api.register(#"{"platform":"android","token":"\#(token)"}"#)
            let ha = HomeAssistantCaller(client: api.client)
            let answer = try await ha.send("Hello", token: token)
            #expect(answer.status == .internalServerError)
            #expect(answer.isJSON)
            #expect(answer.string("errorType") == "ProviderMisconfigured")
            #expect(answer.string("errorMessage") == "FCM is not configured")
            #expect(answer.string("message")?.contains("app.demo.fcm") == true)
            #expect(try await ha.rateLimits(token: token).rateLimitCounts == [0, 1, 1, 150, 150])
        }
    }
}

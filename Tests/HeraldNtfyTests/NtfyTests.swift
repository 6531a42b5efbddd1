import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine
import HeraldProviderMocks
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import HeraldNtfy

@Suite("ntfy publishing (POST /, PUT/POST /<topic>)")
struct NtfyTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func message(
        topic: String?, _ body: String, _ parameters: [String: String] = [:]
    ) throws(NtfyError)
        -> NtfyMessage
    {
        try NtfyMessage(topic: topic, body: Array(body.utf8), parameter: { parameters[$0] }, now: now)
    }

    @Test("ntfy's parameters: JSON wins over header fields, aliases, priority names, delays; its error codes")
    func parameters() throws {
        let json = try Self.message(
            topic: nil, #"{"topic":"alerts","message":"Disk low","tags":["warning"],"priority":4}"#,
            ["x-priority": "1", "x-click": "https://x.example/1", "x-delay": "30min", "x-title": "From header"])
        #expect(json.topic == "alerts")
        #expect(json.priority == 4, "the JSON member wins")
        #expect(json.click == "https://x.example/1", "a header fills what the JSON leaves out")
        #expect(json.title == "From header")
        #expect(json.delay == 1_800)
        #expect(json.tags == ["warning"])
        let path = try Self.message(topic: "backups", "  Backup failed \n", ["ta": "a,b", "p": "urgent", "t": "Hi"])
        #expect(path.message == "Backup failed")
        #expect(path.tags == ["a", "b"])
        #expect(path.priority == 5)
        #expect(path.title == "Hi")
        #expect(try Self.message(topic: "x", "").message == "triggered")
        #expect(NtfyMessage.delay("1h30m", now: Self.now) == 5_400)
        #expect(NtfyMessage.delay("2 days", now: Self.now) == 172_800)
        #expect(NtfyMessage.delay("1800000060", now: Self.now) == 60)
        #expect(NtfyMessage.delay("tomorrow, 10am", now: Self.now) == nil)

        let request = path.sendRequest(
            to: NotificationTarget(audience: .channels(["backups"])), source: "ntfy", now: Self.now)
        #expect(request.payload.priority == .high)
        #expect(request.payload.interruptionLevel == .timeSensitive)
        #expect(request.payload.data["tags"] == .array([.string("a"), .string("b")]))

        for (topic, body, parameters, code) in [
            (nil, "not json", [String: String](), 40024), (nil, "[1]", [:], 40017),
            (nil, #"{"topic":"a b"}"#, [:], 40009),
            ("t", "x", ["p": "7"], 40007), ("t", "x", ["delay": "5s"], 40005), ("t", "x", ["delay": "9d"], 40006),
            ("t", "x", ["in": "whenever"], 40004), ("t", "x", ["attach": "ftp://x"], 40013),
            ("t", "x", ["icon": "file:///etc/passwd"], 40021), ("t", String(repeating: "x", count: 4_097), [:], 41301),
        ] as [(String?, String, [String: String], Int)] {
            do {
                _ = try Self.message(topic: topic, body, parameters)
                Issue.record("accepted \(body.prefix(20)) \(parameters)")
            } catch {
                #expect(error.code == code, "\(body.prefix(20)) \(parameters): \(error.error)")
            }
        }
    }

    /// A request with a publish key (Bearer unless `authorization` says otherwise).
    static func publish(
        _ api: API, _ path: String, method: HTTPRequest.Method = .post, body: String,
        key: String? = ServerHarness.publishKey, headers: HTTPFields = [:]
    ) async throws -> CallResponse {
        try await api.call(method, path, bearer: key, body: body, contentType: "text/plain", headers: headers)
    }

    @Test(
        "Through the router: the topic is a channel of the key's app; both forms reach the channel's devices through the mock APNs and FCM; bound keys, reserved topics, Delay, ntfy's errors"
    )
    func publishing() async throws {
        let harness = try await EngineHarness()
        try await harness.run { api in
            let phone = Fixtures.apnsToken()
            let android = Fixtures.fcmToken()
            _ = try await api.call(
                .post, "/v1/installations", body: #"{"platform":"ios","token":"\#(phone)","channels":["alerts"]}"#)
            _ = try await api.call(
                .post, "/v1/installations",
                body: #"{"platform":"android","token":"\#(android)","channels":["alerts"],"user_id":"ann"}"#)

            // The topic form, as curl -d sends it.
            let sent = try await Self.publish(
                api, "/alerts", body: "Backup done",
                headers: [
                    HTTPField.Name("Title")!: "Backups", HTTPField.Name("Tags")!: "white_check_mark,backup",
                    HTTPField.Name("Click")!: "https://backups.example.com/7", HTTPField.Name("Priority")!: "high",
                ])
            #expect(sent.status == .ok)
            #expect(sent["event"] == .string("message"))
            #expect(sent["topic"] == .string("alerts"))
            #expect(sent["priority"] == .number(4))
            let id = try #require(sent.string("id"))
            _ = try await harness.drain()
            let alert = try #require(harness.apns.requests.last)
            #expect(alert.token == phone)
            #expect(alert.json?["aps"]?["alert"]?["title"] == .string("Backups"))
            #expect(alert.json?["aps"]?["alert"]?["body"] == .string("Backup done"))
            #expect(alert.json?["tags"] == .array([.string("white_check_mark"), .string("backup")]))
            #expect(alert.json?["click"] == .string("https://backups.example.com/7"))
            #expect(try #require(harness.fcm.requests.last).json?["message"]?["token"] == .string(android))
            let record = try await api.call(.get, "/v1/notifications/\(id)")
            #expect(record["source"] == .string("ntfy"))
            #expect(record["counts.sent"] == .number(2))

            // The JSON form (Apprise's), with a Delay header: scheduled.
            let later = try await Self.publish(
                api, "/", body: #"{"topic":"alerts","message":"Later","title":"Reminder"}"#,
                headers: [HTTPField.Name("X-Delay")!: "30min"])
            #expect(later.status == .ok)
            let scheduled = try await api.call(.get, "/v1/notifications/\(try #require(later.string("id")))")
            #expect(scheduled["status"] == .string("scheduled"))

            // Keys: a bound key only to its target; a server key is no publish key; Basic and ?auth= forms.
            let user = try await Self.publish(api, "/anything", body: "for ann", key: ServerHarness.annPublishKey)
            #expect(user.status == .ok)
            _ = try await harness.drain()
            #expect(
                try #require(harness.fcm.requests.last).json?["message"]?["notification"]?["body"] == .string("for ann")
            )
            let elsewhere = try await Self.publish(api, "/news", body: "x", key: ServerHarness.alertsPublishKey)
            #expect(elsewhere.status == .forbidden)
            #expect(elsewhere["code"] == .number(40301))
            let serverKey = try await Self.publish(api, "/alerts", body: "x", key: ServerHarness.serverKey)
            #expect(serverKey.status == .unauthorized)
            #expect(serverKey["code"] == .number(40101))
            #expect(try await Self.publish(api, "/alerts", body: "x", key: nil).status == .unauthorized)
            let basic = "Basic " + Data(":\(ServerHarness.publishKey)".utf8).base64EncodedString()
            #expect(
                try await Self.publish(api, "/alerts", body: "basic", key: nil, headers: [.authorization: basic]).status
                    == .ok)
            let auth = Base64URL.encode(Array("Bearer \(ServerHarness.publishKey)".utf8))
            #expect(try await Self.publish(api, "/alerts?auth=\(auth)", body: "query", key: nil).status == .ok)

            // Herald's own first segments are not topics; ntfy's errors change nothing.
            _ = try await harness.drain()
            let before = harness.apns.requests.count
            for reserved in ["/metrics", "/v1", "/up", "/healthz", "/_matrix", "/openapi.yaml"] {
                let answer = try await Self.publish(api, reserved, body: "x")
                #expect(answer.status == .badRequest, "\(reserved)")
                #expect(answer["code"] == .number(40009), "\(reserved)")
            }
            #expect(
                try await Self.publish(api, "/alerts", body: "x", headers: [HTTPField.Name("Priority")!: "9"])["code"]
                    == .number(40007))
            #expect(try await Self.publish(api, "/", body: "{").status == .badRequest)
            _ = try await harness.drain()
            #expect(harness.apns.requests.count == before)
        }
    }
}

@Suite("ntfy publishing over the direct channel")
struct NtfyChannelTests {
    @Test("A direct-only device subscribed to the topic's channel gets the message over its WebSocket")
    func overTheChannel() async throws {
        let harness = try await EngineHarness()
        try await harness.live { api, port in
            let id = try #require(
                try await api.call(
                    .post, "/v1/installations",
                    body:
                        #"{"platform":"desktop","service":"direct","token":"d-\#(UUID().uuidString)","channels":["alerts"]}"#
                ).string("id"))
            let channel = try await ChannelTestClient.subscribed(
                api, port: port, installation: id)
            let sent = try await NtfyTests.publish(
                api, "/alerts", body: "Door open", headers: [HTTPField.Name("Title")!: "Garage"])
            #expect(sent.status == .ok)
            _ = try await harness.drain()
            let event = await channel.next()?["event"]
            #expect(event?["title"] == .string("Garage"))
            #expect(event?["message"] == .string("Door open"))
            _ = await channel.close()
        }
    }
}

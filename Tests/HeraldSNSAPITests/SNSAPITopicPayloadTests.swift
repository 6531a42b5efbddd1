import Foundation
import HeraldCore
import HeraldProviderMocks
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

/// The SNS notes (`seeds/001`): a topic's subscribers each get their own environment's payload —
/// production Apple endpoints `APNS`, sandbox ones `APNS_SANDBOX`, Android `GCM` — and an endpoint
/// whose key is absent gets the `default` text, on iOS exactly `{"aps":{"alert":"<default>"}}`.
@Suite("SNS-compatible API: each recipient's own payload")
struct SNSAPITopicPayloadTests {
    /// A production and a sandbox iOS endpoint and an Android one, all subscribed to topic "mixed".
    struct Subscribers {
        var topic: String
        var production: String
        var sandbox: String
        var android: String
        var productionToken: String
        var sandboxToken: String
    }

    static func subscribers(_ sns: SNSCaller) async throws -> Subscribers {
        let productionToken = Fixtures.apnsToken()
        let sandboxToken = Fixtures.apnsToken()
        let production = try await SNSAPITests.endpoint(
            sns, application: try await SNSAPITests.application(sns, name: "ios", platform: "APNS"),
            token: productionToken)
        let sandbox = try await SNSAPITests.endpoint(
            sns, application: try await SNSAPITests.application(sns, name: "ios-dev", platform: "APNS_SANDBOX"),
            token: sandboxToken)
        let android = try await SNSAPITests.endpoint(
            sns, application: try await SNSAPITests.application(sns, name: "android", platform: "GCM"),
            token: Fixtures.fcmToken())
        let topic = try #require(try await sns.ok("CreateTopic", [("Name", "mixed")]).value("TopicArn"))
        for endpoint in [production, sandbox, android] {
            _ = try await sns.ok(
                "Subscribe", [("TopicArn", topic), ("Protocol", "application"), ("Endpoint", endpoint)])
        }
        return Subscribers(
            topic: topic, production: production, sandbox: sandbox, android: android,
            productionToken: productionToken, sandboxToken: sandboxToken)
    }

    /// The payload APNs received for `token` in the last drain (exactly one expected).
    static func apnsPayload(_ harness: EngineHarness, token: String, after count: Int) throws -> JSONValue? {
        let requests = harness.apns.requests.dropFirst(count).filter { $0.token == token }
        #expect(requests.count == 1, "one push to \(token.prefix(8))…")
        return requests.first?.json
    }

    @Test("A topic message with APNS and APNS_SANDBOX: production, sandbox and Android endpoints each get their own")
    func bothAppleKeys() async throws {
        let harness = try await EngineHarness(dialects: SNSCaller.dialects)
        try await harness.run { api in
            let sns = SNSCaller(client: api.client, clock: harness.server.clock)
            let subscribers = try await Self.subscribers(sns)
            let production = #"{"aps":{"alert":{"title":"你好，iOS","body":"production"}},"data":{"customId":"123"}}"#
            let sandbox = #"{"aps":{"alert":{"title":"你好，iOS","body":"development"},"badge":1}}"#
            let gcm = #"{"notification":{"title":"你好，Android","body":"这是提醒内容"},"data":{"customId":"123"}}"#
            let reply = try await sns.ok(
                "Publish",
                [
                    ("TopicArn", subscribers.topic), ("MessageStructure", "json"),
                    (
                        "Message",
                        try SNSAPITests.json([
                            "default": "默认消息", "APNS": production, "APNS_SANDBOX": sandbox, "GCM": gcm,
                        ])
                    ),
                    ("MessageAttributes.entry.1.Name", "AWS.SNS.MOBILE.APNS.PRIORITY"),
                    ("MessageAttributes.entry.1.Value.DataType", "String"),
                    ("MessageAttributes.entry.1.Value.StringValue", "5"),
                ])
            let id = try #require(reply.value("MessageId"))
            try await harness.drain()
            #expect(try await api.notification(id).int("counts.sent") == 3)
            // Each Apple payload reaches its device as given, nothing added.
            #expect(
                try Self.apnsPayload(harness, token: subscribers.productionToken, after: 0)
                    == JSONValue.parse(Array(production.utf8)))
            #expect(
                try Self.apnsPayload(harness, token: subscribers.sandboxToken, after: 0)
                    == JSONValue.parse(Array(sandbox.utf8)))
            // The message attributes apply in both environments.
            #expect(harness.apns.requests.allSatisfy { $0.header("apns-priority") == "5" })
            let message = try #require(harness.fcm.requests.first?.json?.objectValue?["message"]?.objectValue)
            #expect(message["notification"] == .object(["title": .string("你好，Android"), "body": .string("这是提醒内容")]))
            #expect(message["data"] == .object(["customId": .string("123")]))
        }
    }

    @Test("A topic message with APNS only: the sandbox endpoint gets the default text as a plain alert")
    func productionKeyOnly() async throws {
        let harness = try await EngineHarness(dialects: SNSCaller.dialects)
        try await harness.run { api in
            let sns = SNSCaller(client: api.client, clock: harness.server.clock)
            let subscribers = try await Self.subscribers(sns)
            let production = #"{"aps":{"alert":{"title":"你好，iOS","body":"这是提醒内容"}},"data":{"customId":"123"}}"#
            _ = try await sns.ok(
                "Publish",
                [
                    ("TopicArn", subscribers.topic), ("MessageStructure", "json"),
                    ("Message", try SNSAPITests.json(["default": "默认消息", "APNS": production])),
                ])
            try await harness.drain()
            #expect(
                try Self.apnsPayload(harness, token: subscribers.productionToken, after: 0)
                    == JSONValue.parse(Array(production.utf8)))
            #expect(
                try Self.apnsPayload(harness, token: subscribers.sandboxToken, after: 0)
                    == .object(["aps": .object(["alert": .string("默认消息")])]))
            // Android has no GCM key either: the default text is its alert.
            let message = try #require(harness.fcm.requests.first?.json?.objectValue?["message"]?.objectValue)
            #expect(message["notification"] == .object(["body": .string("默认消息")]))
            #expect(message["data"] == nil)
        }
    }

    @Test("A default-only message to one endpoint reaches iOS exactly as SNS sends it")
    func defaultOnly() async throws {
        let harness = try await EngineHarness(dialects: SNSCaller.dialects)
        try await harness.run { api in
            let sns = SNSCaller(client: api.client, clock: harness.server.clock)
            let subscribers = try await Self.subscribers(sns)
            _ = try await sns.ok(
                "Publish",
                [
                    ("TargetArn", subscribers.sandbox), ("MessageStructure", "json"),
                    ("Message", try SNSAPITests.json(["default": "默认消息"])),
                ])
            // A platform key of another environment is not this endpoint's: the default text again.
            _ = try await sns.ok(
                "Publish",
                [
                    ("TargetArn", subscribers.production), ("MessageStructure", "json"),
                    ("Message", try SNSAPITests.json(["default": "默认消息", "APNS_SANDBOX": #"{"aps":{"badge":9}}"#])),
                ])
            try await harness.drain()
            let expected: JSONValue = .object(["aps": .object(["alert": .string("默认消息")])])
            #expect(try Self.apnsPayload(harness, token: subscribers.sandboxToken, after: 0) == expected)
            #expect(try Self.apnsPayload(harness, token: subscribers.productionToken, after: 0) == expected)
            #expect(harness.apns.requests.allSatisfy { $0.header("apns-push-type") == "alert" })
        }
    }
}

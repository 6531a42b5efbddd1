import Foundation
import HTTPTypes
import HeraldCore
import HeraldEngine
import HeraldProviderMocks
import HeraldSNS
import HeraldServer
import HeraldServerTestSupport
import HeraldSigV4
import HeraldTestSupport
import Testing

@testable import HeraldAPI
@testable import HeraldSNSAPI

@Suite("SNS-compatible API")
struct SNSAPITests {
    static let apnsCredentials: [(String, String)] = [
        ("Attributes.entry.1.key", "PlatformCredential"), ("Attributes.entry.1.value", "-----BEGIN PRIVATE KEY-----"),
        ("Attributes.entry.2.key", "PlatformPrincipal"), ("Attributes.entry.2.value", "ABC123DEFG"),
    ]

    /// Creates a platform application and returns its ARN.
    static func application(_ sns: SNSCaller, name: String, platform: String) async throws -> String {
        let reply = try await sns.ok(
            "CreatePlatformApplication", [("Name", name), ("Platform", platform)] + apnsCredentials)
        return try #require(reply.value("PlatformApplicationArn"))
    }

    /// Creates an endpoint and returns its ARN.
    /// An `APNS` application "ios" and a `GCM` application "android", with one endpoint each.
    static func iosAndAndroidEndpoints(_ sns: SNSCaller) async throws -> (ios: String, android: String) {
        let ios = try await endpoint(
            sns, application: try await application(sns, name: "ios", platform: "APNS"), token: Fixtures.apnsToken())
        let android = try await endpoint(
            sns, application: try await application(sns, name: "android", platform: "GCM"), token: Fixtures.fcmToken())
        return (ios, android)
    }

    static func endpoint(
        _ sns: SNSCaller, application: String, token: String, data: String? = nil
    ) async throws
        -> String
    {
        var parameters = [("PlatformApplicationArn", application), ("Token", token)]
        if let data { parameters.append(("CustomUserData", data)) }
        return try #require(try await sns.ok("CreatePlatformEndpoint", parameters).value("EndpointArn"))
    }

    @Test(
        "Endpoints go through the registration facade: created, changed and deleted endpoints reach the app's transport"
    )
    func endpointsReachTheTransport() async throws {
        let lifecycle = RecordingLifecycleTransport(service: .apns)
        let harness = try await ServerHarness(
            transports: ["demo": AppTransports([lifecycle])], dialects: SNSCaller.dialects)
        try await harness.run { api in
            let sns = SNSCaller(client: api.client, clock: harness.clock)
            let arn = try await Self.endpoint(
                sns, application: try await Self.application(sns, name: "ios", platform: "APNS"),
                token: Fixtures.apnsToken())
            let id = try #require(arn.split(separator: "/").last.map(String.init))
            _ = try await sns.ok(
                "SetEndpointAttributes",
                [("EndpointArn", arn), ("Attributes.entry.1.key", "CustomUserData"), ("Attributes.entry.1.value", "x")])
            _ = try await sns.ok("DeleteEndpoint", [("EndpointArn", arn)])
            #expect(
                lifecycle.calls == [
                    .registered(installationID: id, tokenChanged: true),
                    .registered(installationID: id, tokenChanged: false),
                    .removed(installationID: id, endpoint: RecordingLifecycleTransport.endpoint(of: id)),
                ])
        }
    }

    @Test("Platform applications keep their attributes but never answer credentials")
    func platformApplications() async throws {
        let harness = try await ServerHarness(dialects: SNSCaller.dialects)
        try await harness.run { api in
            let sns = SNSCaller(client: api.client, clock: harness.clock)
            let created = try await sns.ok(
                "CreatePlatformApplication",
                [("Name", "ios-app"), ("Platform", "APNS")] + Self.apnsCredentials + [
                    ("Attributes.entry.3.key", "SuccessFeedbackSampleRate"), ("Attributes.entry.3.value", "100"),
                ])
            #expect(created.headers[.contentType] == "text/xml")
            #expect(
                created.xml.hasPrefix(
                    #"<CreatePlatformApplicationResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><CreatePlatformApplicationResult><PlatformApplicationArn>"#
                ))
            #expect(created.value("RequestId") != nil)
            let arn = SNSCaller.arnPrefix + "app/APNS/ios-app"
            #expect(created.value("PlatformApplicationArn") == arn)
            let attributes = try await sns.ok("GetPlatformApplicationAttributes", [("PlatformApplicationArn", arn)])
            #expect(attributes.attributes == ["SuccessFeedbackSampleRate": "100", "Enabled": "true"])
            _ = try await Self.application(sns, name: "android-app", platform: "GCM")
            let list = try await sns.ok("ListPlatformApplications")
            #expect(list.values("PlatformApplicationArn") == [SNSCaller.arnPrefix + "app/GCM/android-app", arn])
            let bad = try await sns.call("CreatePlatformApplication", [("Name", "x"), ("Platform", "ADM")])
            #expect(bad.status == .badRequest)
            #expect(bad.errorCode == "InvalidParameter")
            let missing = try await sns.call(
                "GetPlatformApplicationAttributes", [("PlatformApplicationArn", SNSCaller.arnPrefix + "app/GCM/none")])
            #expect(missing.status == .notFound)
            #expect(missing.errorCode == "NotFound")
            _ = try await sns.ok("DeletePlatformApplication", [("PlatformApplicationArn", arn)])
            #expect(try await sns.ok("ListPlatformApplications").values("PlatformApplicationArn").count == 1)
        }
    }

    @Test("Endpoints are installations: idempotent for the same token and attributes, refused for others")
    func endpoints() async throws {
        let harness = try await ServerHarness(dialects: SNSCaller.dialects)
        try await harness.run { api in
            let sns = SNSCaller(client: api.client, clock: harness.clock)
            let app = try await Self.application(sns, name: "ios", platform: "APNS_SANDBOX")
            let token = Fixtures.apnsToken()
            let arn = try await Self.endpoint(sns, application: app, token: token, data: "user-1")
            #expect(arn.hasPrefix(SNSCaller.arnPrefix + "endpoint/APNS_SANDBOX/ios/"))
            #expect(try await Self.endpoint(sns, application: app, token: token, data: "user-1") == arn)
            let conflict = try await sns.call(
                "CreatePlatformEndpoint", [("PlatformApplicationArn", app), ("Token", token), ("CustomUserData", "u2")])
            #expect(conflict.status == .badRequest)
            #expect(conflict.errorCode == "InvalidParameter")
            #expect(
                conflict.value("Message")
                    == "Invalid parameter: Token Reason: Endpoint \(arn) already exists with the same Token, but "
                    + "different attributes.")

            let id = String(arn.split(separator: "/").last!)
            let native = try await api.call(.get, "/v1/installations/\(id)")
            #expect(native.status == .ok)
            #expect(native.string("platform") == "ios")
            #expect(native.string("service") == "apns")
            #expect(native.string("environment") == "sandbox")

            let attributes = try await sns.ok("GetEndpointAttributes", [("EndpointArn", arn)])
            #expect(attributes.attributes == ["Token": token, "Enabled": "true", "CustomUserData": "user-1"])
            let newToken = Fixtures.apnsToken()
            _ = try await sns.ok(
                "SetEndpointAttributes",
                [
                    ("EndpointArn", arn), ("Attributes.entry.1.key", "Token"), ("Attributes.entry.1.value", newToken),
                    ("Attributes.entry.2.key", "Enabled"), ("Attributes.entry.2.value", "false"),
                ])
            let changed = try await sns.ok("GetEndpointAttributes", [("EndpointArn", arn)]).attributes
            #expect(changed["Token"] == newToken)
            #expect(changed["Enabled"] == "false")
            let listed = try await sns.ok("ListEndpointsByPlatformApplication", [("PlatformApplicationArn", app)])
            #expect(listed.values("EndpointArn") == [arn])
            let badToken = try await sns.call(
                "CreatePlatformEndpoint", [("PlatformApplicationArn", app), ("Token", "not-hex")])
            #expect(badToken.errorCode == "InvalidParameter")
            _ = try await sns.ok("DeleteEndpoint", [("EndpointArn", arn)])
            _ = try await sns.ok("DeleteEndpoint", [("EndpointArn", arn)])
            let gone = try await sns.call("GetEndpointAttributes", [("EndpointArn", arn)])
            #expect(gone.status == .notFound)
            #expect(gone.errorCode == "NotFound")
            #expect(gone.value("Message") == "Endpoint does not exist")
        }
    }

    @Test("Publish with MessageStructure=json reaches APNs and FCM with the platform's payload")
    func publishToEndpoints() async throws {
        let harness = try await EngineHarness(dialects: SNSCaller.dialects)
        try await harness.run { api in
            let sns = SNSCaller(client: api.client, clock: harness.server.clock)
            let (ios, android) = try await Self.iosAndAndroidEndpoints(sns)
            let apnsMessage = #"{"aps":{"alert":{"title":"Hi","body":"There"},"badge":2},"order":"42"}"#
            let iosReply = try await sns.ok(
                "Publish",
                [
                    ("TargetArn", ios), ("MessageStructure", "json"),
                    ("Message", try Self.json(["default": "fallback", "APNS": apnsMessage])),
                    ("MessageAttributes.entry.1.Name", "AWS.SNS.MOBILE.APNS.PUSH_TYPE"),
                    ("MessageAttributes.entry.1.Value.DataType", "String"),
                    ("MessageAttributes.entry.1.Value.StringValue", "alert"),
                    ("MessageAttributes.entry.2.Name", "AWS.SNS.MOBILE.APNS.PRIORITY"),
                    ("MessageAttributes.entry.2.Value.DataType", "String"),
                    ("MessageAttributes.entry.2.Value.StringValue", "5"),
                ])
            let messageID = try #require(iosReply.value("MessageId"))
            #expect(try await api.notification(messageID).status == .ok)
            let fcmMessage = #"{"fcmV1Message":{"message":{"notification":{"title":"Hi"},"data":{"order":"42"}}}}"#
            _ = try await sns.ok(
                "Publish",
                [
                    ("TargetArn", android), ("MessageStructure", "json"),
                    ("Message", try Self.json(["default": "fallback", "GCM": fcmMessage])),
                    ("MessageAttributes.entry.1.Name", "AWS.SNS.MOBILE.FCM.TTL"),
                    ("MessageAttributes.entry.1.Value.DataType", "String"),
                    ("MessageAttributes.entry.1.Value.StringValue", "600"),
                ])
            try await harness.drain()
            let apns = try #require(harness.apns.requests.first)
            let aps = apns.json?.objectValue?["aps"]?.objectValue
            #expect(aps?["alert"] == .object(["title": .string("Hi"), "body": .string("There")]))
            #expect(aps?["badge"] == .number(2))
            #expect(apns.json?.objectValue?["order"] == .string("42"))
            #expect(apns.header("apns-push-type") == "alert")
            #expect(apns.header("apns-priority") == "5")
            let message = try #require(harness.fcm.requests.first?.json?.objectValue?["message"]?.objectValue)
            #expect(message["notification"] == .object(["title": .string("Hi")]))
            #expect(message["data"] == .object(["order": .string("42")]))
            #expect(message["android"]?.objectValue?["ttl"] == .string("600s"))

            let plain = try await sns.ok("Publish", [("TargetArn", android), ("Message", "Plain text")])
            #expect(plain.value("MessageId") != nil)
            try await harness.drain()
            let second = harness.fcm.requests.last?.json?.objectValue?["message"]?.objectValue
            #expect(second?["notification"]?.objectValue?["body"] == .string("Plain text"))

            // To an endpoint, `default` or the endpoint's own key; SNS names the key it looked for.
            let noDefault = try await sns.call(
                "Publish", [("TargetArn", ios), ("MessageStructure", "json"), ("Message", #"{"GCM":"{}"}"#)])
            #expect(noDefault.errorCode == "InvalidParameter")
            #expect(
                noDefault.value("Message") == "Invalid parameter: JSON must contain an entry for 'default' or 'APNS'.")
            let malformed = try await sns.call(
                "Publish", [("TargetArn", ios), ("MessageStructure", "json"), ("Message", "{nope")])
            #expect(malformed.status == .badRequest)
            #expect(malformed.errorCode == "InvalidParameter")
            let empty = try await sns.call("Publish", [("TargetArn", ios)])
            #expect(empty.errorCode == "InvalidParameter")
        }
    }

    @Test("A legacy GCM notification reaches FCM v1 under its names; GCM alone is enough for an Android endpoint")
    func legacyGCM() async throws {
        let harness = try await EngineHarness(dialects: SNSCaller.dialects)
        try await harness.run { api in
            let sns = SNSCaller(client: api.client, clock: harness.server.clock)
            let (_, android) = try await Self.iosAndAndroidEndpoints(sns)
            let legacy = #"""
                {"notification":{"body":"Motion","android_channel_id":"cameras","visibility":-1,"subtitle":"iOS only",
                "badge":"3","bodyLocKey":"motion","title_loc_args":"[\"Porch\"]","notification_count":2,
                "unknown_key":"x"},"data":{"camera":"porch"},"time_to_live":60,"priority":"high"}
                """#
            let secret = try await sns.ok(
                "Publish",
                [("TargetArn", android), ("MessageStructure", "json"), ("Message", try Self.json(["GCM": legacy]))])
            let messageID = try #require(secret.value("MessageId"))
            let concealed = #"{"notification":{"title":"Hi","visibility":0}}"#
            _ = try await sns.ok(
                "Publish",
                [("TargetArn", android), ("MessageStructure", "json"), ("Message", try Self.json(["GCM": concealed]))])
            try await harness.drain()
            #expect(harness.fcm.requests.map(\.status) == [200, 200])
            let messages = harness.fcm.requests.compactMap { $0.json?.objectValue?["message"]?.objectValue }
            let first = try #require(messages.first { $0["data"]?.objectValue?["camera"] != nil })
            // No default text: the notification is the GCM key's own.
            #expect(first["notification"] == .object(["body": .string("Motion")]))
            let config = first["android"]?.objectValue
            #expect(
                config?["notification"]
                    == .object([
                        "channel_id": .string("cameras"), "visibility": .string("SECRET"),
                        "bodyLocKey": .string("motion"), "title_loc_args": .array([.string("Porch")]),
                        "notification_count": .number(2),
                    ]))
            #expect(config?["ttl"] == .string("60s"))
            #expect(config?["priority"] == .string("high"))
            let second = try #require(messages.first { $0["notification"]?.objectValue?["title"] != nil })
            #expect(second["android"]?.objectValue?["notification"] == .object(["visibility": .string("PRIVATE")]))
            #expect(try await api.notification(messageID).status == .ok)
        }
    }

    @Test("Topics are channels: subscribe, publish to every subscriber, unsubscribe")
    func topics() async throws {
        let harness = try await EngineHarness(dialects: SNSCaller.dialects)
        try await harness.run { api in
            let sns = SNSCaller(client: api.client, clock: harness.server.clock)
            let (ios, android) = try await Self.iosAndAndroidEndpoints(sns)
            let topic = try #require(try await sns.ok("CreateTopic", [("Name", "news")]).value("TopicArn"))
            #expect(topic == SNSCaller.arnPrefix + "news")
            #expect(try await sns.ok("ListTopics").values("TopicArn") == [topic])
            var subscriptions: [String] = []
            for endpoint in [ios, android] {
                let reply = try await sns.ok(
                    "Subscribe", [("TopicArn", topic), ("Protocol", "application"), ("Endpoint", endpoint)])
                subscriptions.append(try #require(reply.value("SubscriptionArn")))
            }
            #expect(subscriptions.allSatisfy { $0.hasPrefix(topic + ":") })
            let listed = try await sns.ok("ListSubscriptionsByTopic", [("TopicArn", topic)])
            #expect(Set(listed.values("Endpoint")) == [ios, android])
            let id = String(ios.split(separator: "/").last!)
            #expect(try await api.call(.get, "/v1/installations/\(id)")["channels"] == .array([.string("news")]))

            _ = try await sns.ok("Publish", [("TopicArn", topic), ("Message", "Breaking")])
            try await harness.drain()
            #expect(harness.apns.requests.count == 1)
            #expect(harness.fcm.requests.count == 1)
            // A plain message is the default text: on iOS exactly as SNS sends it, a string alert.
            #expect(harness.apns.requests.first?.json == .object(["aps": .object(["alert": .string("Breaking")])]))

            _ = try await sns.ok("Unsubscribe", [("SubscriptionArn", subscriptions[0])])
            #expect(try await api.call(.get, "/v1/installations/\(id)")["channels"] == .array([]))
            #expect(try await sns.ok("ListSubscriptionsByTopic", [("TopicArn", topic)]).values("Endpoint") == [android])
            let badProtocol = try await sns.call(
                "Subscribe", [("TopicArn", topic), ("Protocol", "email"), ("Endpoint", "a@example.com")])
            #expect(badProtocol.errorCode == "InvalidParameter")
            _ = try await sns.ok("DeleteTopic", [("TopicArn", topic)])
            let gone = try await sns.call("Publish", [("TopicArn", topic), ("Message", "x")])
            #expect(gone.status == .notFound)
            #expect(gone.value("Message") == "Topic does not exist")
        }
    }

    @Test("An endpoint APNs calls unregistered reports Enabled=false until re-enabled")
    func disabledByProvider() async throws {
        let harness = try await EngineHarness(dialects: SNSCaller.dialects)
        try await harness.run { api in
            let sns = SNSCaller(client: api.client, clock: harness.server.clock)
            let token = Fixtures.apnsToken()
            let endpoint = try await Self.endpoint(
                sns, application: try await Self.application(sns, name: "ios", platform: "APNS"), token: token)
            harness.apns.script(token: token, .unregistered())
            _ = try await sns.ok("Publish", [("TargetArn", endpoint), ("Message", "Hello")])
            try await harness.drain()
            let attributes = try await sns.ok("GetEndpointAttributes", [("EndpointArn", endpoint)]).attributes
            #expect(attributes["Enabled"] == "false")
            let refused = try await sns.call("Publish", [("TargetArn", endpoint), ("Message", "Hello")])
            #expect(refused.status == .badRequest)
            #expect(refused.errorCode == "EndpointDisabled")
            _ = try await sns.ok(
                "SetEndpointAttributes",
                [
                    ("EndpointArn", endpoint), ("Attributes.entry.1.key", "Enabled"),
                    ("Attributes.entry.1.value", "true"),
                ])
            #expect(
                try await sns.ok("GetEndpointAttributes", [("EndpointArn", endpoint)]).attributes["Enabled"] == "true")
        }
    }

    @Test("Signatures are verified as AWS does, with SNS's error bodies")
    func authentication() async throws {
        let harness = try await ServerHarness(dialects: SNSCaller.dialects)
        try await harness.run { api in
            var sns = SNSCaller(client: api.client, clock: harness.clock)
            #expect(try await sns.call("ListTopics").status == .ok)
            sns.path = "/sns/"
            #expect(try await sns.call("ListTopics").status == .ok)
            sns.path = "/sns"

            var wrongSecret = sns
            wrongSecret.credentials.secretAccessKey += "x"
            let mismatch = try await wrongSecret.call("ListTopics")
            #expect(mismatch.status == .forbidden)
            #expect(mismatch.errorCode == "SignatureDoesNotMatch")
            #expect(
                mismatch.xml.hasPrefix(
                    #"<ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><Error><Type>Sender</Type><Code>SignatureDoesNotMatch</Code>"#
                ))
            #expect(mismatch.value("RequestId") != nil)

            var unknown = sns
            unknown.credentials.accessKeyID = "AKIDUNKNOWN"
            let unknownReply = try await unknown.call("ListTopics")
            #expect(unknownReply.status == .forbidden)
            #expect(unknownReply.errorCode == "InvalidClientTokenId")

            let stale = try await sns.call("ListTopics", date: harness.clock.date.addingTimeInterval(-20 * 60))
            #expect(stale.status == .forbidden)
            #expect(stale.errorCode == "SignatureDoesNotMatch")
            #expect(stale.value("Message")?.hasPrefix("Signature expired") == true)

            var otherRegion = sns
            otherRegion.region = "eu-west-1"
            #expect(try await otherRegion.call("ListTopics").errorCode == "SignatureDoesNotMatch")

            let unsigned = try await api.call(
                .post, "/sns", bearer: nil, body: "Action=ListTopics&Version=2010-03-31",
                contentType: "application/x-www-form-urlencoded")
            #expect(unsigned.status == .forbidden)

            let action = try await sns.call("CreateQueue")
            #expect(action.status == .badRequest)
            #expect(action.errorCode == "InvalidAction")
        }
    }

    @Test("Bad input gets SNS's error codes and changes nothing")
    func badInput() async throws {
        let harness = try await EngineHarness(dialects: SNSCaller.dialects)
        try await harness.run { api in
            let sns = SNSCaller(client: api.client, clock: harness.server.clock)
            let unknown = try await sns.call("Frobnicate")
            #expect(unknown.status == .badRequest)
            #expect(unknown.errorCode == "InvalidAction")
            let unknownApplication = try await sns.call(
                "CreatePlatformEndpoint",
                [("PlatformApplicationArn", SNSCaller.arnPrefix + "app/APNS/nope"), ("Token", Fixtures.apnsToken())])
            #expect(unknownApplication.errorCode == "NotFound")
            let application = try await Self.application(sns, name: "ios", platform: "APNS")
            let noToken = try await sns.call("CreatePlatformEndpoint", [("PlatformApplicationArn", application)])
            #expect(noToken.status == .badRequest)
            #expect(noToken.errorCode == "InvalidParameter")
            let badToken = try await sns.call(
                "CreatePlatformEndpoint", [("PlatformApplicationArn", application), ("Token", "not hex")])
            #expect(badToken.status == .badRequest)
            #expect(badToken.errorCode == "InvalidParameter")
            let endpoint = try await Self.endpoint(sns, application: application, token: Fixtures.apnsToken())
            let badMessages = [
                #"{"default":"#, #"{"GCM":"{}"}"#, #"{"APNS":{"aps":{}}}"#, #"["default"]"#,
                #"{"default":"x","APNS":{"aps":{}}}"#,
                #"{"default":"x","GCM":"{\"notification\":{\"visibility\":2}}"}"#,
            ]
            for message in badMessages {
                let reply = try await sns.call(
                    "Publish", [("TargetArn", endpoint), ("MessageStructure", "json"), ("Message", message)])
                #expect(reply.status == .badRequest, "\(message)")
                #expect(reply.errorCode == "InvalidParameter", "\(message)")
            }
            // Characters XML cannot carry are refused, and never echoed raw: the answer stays XML.
            for (name, value) in [("TopicArn", "\u{0}"), ("Attributes.entry.1.value", "a\u{1}b")] {
                let reply = try await sns.call(
                    name == "TopicArn" ? "DeleteTopic" : "CreatePlatformApplication",
                    [("Name", "ctl"), ("Platform", "APNS"), ("Attributes.entry.1.key", "Note"), (name, value)])
                #expect(reply.status == .badRequest, "\(name)")
                #expect(reply.errorCode == "InvalidParameter", "\(name)")
                #expect(!reply.xml.unicodeScalars.contains { $0.value < 0x20 }, "\(reply.xml)")
            }
            #expect(
                try await sns.ok("ListPlatformApplications").values("PlatformApplicationArn") == [application])
            let huge = try await sns.call(
                "Publish", [("TargetArn", endpoint), ("Message", String(repeating: "x", count: 70_000))])
            #expect(huge.status == .contentTooLarge)
            let missing = try await sns.call("Publish", [("TargetArn", SNSCaller.arnPrefix + "endpoint/APNS/ios/nope")])
            #expect(missing.status == .badRequest || missing.status == .notFound)
            // Nothing was sent or stored by any of them.
            try await harness.drain()
            #expect(harness.apns.requests.isEmpty)
            #expect(try await api.call(.get, "/v1/notifications").items.isEmpty)
            #expect(try await api.call(.get, "/v1/installations").items.count == 1)
        }
    }

    @Test("An app without sns_api keys has no SNS API")
    func offWithoutKeys() async throws {
        let harness = try await ServerHarness()
        try await harness.run { api in
            let reply = try await SNSCaller(client: api.client, clock: harness.clock).call("ListTopics")
            #expect(reply.status == .forbidden)
            #expect(reply.errorCode == "InvalidClientTokenId")
        }
    }

    static func json(_ object: [String: String]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }
}

import Foundation
import HTTPTypes
import HeraldCore
import HeraldEngine
import HeraldProviderMocks
import HeraldSNS
import HeraldServerTestSupport
import HeraldTestSupport
import HeraldWebPush
import Testing

/// One notification in several languages, each device getting its own (docs/content.md).
@Suite("Localized notifications: each device's locale picks its words, in every provider's shape", .serialized)
struct LocalizationTests {
    static let send = #"""
        {"target":{"all":true},"payload":{"title":"Order shipped","body":"On its way",
         "localizations":{"de":{"title":"Bestellung versandt","body":"Unterwegs"},"pt-BR":{"body":"A caminho"},
                          "zh-Hant":{"body":"運送中"},"zh":{"body":"运送中"}}}}
        """#

    /// The locales of the issue's devices, and the body each must get.
    static let devices: [(locale: String?, body: String)] = [
        ("de-AT", "Unterwegs"), ("pt-BR", "A caminho"), ("zh-TW", "運送中"), ("zh-Hant-HK", "運送中"),
        ("zh-CN", "运送中"), ("fr", "On its way"), (nil, "On its way"),
    ]

    static func localeMember(_ locale: String?) -> String { locale.map { #","locale":"\#($0)""# } ?? "" }

    @Test("APNs and FCM: each device its language, the rest the default")
    func providers() async throws {
        let harness = try await EngineHarness()
        try await harness.run { api in
            var expected: [String: String] = [:]
            for (index, device) in Self.devices.enumerated() {
                let token = index.isMultiple(of: 2) ? Fixtures.apnsToken() : Fixtures.fcmToken()
                let platform = index.isMultiple(of: 2) ? "ios" : "android"
                _ = try await api.register(
                    #"{"platform":"\#(platform)","token":"\#(token)"\#(Self.localeMember(device.locale))}"#)
                expected[token] = device.body
            }
            let id = try await api.send(Self.send)
            try await harness.drain()
            var received: [String: String] = [:]
            for request in harness.apns.requests {
                let alert = request.json?.objectValue?["aps"]?.objectValue?["alert"]?.objectValue
                if case .string(let body)? = alert?["body"], let token = request.token { received[token] = body }
                #expect(alert?["title"] != nil)
            }
            for request in harness.fcm.requests {
                let message = request.json?.objectValue?["message"]?.objectValue
                if case .string(let body)? = message?["notification"]?.objectValue?["body"],
                    case .string(let token)? = message?["token"]
                {
                    received[token] = body
                }
            }
            #expect(received == expected)
            // The German device got the German title too; the Brazilian one the default title.
            let german = harness.apns.requests.first {
                $0.json?.objectValue?["aps"]?.objectValue?["alert"]?.objectValue?["body"] == .string("Unterwegs")
            }
            #expect(
                german?.json?.objectValue?["aps"]?.objectValue?["alert"]?.objectValue?["title"]
                    == .string("Bestellung versandt"))
            let record = try await api.notification(id)
            #expect(record.int("counts.sent") == Self.devices.count)
            #expect(record["payload.localizations.pt-BR.body"] == .string("A caminho"))
            // Each sent delivery counted under the words it got.
            #expect(
                record["counts.by_locale"]
                    == .object([
                        "de": .number(1), "pt-BR": .number(1), "zh-Hant": .number(2), "zh": .number(1),
                        "default": .number(2),
                    ]))
        }
    }

    @Test("The direct channel: the event carries the device's language")
    func directChannel() async throws {
        let harness = try await EngineHarness()
        try await harness.live { api, port in
            let id = try #require(
                try await api.call(
                    .post, "/v1/installations",
                    body:
                        #"{"platform":"android","service":"direct","token":"device-\#(UUID().uuidString)","locale":"zh-TW"}"#
                ).string("id"))
            let channel = try await ChannelTestClient.subscribed(api, port: port, installation: id)
            _ = try await api.send(Self.send)
            _ = try await harness.drain()
            let event = await channel.next()?["event"]
            #expect(event?["message"] == .string("運送中"))
            #expect(event?["title"] == .string("Order shipped"))
            _ = await channel.close()
        }
    }

    @Test("A localization too large for a provider is refused at intake, and nothing is stored")
    func tooLarge() async throws {
        let harness = try await EngineHarness()
        try await harness.run { api in
            _ = try await api.register(#"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
            let long = String(repeating: "ü", count: 2400)
            let refused = try await api.call(
                .post, "/v1/notifications",
                body:
                    #"{"target":{"all":true},"payload":{"body":"short","localizations":{"de":{"body":"\#(long)","title":"\#(String(long.prefix(900)))"}}}}"#
            )
            #expect(refused.status == .badRequest)
            #expect(refused.errorCode == "payload_too_large")
            #expect(try await api.call(.get, "/v1/notifications")["data"] == .array([]))
        }
    }

    @Test("Web Push: the decrypted message carries the browser's language")
    func webPush() async throws {
        let harness = try await WebPushDeliveryTests.Harness()
        try await harness.run { api in
            var expected: [String: String] = [:]
            for locale in ["zh-TW", "de-AT", "fr"] {
                let subscription = harness.service.makeSubscription(
                    applicationServerKey: harness.key.publicKeyBase64URL)
                _ = try await api.register(
                    #"{"platform":"web","subscription":\#(subscription.json),"locale":"\#(locale)"}"#)
                expected[subscription.id] =
                    Self.devices.first { $0.locale?.hasPrefix(locale) == true }?.body
                    ?? "On its way"
            }
            _ = try await api.send(Self.send)
            try await harness.server.dispatcher.runDueJobs()
            var received: [String: String] = [:]
            for request in harness.service.requests {
                let body = try JSONValue.parse(try #require(request.plaintext))
                if let subscription = request.subscriptionID, case .string(let text)? = body.objectValue?["body"] {
                    received[subscription] = text
                }
            }
            #expect(received == expected)
        }
    }

    @Test("SNS: each platform endpoint's message in its installation's language")
    func sns() async throws {
        let moto = try await MotoServer.start()
        defer { moto.stop() }
        let (server, transports) = try await SNSDeliveryTests.platformServer(moto)
        try await server.run { api in
            _ = try await api.register(
                #"{"platform":"ios","service":"sns","token":"\#(Fixtures.apnsToken())","locale":"pt-BR"}"#)
            _ = try await api.register(
                #"{"platform":"android","service":"sns","token":"fcm-token:\#(UUID().uuidString)","locale":"de-AT"}"#)
            let id = try await api.send(Self.send)
            try await server.dispatcher.runDueJobs()
            #expect(try await api.notification(id)["counts.sent"] == .number(2))
        }
        guard
            case .array(let endpoints)? = try await moto.modelData().objectValue?["sns"]?.objectValue?[
                "PlatformEndpoint"]
        else { throw TestFailure("moto has no endpoints") }
        var defaults: [String] = []
        for endpoint in endpoints {
            guard case .string(let arn)? = endpoint.objectValue?["arn"] else { continue }
            for text in try await moto.messages(endpointARN: arn).values {
                let message = try #require(try JSONValue.parse(Array(text.utf8)).objectValue)
                if case .string(let body)? = message["default"] { defaults.append(body) }
            }
        }
        #expect(defaults.sorted() == ["A caminho", "Unterwegs"])
        await transports.shutdown()
    }
}

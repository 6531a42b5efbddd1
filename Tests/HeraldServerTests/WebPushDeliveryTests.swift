import Foundation
import HTTPTypes
import HeraldCore
import HeraldEngine
import HeraldProviderMocks
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import HeraldWebPush
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HeraldAPI

/// Browsers through Web Push: `POST /v1/notifications` → the engine → RFC 8291 encryption and
/// RFC 8292 VAPID → the mock push service, which verifies the JWT and decrypts with the
/// subscription's private key.
@Suite("Web Push delivery", .serialized)
struct WebPushDeliveryTests {
    static let subject = "mailto:ops@example.com"

    /// A server whose app `demo` delivers Web Push to the mock.
    struct Harness {
        let server: ServerHarness
        let service: MockPushService
        let key: VAPIDKey
        let transports: AppTransports

        init() async throws {
            let ca = try TestCertificateAuthority()
            service = try await MockPushService.start(ca: ca)
            key = VAPIDKey.generate()
            let client = try WebPushClient(
                configuration: try .init(
                    vapidKey: key, subject: WebPushDeliveryTests.subject, trustRoots: [ca.rootCertificate]))
            transports = AppTransports([WebPushTransport(client: client)])
            server = try await ServerHarness(transports: ["demo": transports])
        }

        /// Registers a browser subscription made by the mock and returns it with the installation id.
        func subscribe(_ api: API, user: String = "ann") async throws -> (MockPushService.Subscription, String) {
            let subscription = service.makeSubscription(applicationServerKey: key.publicKeyBase64URL)
            let id = try await api.register(
                #"{"platform":"web","user_id":"\#(user)","subscription":\#(subscription.json)}"#)
            return (subscription, id)
        }

        func run(_ test: @Sendable (API) async throws -> Void) async throws {
            try await server.run(test)
            await transports.shutdown()
            try await service.shutdown()
        }
    }

    @Test("A notification reaches the browser: payload decrypted, VAPID verified, TTL, Urgency and Topic sent")
    func delivered() async throws {
        let harness = try await Harness()
        try await harness.run { api in
            let (subscription, installation) = try await harness.subscribe(api)
            let id = try await api.send(
                #"""
                {"target":{"user_ids":["ann"]},
                 "payload":{"title":"Front door","body":"Someone is there","deep_link":"https://app.example/e/1",
                            "collapse_id":"door-1","priority":"high","ttl":600,"data":{"event":"e1"},
                            "overrides":{"webpush":{"icon":"/icon-192.png"}}}}
                """#)
            try await harness.server.dispatcher.runDueJobs()
            let request = try #require(harness.service.requests.first)
            #expect(harness.service.requests.count == 1)
            #expect(request.subscriptionID == subscription.id)
            #expect(request.status == 201)
            let body = try JSONValue.parse(try #require(request.plaintext))
            #expect(body.objectValue?["title"] == .string("Front door"))
            #expect(body.objectValue?["body"] == .string("Someone is there"))
            #expect(body.objectValue?["url"] == .string("https://app.example/e/1"))
            #expect(body.objectValue?["icon"] == .string("/icon-192.png"))
            #expect(body.objectValue?["tag"] == .string("door-1"))
            var data = body.objectValue?["data"]?.objectValue ?? [:]
            // The notification id, for the service worker to report an open with.
            #expect(data.removeValue(forKey: "herald_id") != nil)
            #expect(data == ["event": .string("e1"), "url": .string("https://app.example/e/1")])
            #expect(request.ttl == 600)
            #expect(request.urgency == "high")
            #expect(request.topic == "door-1")
            let vapid = try #require(request.vapid)
            #expect(vapid.subject == Self.subject)
            #expect(vapid.publicKey == harness.key.publicKeyBase64URL)
            #expect(vapid.audience == harness.service.baseURL)
            let notification = try await api.notification(id)
            #expect(notification["counts.sent"] == .number(1))
            #expect(try await api.call(.get, "/v1/installations/\(installation)")["valid"] == .bool(true))
        }
    }

    @Test("A push service's 410 and 404 invalidate the subscription (RFC 8030 §7.3)")
    func gone() async throws {
        let harness = try await Harness()
        try await harness.run { api in
            let (first, firstID) = try await harness.subscribe(api, user: "ann")
            let (second, secondID) = try await harness.subscribe(api, user: "bob")
            harness.service.script(subscription: first.id, .gone)
            harness.service.script(subscription: second.id, .notFound)
            let id = try await api.send(#"{"target":{"user_ids":["ann","bob"]},"payload":{"title":"Hi"}}"#)
            try await harness.server.dispatcher.runDueJobs()
            #expect(try await api.notification(id)["counts.invalid"] == .number(2))
            for installation in [firstID, secondID] {
                #expect(try await api.call(.get, "/v1/installations/\(installation)")["valid"] == .bool(false))
            }
        }
    }

    @Test("An unreachable push service pauses its own origin's browsers only, not the app's other browsers")
    func pausePerOrigin() async throws {
        let ca = try TestCertificateAuthority()
        let failing = try await MockPushService.start(ca: ca)
        let healthy = try await MockPushService.start(ca: ca)
        let key = VAPIDKey.generate()
        let client = try WebPushClient(
            configuration: try .init(vapidKey: key, subject: Self.subject, trustRoots: [ca.rootCertificate]))
        let transports = AppTransports([WebPushTransport(client: client)])
        let server = try await ServerHarness(transports: ["demo": transports])
        try await server.run { api in
            for (user, service) in [("ann", failing), ("bob", healthy)] {
                let subscription = service.makeSubscription(applicationServerKey: key.publicKeyBase64URL)
                _ = try await api.register(
                    #"{"platform":"web","user_id":"\#(user)","subscription":\#(subscription.json)}"#)
            }
            await failing.stopListening()
            let body = #"{"target":{"user_ids":["ann","bob"]},"payload":{"title":"Hi"}}"#
            let first = try await api.send(body)
            try await server.dispatcher.runDueJobs()
            #expect(healthy.requests.count == 1)
            // Only the push service that answered nothing is paused, by its origin.
            let pauses = try await server.store.providerPauses(now: server.clock.date)
            #expect(pauses.map(\.scope) == [failing.baseURL])
            #expect(pauses.map(\.service) == [.webpush])
            #expect(try await api.notification(first)["counts.sent"] == .number(1))

            // The next notification reaches the healthy push service's browser at once; the other waits.
            let second = try await api.send(body)
            try await server.dispatcher.runDueJobs()
            #expect(healthy.requests.count == 2)
            #expect(try await api.notification(second)["counts.sent"] == .number(1))
            #expect(failing.requests.isEmpty)
        }
        await transports.shutdown()
        try await healthy.shutdown()
        try await failing.shutdown()
    }

    @Test("A payload over 3993 bytes of plaintext is refused at the request, never truncated")
    func tooLarge() async throws {
        let harness = try await Harness()
        try await harness.run { api in
            _ = try await harness.subscribe(api)
            let big = String(repeating: "x", count: 3990)
            let response = try await api.call(
                .post, "/v1/notifications",
                body: #"{"target":{"user_ids":["ann"]},"payload":{"title":"Hi","data":{"blob":"\#(big)"}}}"#)
            #expect(response.status == .badRequest)
            #expect(response.errorCode == "payload_too_large")
            #expect(response.string("error.message")?.contains("Web Push") == true)
            #expect(harness.service.requests.isEmpty)
        }
    }

    @Test("GET /v1/webpush/vapid-public-key serves app.<id>.webpush's public key without authentication")
    func publicKey() async throws {
        let harness = try await ServerHarness()
        var configuration = harness.configuration
        let key = VAPIDKey.generate()
        var providers = ProviderConfiguration()
        providers.webPush = ProviderConfiguration.WebPush(key: key, subject: Self.subject)
        configuration.providers["demo"] = providers
        let router = try HeraldApplication.router(
            configuration: configuration, store: harness.store, apps: harness.apps, dispatcher: harness.dispatcher
        ).router
        try await Application(router: router).test(.router) { client in
            let api = API(client: client)
            let response = try await api.call(.get, "/v1/webpush/vapid-public-key", bearer: nil)
            #expect(response.status == .ok)
            #expect(response.string("public_key") == key.publicKeyBase64URL)
            #expect(response.string("app_id") == "demo")
            let other = try await api.call(.get, "/v1/webpush/vapid-public-key?app=shop", bearer: nil)
            #expect(other.status == .notFound)
            #expect(other.errorCode == "not_configured")
        }
    }
}

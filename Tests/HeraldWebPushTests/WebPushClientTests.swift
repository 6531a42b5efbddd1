import Foundation
import HeraldCore
import HeraldProviderMocks
import HeraldTestSupport
import NIOCore
import Testing

@testable import HeraldWebPush

/// A mock push service and a client pointed at it through its CA, over TLS on loopback.
struct WebPushHarness {
    static let subject = "mailto:ops@example.com"
    let ca: TestCertificateAuthority
    let key: VAPIDKey
    let service: MockPushService
    let client: WebPushClient

    init(
        httpVersion: MockPushService.HTTPVersion = .http2, now: @escaping @Sendable () -> Date = Date.init
    ) async throws {
        ca = try TestCertificateAuthority()
        key = VAPIDKey.generate()
        service = try await MockPushService.start(ca: ca, httpVersion: httpVersion)
        client = try WebPushClient(
            configuration: .init(
                vapidKey: key, subject: Self.subject, trustRoots: [ca.rootCertificate], requestTimeout: .seconds(60)),
            now: now)
    }

    func subscription(restricted: Bool = false) -> (WebPushSubscription, MockPushService.Subscription) {
        let made = service.makeSubscription(applicationServerKey: restricted ? key.publicKeyBase64URL : nil)
        return (WebPushSubscription(endpoint: made.endpoint, p256dh: made.p256dh, auth: made.auth), made)
    }

    func notification(_ text: String = #"{"title":"Person detected"}"#) -> (WebPushNotification, String) {
        let (subscription, made) = subscription()
        return (WebPushNotification(subscription: subscription, payload: Array(text.utf8)), made.id)
    }

    func stop() async {
        await client.shutdown()
        try? await service.shutdown()
    }
}

@Suite("Web Push client against the mock push service", .serialized)
struct WebPushClientTests {
    @Test("A push is delivered: payload decrypted equal, VAPID verified, TTL, Urgency and Topic received")
    func delivered() async throws {
        let harness = try await WebPushHarness()
        let (subscription, made) = harness.subscription(restricted: true)
        let payload = #"{"title":"Person detected","body":"At the front door"}"#
        let response = try await harness.client.send(
            WebPushNotification(
                subscription: subscription, payload: Array(payload.utf8), ttl: 3600, urgency: .high,
                topic: WebPushTopic.derive(fromCollapseID: "front-door/person/this is long enough to be hashed")))
        await harness.stop()
        let request = try #require(harness.service.requests.first)
        #expect(response.status == 201)
        #expect(response.httpVersion == .http2)
        #expect(response.outcome == .delivered(providerID: request.location))
        #expect(request.location?.hasPrefix(harness.service.baseURL + "/message/") == true)
        #expect(request.subscriptionID == made.id)
        #expect(request.text == payload)
        #expect(request.ttl == 3600)
        #expect(request.urgency == "high")
        #expect(request.topic?.count == 32)
        #expect(request.header("content-encoding") == "aes128gcm")
        #expect(request.header("content-type") == "application/octet-stream")
        #expect(request.httpVersion == "h2")
        let vapid = try #require(request.vapid)
        #expect(vapid.audience == harness.service.baseURL)
        #expect(vapid.subject == WebPushHarness.subject)
        #expect(vapid.publicKey == harness.key.publicKeyBase64URL)
        #expect(vapid.expiresAt.timeIntervalSinceNow > 11 * 3600 && vapid.expiresAt.timeIntervalSinceNow <= 12 * 3600)
    }

    @Test("Answers map to outcomes through the wire: 404/410 invalid, 413 rejected, 429/5xx retry after Retry-After")
    func outcomesOverTheWire() async throws {
        // Herald's clock stands still at a whole second (near the real time, which the mock checks VAPID
        // against), so an HTTP-date Retry-After is an exact delay from it.
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let harness = try await WebPushHarness(now: { now })
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let httpDate = formatter.string(from: now.addingTimeInterval(40))
        let cases: [(MockPushService.ScriptedResponse, DeliveryOutcome)] = [
            (.gone, .invalidToken(reason: "HTTP 410: push subscription has unsubscribed or expired", since: nil)),
            (.notFound, .invalidToken(reason: "HTTP 404: subscription not found", since: nil)),
            (.payloadTooLarge, .rejected(reason: "HTTP 413: payload too large")),
            (.tooManyRequests(retryAfter: "7"), .retry(reason: "HTTP 429: too many requests", after: .seconds(7))),
            (
                .tooManyRequests(retryAfter: httpDate),
                .retry(reason: "HTTP 429: too many requests", after: .seconds(40))
            ),
            (.internalServerError, .retry(reason: "HTTP 500: internal error", after: nil)),
            (
                .serviceUnavailable(retryAfter: "30"),
                .retry(reason: "HTTP 503: service unavailable", after: .seconds(30))
            ),
            (.status(400, body: "bad"), .rejected(reason: "HTTP 400: bad")),
            (.created(after: .milliseconds(50)), .delivered(providerID: nil)),
        ]
        for (script, expected) in cases {
            let (notification, id) = harness.notification()
            harness.service.script(subscription: id, script)
            let response = try await harness.client.send(notification)
            if case .delivered = expected {
                guard case .delivered(let location?) = response.outcome else {
                    Issue.record("not delivered: \(response)")
                    continue
                }
                #expect(location.hasPrefix(harness.service.baseURL))
            } else {
                #expect(response.outcome == expected, "\(script)")
            }
        }
        await harness.stop()
    }

    @Test("A subscription made with another VAPID key answers 403: a configuration failure")
    func wrongKey() async throws {
        let harness = try await WebPushHarness()
        let made = harness.service.makeSubscription(applicationServerKey: VAPIDKey.generate().publicKeyBase64URL)
        let response = try await harness.client.send(
            WebPushNotification(
                subscription: WebPushSubscription(endpoint: made.endpoint, p256dh: made.p256dh, auth: made.auth),
                payload: [1]))
        await harness.stop()
        guard case .configurationFailure(let reason) = response.outcome else {
            Issue.record("\(response)")
            return
        }
        #expect(reason.hasPrefix("HTTP 403"))
        #expect(harness.service.requests.first?.vapid != nil)
    }

    @Test("Payload limits on the wire: 3993 bytes make a 4096-byte body; 3994 are refused and nothing is sent")
    func payloadLimit() async throws {
        let harness = try await WebPushHarness()
        var (notification, _) = harness.notification()
        notification.payload = [UInt8](repeating: UInt8(ascii: "a"), count: 3993)
        let response = try await harness.client.send(notification)
        guard case .delivered = response.outcome else {
            Issue.record("\(response)")
            return
        }
        #expect(harness.service.requests.first?.body.count == 4096)
        #expect(harness.service.requests.first?.plaintext == notification.payload)
        notification.payload.append(UInt8(ascii: "a"))
        await #expect(throws: WebPushError.self) { try await harness.client.send(notification) }
        #expect(harness.service.requests.count == 1)
        await harness.stop()
    }

    @Test("A push without payload is sent without a body")
    func emptyPayload() async throws {
        let harness = try await WebPushHarness()
        var (notification, _) = harness.notification()
        notification.payload = []
        let response = try await harness.client.send(notification)
        await harness.stop()
        #expect(response.status == 201)
        let request = try #require(harness.service.requests.first)
        #expect(request.body.isEmpty)
        #expect(request.plaintext == nil)
        #expect(request.header("content-encoding") == nil)
    }

    @Test("A batch: results in order, invalid notifications refused without sending, one token per origin")
    func batch() async throws {
        let harness = try await WebPushHarness()
        var notifications: [WebPushNotification] = []
        var gone = ""
        for index in 0..<30 {
            let (notification, id) = harness.notification("push \(index)")
            if index == 10 { gone = id }
            notifications.append(notification)
        }
        harness.service.script(subscription: gone, .gone)
        notifications[20].topic = "not a topic"
        let results = await harness.client.send(batch: notifications)
        await harness.stop()
        #expect(results.count == 30)
        for (index, result) in results.enumerated() {
            switch (index, result) {
            case (10, .success(let response)): #expect(response.status == 410)
            case (20, .failure(let error)): #expect(error.code == .invalidTopic)
            case (_, .success(let response)): #expect(response.status == 201, "\(index)")
            default: Issue.record("unexpected result \(index): \(result)")
            }
        }
        #expect(harness.service.requests.count == 29)
        #expect(Set(harness.service.requests.compactMap(\.text)).count == 29)
        #expect(await harness.client.tokens.mintedCount == 1)
    }

    @Test(
        "An HTTP/1.1-only push service is detected from the HTTP/2 pool's handshake (ALPN chose http/1.1) and served through AsyncHTTPClient"
    )
    func http1Fallback() async throws {
        let harness = try await WebPushHarness(httpVersion: .http1)
        let (first, _) = harness.notification("one")
        #expect(harness.client.httpVersion(forEndpoint: first.subscription.endpoint) == nil)
        let answer = try await harness.client.send(first)
        #expect(answer.httpVersion == .http1)
        #expect(answer.status == 201)
        #expect(harness.client.httpVersion(forEndpoint: first.subscription.endpoint) == .http1)
        let (second, id) = harness.notification("two")
        harness.service.script(subscription: id, .tooManyRequests(retryAfter: "9"))
        let busy = try await harness.client.send(second)
        await harness.stop()
        #expect(busy.outcome == .retry(reason: "HTTP 429: too many requests", after: .seconds(9)))
        #expect(harness.service.requests.map(\.httpVersion) == ["http/1.1", "http/1.1"])
        #expect(harness.service.requests.first?.text == "one")
        #expect(harness.service.requests.first?.vapid?.audience == harness.service.baseURL)
        // The HTTP/2 pool's one handshake (which chose http/1.1), then one kept-alive HTTP/1.1
        // connection: the origin is not tried over HTTP/2 again.
        #expect(harness.service.connectionCount == 2)
    }

    @Test("An HTTP/2 push service is learnt from the pool's own handshake: one connection, no probe")
    func http2LearntFromTheHandshake() async throws {
        let harness = try await WebPushHarness()
        for index in 0..<3 {
            let (notification, _) = harness.notification("push \(index)")
            #expect(try await harness.client.send(notification).httpVersion == .http2)
        }
        #expect(harness.client.httpVersion(forEndpoint: harness.notification().0.subscription.endpoint) == .http2)
        await harness.stop()
        #expect(harness.service.connectionCount == 1)
    }

    @Test("One batch to an HTTP/2 and an HTTP/1.1 service at once")
    func mixedOrigins() async throws {
        let h2 = try await WebPushHarness()
        let service = try await MockPushService.start(ca: h2.ca, httpVersion: .http1)
        let made = service.makeSubscription()
        let other = WebPushNotification(
            subscription: WebPushSubscription(endpoint: made.endpoint, p256dh: made.p256dh, auth: made.auth),
            payload: Array("to h1".utf8))
        let results = await h2.client.send(batch: [h2.notification("to h2").0, other, h2.notification("to h2").0])
        await h2.stop()
        try? await service.shutdown()
        let versions = try results.map { try $0.get().httpVersion }
        #expect(versions == [.http2, .http1, .http2])
        #expect(service.requests.first?.text == "to h1")
        #expect(h2.service.requests.count == 2)
        #expect(await h2.client.tokens.mintedCount == 2)
    }

    @Test("An unreachable origin is a retry, and is probed again next time")
    func unreachable() async throws {
        let harness = try await WebPushHarness()
        let (notification, _) = harness.notification()
        try await harness.service.shutdown()
        let response = try await harness.client.send(notification)
        await harness.client.shutdown()
        guard case .retry = response.outcome else {
            Issue.record("\(response)")
            return
        }
        #expect(response.status == 0)
        #expect(harness.client.httpVersion(forEndpoint: notification.subscription.endpoint) == nil)
    }
}

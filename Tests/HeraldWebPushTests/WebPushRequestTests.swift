import Foundation
import HeraldCore
import HeraldHTTP2
import HeraldProviderMocks
import HeraldTestSupport
import Testing

@testable import HeraldWebPush

@Suite("Web Push: subscriptions, topics and request headers (RFC 8030)")
struct WebPushRequestTests {
    private static let userAgent = TestUserAgent()

    private static func subscription(_ endpoint: String = "https://push.example.net/p/abc?x=1") -> WebPushSubscription {
        WebPushSubscription(endpoint: endpoint, p256dh: userAgent.p256dh, auth: userAgent.auth)
    }

    @Test("Topic: valid ones kept verbatim, others become 32 characters of base64url from SHA-256, deterministically")
    func topics() {
        #expect(WebPushTopic.isValid("camera-3_person"))
        #expect(WebPushTopic.isValid(String(repeating: "a", count: 32)))
        #expect(!WebPushTopic.isValid(String(repeating: "a", count: 33)))
        #expect(!WebPushTopic.isValid(""))
        #expect(!WebPushTopic.isValid("has space"))
        #expect(!WebPushTopic.isValid("a+b/c="))
        #expect(!WebPushTopic.isValid("ünïcode"))

        #expect(WebPushTopic.derive(fromCollapseID: "door-bell") == "door-bell")
        let long = "event:front-door:person:2026-11-24T10:00:00Z"
        let derived = WebPushTopic.derive(fromCollapseID: long)
        #expect(derived.count == 32)
        #expect(WebPushTopic.isValid(derived))
        #expect(WebPushTopic.derive(fromCollapseID: long) == derived)
        #expect(WebPushTopic.derive(fromCollapseID: long + "x") != derived)
        // base64url of the first 24 bytes of SHA-256("a b"), checked by hand with another implementation:
        // sha256("a b") = c8687a08aa5d6ed2044328fa6a697ab8e96dc34291e8c2034ae8c38e6fcc6d65
        #expect(
            WebPushTopic.derive(fromCollapseID: "a b")
                == Base64URL.encode(
                    [
                        0xc8, 0x68, 0x7a, 0x08, 0xaa, 0x5d, 0x6e, 0xd2, 0x04, 0x43, 0x28, 0xfa, 0x6a, 0x69, 0x7a, 0xb8,
                        0xe9, 0x6d, 0xc3, 0x42, 0x91, 0xe8, 0xc2, 0x03,
                    ] as [UInt8]))
    }

    @Test("A subscription's origin is its endpoint's scheme, host and non-default port")
    func subscriptionOrigin() throws {
        let subscription = Self.subscription("https://fcm.googleapis.com/fcm/send/abc")
        #expect(try subscription.origin() == "https://fcm.googleapis.com")
        #expect(try Self.subscription("https://web.push.apple.com:443/QGx").origin() == "https://web.push.apple.com")
        #expect(throws: WebPushError.self) { try Self.subscription("http://insecure.example/x").origin() }
    }

    @Test("Endpoints: https only; origin keeps a non-default port; path and query go to :path")
    func endpoints() throws {
        let endpoint = try WebPushEndpoint("https://Push.Example.net:8443/wpush/v2/gAAA?x=1")
        #expect(endpoint.audience == "https://push.example.net:8443")
        #expect(endpoint.origin.host == "push.example.net" && endpoint.origin.port == 8443)
        #expect(endpoint.path == "/wpush/v2/gAAA?x=1")
        #expect(
            try WebPushEndpoint("https://updates.push.services.mozilla.com/wpush/v2/x").audience
                == "https://updates.push.services.mozilla.com")
        #expect(try WebPushEndpoint("https://[::1]:9000/p").audience == "https://[::1]:9000")
        for bad in ["http://push.example.net/p", "push.example.net/p", "https:///p", "https://u:p@host/p", "ftp://x/y"]
        {
            #expect(throws: WebPushError.self, "\(bad)") { try WebPushEndpoint(bad) }
        }
    }

    @Test("Validation names the field at fault before anything is encrypted")
    func validation() {
        func code(_ notification: WebPushNotification) -> (WebPushError.Code, String?)? {
            do {
                try notification.validate()
                return nil
            } catch {
                return (error.code, error.field)
            }
        }
        let good = WebPushNotification(subscription: Self.subscription(), payload: [1])
        #expect(code(good) == nil)
        var bad = good
        bad.subscription.endpoint = "http://push.example.net/x"
        #expect(code(bad)! == (.invalidEndpoint, "endpoint"))
        bad = good
        bad.subscription.p256dh = "AAAA"
        #expect(code(bad)! == (.invalidP256DH, "p256dh"))
        bad = good
        bad.subscription.auth = Base64URL.encode([UInt8](repeating: 1, count: 15))
        #expect(code(bad)! == (.invalidAuthSecret, "auth"))
        bad = good
        bad.payload = [UInt8](repeating: 0, count: 3994)
        #expect(code(bad)! == (.payloadTooLarge, "payload"))
        bad = good
        bad.topic = "not a topic"
        #expect(code(bad)! == (.invalidTopic, "topic"))
    }

    @Test("Headers: TTL always, Urgency, Topic, aes128gcm and octet-stream with a body; none of those without")
    func headers() throws {
        let notification = WebPushNotification(
            subscription: Self.subscription(), payload: Array("hi".utf8), ttl: 90, urgency: .high, topic: "t1")
        let request = try WebPushRequest(notification)
        let headers = Dictionary(uniqueKeysWithValues: request.headers(authorization: "vapid t=x, k=y"))
        #expect(headers["ttl"] == "90")
        #expect(headers["urgency"] == "high")
        #expect(headers["topic"] == "t1")
        #expect(headers["content-encoding"] == "aes128gcm")
        #expect(headers["content-type"] == "application/octet-stream")
        #expect(headers["authorization"] == "vapid t=x, k=y")
        #expect(request.origin == "https://push.example.net")
        #expect(try Self.userAgent.decrypt(request.body) == Array("hi".utf8))

        let empty = try WebPushRequest(WebPushNotification(subscription: Self.subscription(), payload: []))
        let emptyHeaders = Dictionary(uniqueKeysWithValues: empty.headers)
        #expect(empty.body.isEmpty)
        #expect(emptyHeaders["content-encoding"] == nil)
        #expect(emptyHeaders["ttl"] == String(WebPushNotification.maxTTL))
        #expect(emptyHeaders["urgency"] == "normal")
        #expect(emptyHeaders["topic"] == nil)
    }

    @Test("TTL is clamped to 0...4 weeks; urgencies are RFC 8030's words")
    func ttlAndUrgency() {
        let subscription = Self.subscription()
        #expect(WebPushNotification(subscription: subscription, payload: [], ttl: -5).ttl == 0)
        #expect(WebPushNotification(subscription: subscription, payload: [], ttl: 10_000_000).ttl == 2_419_200)
        var notification = WebPushNotification(subscription: subscription, payload: [], ttl: 60)
        notification.ttl = 99_999_999
        #expect(notification.ttl == WebPushNotification.maxTTL)
        #expect(WebPushUrgency.allCases.map(\.rawValue) == ["very-low", "low", "normal", "high"])
    }
}

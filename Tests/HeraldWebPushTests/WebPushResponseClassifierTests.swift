import Foundation
import HeraldCore
import Testing

@testable import HeraldWebPush

@Suite("Web Push: push service answers to outcomes")
struct WebPushResponseClassifierTests {
    @Test("Every status class maps to one outcome")
    func table() {
        func outcome(_ status: Int, _ reason: String? = nil, after: Duration? = nil) -> DeliveryOutcome {
            WebPushResponseClassifier.outcome(
                status: status, location: "https://p/m/1", reason: reason, retryAfter: after)
        }
        #expect(outcome(201) == .delivered(providerID: "https://p/m/1"))
        #expect(outcome(202) == .delivered(providerID: "https://p/m/1"))
        #expect(outcome(200) == .delivered(providerID: "https://p/m/1"))
        #expect(outcome(404, "gone") == .invalidToken(reason: "HTTP 404: gone", since: nil))
        #expect(outcome(410) == .invalidToken(reason: "HTTP 410", since: nil))
        #expect(outcome(413, "too big") == .rejected(reason: "HTTP 413: too big"))
        #expect(outcome(429, after: .seconds(30)) == .retry(reason: "HTTP 429", after: .seconds(30)))
        #expect(outcome(500) == .retry(reason: "HTTP 500", after: nil))
        #expect(outcome(502) == .retry(reason: "HTTP 502", after: nil))
        #expect(outcome(503, "down", after: .seconds(5)) == .retry(reason: "HTTP 503: down", after: .seconds(5)))
        #expect(outcome(401, "no vapid") == .configurationFailure(reason: "HTTP 401: no vapid"))
        #expect(outcome(403, "key mismatch") == .configurationFailure(reason: "HTTP 403: key mismatch"))
        #expect(outcome(400, "bad ttl") == .rejected(reason: "HTTP 400: bad ttl"))
        #expect(outcome(415) == .rejected(reason: "HTTP 415"))
    }

    @Test("Retry-After: delay-seconds, IMF-fixdate from now, past dates as zero, junk as nil")
    func retryAfter() {
        let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(WebPushResponseClassifier.retryAfter("120", now: now) == .seconds(120))
        #expect(WebPushResponseClassifier.retryAfter(" 7 ", now: now) == .seconds(7))
        #expect(WebPushResponseClassifier.retryAfter("Sun, 06 Nov 1994 08:50:37 GMT", now: now) == .seconds(60))
        #expect(WebPushResponseClassifier.retryAfter("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == .seconds(0))
        #expect(WebPushResponseClassifier.retryAfter("Sat, 05 Nov 1994 08:49:37 GMT", now: now) == .seconds(0))
        #expect(WebPushResponseClassifier.retryAfter("Mon, 07 Nov 1994 08:49:37 GMT", now: now) == .seconds(86_400))
        #expect(WebPushResponseClassifier.retryAfter(nil, now: now) == nil)
        #expect(WebPushResponseClassifier.retryAfter("", now: now) == nil)
        #expect(WebPushResponseClassifier.retryAfter("-5", now: now) == nil)
        #expect(WebPushResponseClassifier.retryAfter("soon", now: now) == nil)
        #expect(WebPushResponseClassifier.retryAfter("Sun, 06 Foo 1994 08:49:37 GMT", now: now) == nil)
    }

    @Test("Reasons: body text with whitespace collapsed, shortened to 200 characters")
    func reasons() {
        #expect(WebPushResponseClassifier.reason(fromBody: [UInt8]()) == nil)
        #expect(WebPushResponseClassifier.reason(fromBody: Array("  \n ".utf8)) == nil)
        #expect(
            WebPushResponseClassifier.reason(fromBody: Array("{\"errno\": 106,\n  \"message\": \"gone\"}".utf8))
                == "{\"errno\": 106, \"message\": \"gone\"}")
        let long = WebPushResponseClassifier.reason(fromBody: Array(String(repeating: "x", count: 5000).utf8))
        #expect(long?.count == WebPushResponseClassifier.maxReasonLength)
        #expect(long?.hasSuffix("…") == true)
    }

    @Test("A decoded answer keeps Location only on success and the reason only on failure")
    func decode() {
        let now = Date()
        let created = WebPushClient.decode(
            status: 201, location: "https://p/m/1", retryAfter: nil, body: [UInt8](), version: .http2, now: now)
        #expect(
            created
                == WebPushResponse(
                    status: 201, location: "https://p/m/1", httpVersion: .http2,
                    outcome: .delivered(providerID: "https://p/m/1")))
        let gone = WebPushClient.decode(
            status: 410, location: nil, retryAfter: nil, body: Array("unsubscribed".utf8), version: .http1, now: now)
        #expect(gone.reason == "unsubscribed")
        #expect(gone.outcome == .invalidToken(reason: "HTTP 410: unsubscribed", since: nil))
        let busy = WebPushClient.decode(
            status: 429, location: nil, retryAfter: "3", body: [UInt8](), version: .http2, now: now)
        #expect(busy.outcome == .retry(reason: "HTTP 429", after: .seconds(3)))
    }
}

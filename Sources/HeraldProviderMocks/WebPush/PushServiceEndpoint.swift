import Foundation
import HeraldCore
import Synchronization

/// The behaviour of `POST /push/<id>` on a push service (RFC 8030 §5, RFC 8291, RFC 8292):
/// subscriptions, checks, decryption, scripted answers and the request log behind
/// ``MockPushService``.
final class PushServiceEndpoint: Sendable {
    /// RFC 8291 §4: push services need not accept a body larger than 4096 bytes.
    static let maximumBodySize = 4096

    let log = RequestLog<MockPushService.RecordedRequest>()
    private let scripts = TokenScripts<MockPushService.ScriptedResponse>()
    private let subscriptions = Mutex<[String: MockPushService.Subscription]>([:])
    private let origin = Mutex("")
    private let httpVersion: String

    init(httpVersion: String) {
        self.httpVersion = httpVersion
    }

    /// Sets the origin (`https://127.0.0.1:<port>`) once the port is bound: the `aud` tokens must
    /// carry and the base of endpoints and `Location`s.
    func setOrigin(_ value: String) {
        origin.withLock { $0 = value }
    }

    func makeSubscription(applicationServerKey: String?) -> MockPushService.Subscription {
        var generator = SystemRandomNumberGenerator()
        let id = Base64URL.encode((0..<12).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        let subscription = MockPushService.Subscription(
            id: id, endpoint: origin.withLock { $0 } + "/push/" + id, userAgent: TestUserAgent(),
            applicationServerKey: applicationServerKey)
        subscriptions.withLock { $0[id] = subscription }
        return subscription
    }

    func script(subscription id: String, _ response: MockPushService.ScriptedResponse, times: Int?) {
        scripts.add(token: id, response, times: times)
    }

    func clearScripts() {
        scripts.clear()
    }

    func respond(to request: TestHTTPRequest) async -> TestHTTPResponse {
        let origin = self.origin.withLock { $0 }
        var record = MockPushService.RecordedRequest(
            method: request.method, path: request.path, subscriptionID: nil, headers: request.headers,
            body: request.body, plaintext: nil, ttl: request.header("ttl").flatMap { Int($0) },
            urgency: request.header("urgency"), topic: request.header("topic"), vapid: nil, status: 201,
            location: nil, reason: nil, httpVersion: httpVersion, connectionID: request.connectionID)
        var response: TestHTTPResponse
        if let (status, reason) = check(request, origin: origin, record: &record) {
            response = TestHTTPResponse(status: status, body: Array(reason.utf8))
            record.reason = reason
        } else {
            let scripted = record.subscriptionID.flatMap { scripts.next(for: $0) }
            if let scripted, !(200..<300).contains(scripted.status) {
                response = TestHTTPResponse(
                    status: scripted.status, body: Array(scripted.body.utf8), delay: scripted.delay)
                if let retryAfter = scripted.retryAfter { response.headers.append(("retry-after", retryAfter)) }
                record.reason = scripted.body
            } else {
                let location = origin + "/message/" + UUID().uuidString.lowercased()
                response = TestHTTPResponse(
                    status: scripted?.status ?? 201, headers: [("location", location)], delay: scripted?.delay ?? .zero)
                record.location = location
            }
        }
        record.status = response.status
        log.append(record)
        return response
    }

    /// Runs a push service's checks in the order a request meets them: method, path, VAPID, the
    /// RFC 8030 headers, the body. Returns the refusal, if any.
    private func check(
        _ request: TestHTTPRequest, origin: String, record: inout MockPushService.RecordedRequest
    ) -> (status: Int, reason: String)? {
        guard request.method == "POST" else { return (405, "method not allowed") }
        guard request.path.hasPrefix("/push/") else { return (404, "not found") }
        let id = String(request.path.dropFirst("/push/".count))
        guard let subscription = subscriptions.withLock({ $0[id] }) else { return (404, "subscription not found") }
        record.subscriptionID = id

        switch VAPIDVerifier.verify(authorization: request.header("authorization"), origin: origin, now: Date()) {
        case .failure(let rejection):
            return (rejection.status, rejection.reason)
        case .success(let claims):
            record.vapid = claims
            if let restricted = subscription.applicationServerKey, restricted != claims.publicKey {
                return (403, "the vapid key is not the one the subscription was made with")
            }
        }

        // RFC 8030 §5.2: TTL is required, a non-negative integer of seconds.
        guard let ttl = request.header("ttl"), !ttl.isEmpty, ttl.allSatisfy(\.isASCIIDigit) else {
            return (400, "missing or invalid TTL")
        }
        if let urgency = request.header("urgency"), !["very-low", "low", "normal", "high"].contains(urgency) {
            return (400, "invalid Urgency")
        }
        if let topic = request.header("topic"), !Self.isValidTopic(topic) { return (400, "invalid Topic") }

        guard !request.body.isEmpty else { return nil }
        guard request.header("content-encoding") == "aes128gcm" else {
            return (415, "content-encoding must be aes128gcm")
        }
        guard request.body.count <= Self.maximumBodySize else { return (413, "payload too large") }
        do {
            record.plaintext = try subscription.userAgent.decrypt(request.body)
        } catch {
            return (400, "\(error)")
        }
        return nil
    }

    /// RFC 8030 §5.4: at most 32 characters of the URL- and filename-safe base64 alphabet.
    private static func isValidTopic(_ topic: String) -> Bool {
        !topic.isEmpty && topic.count <= 32
            && topic.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII
                    && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "-"
                        || scalar == "_")
            }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

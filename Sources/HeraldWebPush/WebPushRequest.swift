import Crypto
import HeraldCore

/// A notification made ready for the wire: validated, encrypted, its RFC 8030 headers built. Only
/// the `Authorization` header is missing; it depends on the origin and comes from
/// ``VAPIDTokenCache`` when the request is sent.
public struct WebPushRequest: Sendable {
    let endpoint: WebPushEndpoint

    /// The endpoint URL the request is POSTed to.
    public var url: String { endpoint.url }
    /// The endpoint's origin (`https://host[:port]`), the VAPID `aud`.
    public var origin: String { endpoint.audience }
    /// `ttl`, `urgency`, `topic`, and with a body `content-encoding: aes128gcm` and
    /// `content-type: application/octet-stream`; names lower-case.
    public let headers: [(String, String)]
    /// The aes128gcm body; empty for a push without payload.
    public let body: [UInt8]

    /// Validates and encrypts a notification.
    /// - Parameters:
    ///   - salt: Fixed salt for known-answer tests; nil draws a random one.
    ///   - ephemeralKey: Fixed sender key for known-answer tests; nil makes a new one.
    /// - Throws: `WebPushError` from ``WebPushNotification/validate()`` or the encryption.
    public init(
        _ notification: WebPushNotification, salt: [UInt8]? = nil, ephemeralKey: P256.KeyAgreement.PrivateKey? = nil
    ) throws(WebPushError) {
        try notification.validate()
        endpoint = try WebPushEndpoint(notification.subscription.endpoint)
        var headers: [(String, String)] = [("ttl", String(notification.ttl))]
        headers.append(("urgency", notification.urgency.rawValue))
        if let topic = notification.topic { headers.append(("topic", topic)) }
        if notification.payload.isEmpty {
            body = []
        } else {
            let keys = try notification.subscription.keyBytes()
            body = try WebPushEncryptor.encrypt(
                notification.payload, p256dh: keys.p256dh, auth: keys.auth, salt: salt,
                ephemeralKey: ephemeralKey ?? P256.KeyAgreement.PrivateKey())
            headers.append(("content-encoding", "aes128gcm"))
            headers.append(("content-type", "application/octet-stream"))
        }
        self.headers = headers
    }

    /// Every header, `authorization` (from ``VAPIDTokenCache/authorization(for:)``) included.
    public func headers(authorization: String) -> [(String, String)] {
        headers + [("authorization", authorization)]
    }
}

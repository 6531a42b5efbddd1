import HeraldCore

extension WebPushSubscription {
    /// The endpoint's origin, `https://host` or `https://host:port` when the port is not 443: the
    /// VAPID JWT's `aud` (RFC 8292 §2).
    /// - Throws: `WebPushError` `invalidEndpoint`.
    public func origin() throws(WebPushError) -> String {
        try WebPushEndpoint(endpoint).audience
    }

    /// Checks that the endpoint is an `https` URL and the keys decode to what RFC 8291 needs.
    /// - Throws: `WebPushError` naming the member at fault.
    public func validateForWebPush() throws(WebPushError) {
        _ = try WebPushEndpoint(endpoint)
        _ = try keyBytes()
    }

    /// The decoded `p256dh` and `auth`.
    func keyBytes() throws(WebPushError) -> (p256dh: [UInt8], auth: [UInt8]) {
        guard let key = Base64URL.decode(p256dh), key.count == 65, key[0] == 0x04 else { throw .invalidP256DH() }
        guard let secret = Base64URL.decode(auth), secret.count == 16 else { throw .invalidAuthSecret() }
        return (key, secret)
    }
}

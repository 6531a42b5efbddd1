import Crypto
import Foundation
import HeraldAPI
import HeraldCore

/// Signs and checks the console's sessions. A session is signed, so every node that shares the
/// master key verifies it on its own: `<app id>.<expiry>.<nonce>.<mac>`, the MAC an HMAC-SHA256
/// (under a key derived from the master key) of the other parts and a hash of the app's current
/// server key, so rotating the server key ends its sessions. Signing out ends one session: its
/// ``digest(of:)`` goes into the store every node reads (``ConsoleGate``). The CSRF token is an
/// HMAC of the whole session under a second derived key: only a page that signed in (or asked
/// `GET /console/session`) knows it.
struct ConsoleSessions: Sendable {
    /// The cookie that carries the session.
    static let cookieName = "herald_console"

    private let sessionKey: SymmetricKey
    private let csrfKey: SymmetricKey
    let lifetime: TimeInterval

    /// Sessions signed with keys derived (HKDF-SHA256) from `secret`.
    init(secret: SymmetricKey, lifetime: TimeInterval) {
        sessionKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: secret, info: Data("herald console session".utf8), outputByteCount: 32)
        csrfKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: secret, info: Data("herald console csrf".utf8), outputByteCount: 32)
        self.lifetime = lifetime
    }

    /// A verified session.
    struct Session: Sendable, Equatable {
        var appID: String
        var expiresAt: Date
        /// The cookie value.
        var value: String
    }

    /// A new session for an app, signed over its server key.
    func issue(appID: String, serverKey: String, now: Date) -> Session {
        let expiry = Int64((now.timeIntervalSince1970 + lifetime).rounded(.down))
        let nonce = Base64URL.encode(SymmetricKey(size: .bits128).withUnsafeBytes { Array($0) })
        let mac = Self.mac(appID: appID, expiry: expiry, nonce: nonce, serverKey: serverKey, key: sessionKey)
        return Session(
            appID: appID, expiresAt: Date(timeIntervalSince1970: TimeInterval(expiry)),
            value: "\(appID).\(expiry).\(nonce).\(mac)")
    }

    /// The session a cookie value stands for: well formed, unexpired at `now`, and signed over the
    /// app's current server key (`serverKey(appID)`, nil for an unknown app); nil for anything else.
    func verify(_ value: String, now: Date, serverKey: (String) -> String?) -> Session? {
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, let expiry = Int64(parts[1]), let key = serverKey(String(parts[0])) else { return nil }
        let expected = Self.mac(
            appID: String(parts[0]), expiry: expiry, nonce: String(parts[2]), serverKey: key, key: sessionKey)
        guard SecretComparison.equal(String(parts[3]), expected) else { return nil }
        let expiresAt = Date(timeIntervalSince1970: TimeInterval(expiry))
        guard now < expiresAt else { return nil }
        return Session(appID: String(parts[0]), expiresAt: expiresAt, value: value)
    }

    /// The name the store keeps a signed-out session under: SHA-256 of its cookie value, so the
    /// store never holds a cookie that would work.
    static func digest(of session: Session) -> String {
        Base64URL.encode(Array(SHA256.hash(data: Array(session.value.utf8))))
    }

    /// The CSRF token of a session.
    func csrfToken(for session: Session) -> String {
        Base64URL.encode(
            Array(HMAC<SHA256>.authenticationCode(for: Array(session.value.utf8), using: csrfKey)))
    }

    /// Whether `token` is the session's CSRF token (constant time).
    func checkCSRF(_ token: String?, for session: Session) -> Bool {
        guard let token else { return false }
        return SecretComparison.equal(token, csrfToken(for: session))
    }

    private static func mac(appID: String, expiry: Int64, nonce: String, serverKey: String, key: SymmetricKey) -> String
    {
        let keyHash = Base64URL.encode(Array(SHA256.hash(data: Array(serverKey.utf8))))
        let message = "herald console v1\n\(appID)\n\(expiry)\n\(nonce)\n\(keyHash)"
        return Base64URL.encode(Array(HMAC<SHA256>.authenticationCode(for: Array(message.utf8), using: key)))
    }
}

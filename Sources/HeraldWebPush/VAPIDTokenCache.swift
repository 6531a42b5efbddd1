import Foundation
import JWTKit

/// The `Authorization: vapid t=<JWT>, k=<public key>` values of RFC 8292, one per push service
/// origin: the JWT is ES256 with `aud` the origin (`https://host[:port]`), `exp` 12 hours ahead
/// (RFC 8292 §2 allows at most 24) and `sub` the operator's contact. A token is reused for its
/// origin until less than an hour of it is left, so a fan-out signs once per origin, not once per
/// push.
public actor VAPIDTokenCache {
    /// How long a new token is valid.
    public static let lifetime: TimeInterval = 12 * 3600
    /// Renew a token with less than this left.
    public static let renewalMargin: TimeInterval = 3600
    /// Origins whose tokens are kept; past this, expired tokens and then all tokens are dropped.
    static let maxOrigins = 1024

    struct Claims: JWTPayload {
        var aud: String
        var exp: Int
        var sub: String

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    private let key: VAPIDKey
    /// The `sub` claim.
    public nonisolated let subject: String
    private let keyParameter: String
    private let keys = JWTKeyCollection()
    private let now: @Sendable () -> Date
    private var isConfigured = false
    private var tokens: [String: (authorization: String, expiresAt: Date)] = [:]

    /// How many tokens have been signed (for tests and metrics).
    public private(set) var mintedCount = 0

    /// Creates the cache for a key and contact.
    /// - Parameters:
    ///   - subject: A `mailto:` address or an `https:` URL the push service can reach the operator at.
    ///   - now: The clock (tests inject one).
    /// - Throws: `WebPushError` `invalidSubject` when `subject` is neither.
    public init(key: VAPIDKey, subject: String, now: @escaping @Sendable () -> Date = Date.init) throws(WebPushError) {
        guard Self.isValidSubject(subject) else { throw .invalidSubject() }
        self.key = key
        self.subject = subject
        self.keyParameter = ", k=" + key.publicKeyBase64URL
        self.now = now
    }

    /// The `Authorization` header value for pushes to `origin` (`https://host[:port]`, as
    /// ``WebPushSubscription/origin`` gives it), signed anew when none is cached or the cached one
    /// has less than ``renewalMargin`` left.
    /// - Throws: JWTKit signing errors (not expected with a valid key).
    public func authorization(for origin: String) async throws -> String {
        let time = now()
        if let cached = tokens[origin], cached.expiresAt.timeIntervalSince(time) > Self.renewalMargin {
            return cached.authorization
        }
        if !isConfigured {
            await keys.add(ecdsa: try ES256PrivateKey(backing: key.privateKey))
            isConfigured = true
        }
        let expiresAt = Date(timeIntervalSince1970: (time.timeIntervalSince1970 + Self.lifetime).rounded(.down))
        let token = try await keys.sign(
            Claims(aud: origin, exp: Int(expiresAt.timeIntervalSince1970), sub: subject))
        let authorization = "vapid t=" + token + keyParameter
        if tokens.count >= Self.maxOrigins {
            tokens = tokens.filter { $0.value.expiresAt > time }
            if tokens.count >= Self.maxOrigins { tokens.removeAll() }
        }
        tokens[origin] = (authorization, expiresAt)
        mintedCount += 1
        return authorization
    }

    /// Whether `subject` is a contact RFC 8292 §2.1 accepts: `mailto:` with an address, or an
    /// `https:` URL with a host.
    public static func isValidSubject(_ subject: String) -> Bool {
        guard !subject.contains(where: \.isWhitespace) else { return false }
        let lowered = subject.lowercased()
        if lowered.hasPrefix("mailto:") {
            let address = subject.dropFirst("mailto:".count)
            guard let at = address.firstIndex(of: "@") else { return false }
            return at != address.startIndex && address.index(after: at) != address.endIndex
        }
        if lowered.hasPrefix("https:") {
            guard let url = URL(string: subject), let host = url.host, !host.isEmpty else { return false }
            return true
        }
        return false
    }
}

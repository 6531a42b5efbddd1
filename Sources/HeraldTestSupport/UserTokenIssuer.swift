import Foundation
import JWTKit

/// Signs user JWTs the way an app's own auth system would, for tests of Herald's user-token checks.
public struct UserTokenIssuer: Sendable {
    /// The claims a test token carries.
    public struct Claims: JWTPayload {
        public var sub: SubjectClaim?
        public var exp: ExpirationClaim?
        public var nbf: NotBeforeClaim?
        public var iss: IssuerClaim?
        public var aud: AudienceClaim?

        public func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    private let keys: JWTKeyCollection
    private let kid: JWKIdentifier?

    /// An HS256 issuer with a shared secret.
    public static func hs256(secret: String) async -> UserTokenIssuer {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return UserTokenIssuer(keys: keys, kid: nil)
    }

    /// An ES256 issuer with a fresh P-256 key; `publicKeyPEM` is what Herald is configured with.
    public static func es256(kid: String? = nil) async -> (issuer: UserTokenIssuer, publicKeyPEM: String) {
        let key = ES256PrivateKey()
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: kid.map { JWKIdentifier(string: $0) })
        return (
            UserTokenIssuer(keys: keys, kid: kid.map { JWKIdentifier(string: $0) }), key.publicKey.pemRepresentation
        )
    }

    /// Signs a token for `subject`.
    /// - Parameters:
    ///   - expiresIn: Seconds from `now` to `exp`; nil omits `exp`.
    ///   - notBefore: Seconds from `now` to `nbf`; nil omits `nbf`.
    public func token(
        subject: String?, now: Date = Date(), expiresIn: TimeInterval? = 3600, notBefore: TimeInterval? = nil,
        issuer: String? = nil, audience: String? = nil
    ) async throws -> String {
        let claims = Claims(
            sub: subject.map { SubjectClaim(value: $0) },
            exp: expiresIn.map { ExpirationClaim(value: now.addingTimeInterval($0)) },
            nbf: notBefore.map { NotBeforeClaim(value: now.addingTimeInterval($0)) },
            iss: issuer.map { IssuerClaim(value: $0) }, aud: audience.map { AudienceClaim(value: [$0]) })
        return try await keys.sign(claims, kid: kid)
    }
}

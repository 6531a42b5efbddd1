import Foundation
import HeraldCore
import JWTKit

/// Verifies an app's user JWTs: the signature with JWTKit against the configured HS256 secret,
/// PEM public keys (RS256 or ES256) and JWKS, then the claims against the configured policy:
/// `sub` required, `exp` required and `nbf` honoured with the leeway, `iss` and `aud` when set.
public struct UserTokenVerifier: Sendable {
    private let keys: JWTKeyCollection
    private let configuration: UserTokenConfiguration
    private let now: @Sendable () -> Date

    /// Loads the configured keys.
    /// - Parameter now: The clock used for `exp` and `nbf` (tests inject one).
    /// - Throws: `HeraldError` with code `invalid_configuration` when a key file cannot be read or parsed.
    public init(
        configuration: UserTokenConfiguration, appID: String, now: @escaping @Sendable () -> Date = Date.init
    ) async throws {
        let keys = JWTKeyCollection()
        if let secret = configuration.hs256Secret {
            // JWTKit asserts on HS256 keys shorter than the hash output (RFC 7518 §3.2).
            guard secret.utf8.count >= 32 else {
                throw HeraldError.invalidConfiguration("app.\(appID).jwt.hs256_secret", "must be at least 32 bytes")
            }
            await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256, kid: "herald-hs256")
        }
        for (index, path) in configuration.publicKeyFiles.enumerated() {
            let key = "app.\(appID).jwt.public_key_files"
            guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw HeraldError.invalidConfiguration(key, "names '\(path)', which cannot be read")
            }
            let kid = JWKIdentifier(string: "herald-pem-\(index)")
            if let ecdsa = try? ES256PublicKey(pem: pem) {
                await keys.add(ecdsa: ecdsa, kid: kid)
            } else if let rsa = try? Insecure.RSA.PublicKey(pem: pem) {
                await keys.add(rsa: rsa, digestAlgorithm: .sha256, kid: kid)
            } else {
                throw HeraldError.invalidConfiguration(key, "names '\(path)', which holds no P-256 or RSA public key")
            }
        }
        if let path = configuration.jwksFile {
            let key = "app.\(appID).jwt.jwks_file"
            guard let json = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw HeraldError.invalidConfiguration(key, "names '\(path)', which cannot be read")
            }
            do {
                try await keys.add(jwksJSON: json)
            } catch {
                throw HeraldError.invalidConfiguration(key, "names '\(path)', which is not a valid JWKS")
            }
        }
        self.keys = keys
        self.configuration = configuration
        self.now = now
    }

    /// The refusal of a token none of the app's keys signed (any other refusal is of a token the app
    /// signed whose claims it does not accept).
    package static let unsignedRefusal = HeraldError.unauthorized("The user token's signature does not verify.")

    /// The user id (`sub`) of a valid token.
    /// - Throws: `HeraldError.unauthorized` with a reason that names no secret: ``unsignedRefusal``
    ///   when no key of the app signed it.
    public func userID(from token: String) async throws(HeraldError) -> String {
        let claims: UserClaims
        do {
            claims = try await keys.verify(token, as: UserClaims.self, iteratingKeys: true)
        } catch {
            throw Self.unsignedRefusal
        }
        let leeway = TimeInterval(configuration.leewaySeconds)
        let current = now()
        guard let expiration = claims.exp else { throw .unauthorized("The user token has no expiry (exp).") }
        guard expiration.value.addingTimeInterval(leeway) > current else {
            throw .unauthorized("The user token has expired.")
        }
        if let notBefore = claims.nbf, notBefore.value.addingTimeInterval(-leeway) > current {
            throw .unauthorized("The user token is not valid yet (nbf).")
        }
        if let issuer = configuration.issuer, claims.iss?.value != issuer {
            throw .unauthorized("The user token's issuer is not accepted.")
        }
        if let audience = configuration.audience, claims.aud?.value.contains(audience) != true {
            throw .unauthorized("The user token's audience is not accepted.")
        }
        guard let subject = claims.sub?.value, !subject.isEmpty, subject.count <= InstallationRules.maxShortText else {
            throw .unauthorized("The user token has no subject (sub).")
        }
        return subject
    }
}

/// The registered claims Herald reads from a user token.
package struct UserClaims: JWTPayload {
    package var sub: SubjectClaim?
    package var exp: ExpirationClaim?
    package var nbf: NotBeforeClaim?
    package var iss: IssuerClaim?
    package var aud: AudienceClaim?

    /// Claims are checked by ``UserTokenVerifier`` against its configured policy and injected clock,
    /// which JWTKit's payload hook cannot see; the signature is what JWTKit verifies here.
    package func verify(using algorithm: some JWTAlgorithm) async throws {}
}

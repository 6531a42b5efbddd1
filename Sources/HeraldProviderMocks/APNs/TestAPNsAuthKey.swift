import Crypto
import Foundation
import JWTKit

/// An APNs auth key (the `.p8` file of token-based authentication) made fresh in memory, with the team it belongs
/// to: it signs provider tokens and registers itself with ``MockAPNsServer``.
public struct TestAPNsAuthKey: Sendable {
    /// The Apple Developer team ID (`iss`).
    public let teamID: String
    /// The key ID (`kid`).
    public let keyID: String
    /// The P-256 private key.
    public let privateKey: P256.Signing.PrivateKey

    /// Creates a key; IDs default to random 10-character strings like Apple's, the private key to a new one.
    public init(teamID: String? = nil, keyID: String? = nil, privateKey: P256.Signing.PrivateKey = .init()) {
        self.teamID = teamID ?? Self.appleStyleID()
        self.keyID = keyID ?? Self.appleStyleID()
        self.privateKey = privateKey
    }

    /// The key as Apple hands it out: PKCS#8 PEM, the contents of `AuthKey_<keyID>.p8`.
    public var p8PEM: String { privateKey.pemRepresentation }

    /// The credential to start a ``MockAPNsServer`` with, allowed to push to `topics`.
    public func credential(topics: Set<String>) -> MockAPNsServer.Credential {
        .token(teamID: teamID, keyID: keyID, publicKey: privateKey.publicKey, topics: topics)
    }

    /// Signs a provider token (ES256 JWT with `kid`, `iss` and `iat`) for an `authorization: bearer` header.
    /// - Parameter issuedAt: The `iat` claim, truncated to whole seconds as APNs expects; APNs refuses tokens more
    ///   than an hour old.
    /// - Throws: When JWTKit cannot sign (it does not happen with a valid P-256 key).
    public func providerToken(issuedAt: Date = Date()) async throws -> String {
        let issuedAt = Date(timeIntervalSince1970: issuedAt.timeIntervalSince1970.rounded(.down))
        let keys = JWTKeyCollection()
        let kid = JWKIdentifier(string: keyID)
        await keys.add(ecdsa: try ES256PrivateKey(backing: privateKey), kid: kid)
        let payload = ProviderTokenPayload(iss: IssuerClaim(value: teamID), iat: IssuedAtClaim(value: issuedAt))
        return try await keys.sign(payload, kid: kid)
    }

    private struct ProviderTokenPayload: JWTPayload {
        var iss: IssuerClaim
        var iat: IssuedAtClaim

        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    private static func appleStyleID() -> String {
        String((0..<10).map { _ in "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".randomElement()! })
    }
}

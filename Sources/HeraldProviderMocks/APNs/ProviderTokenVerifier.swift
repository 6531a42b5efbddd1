import Foundation
import HeraldCore
import JWTKit
import Synchronization

/// The claims of an APNs provider authentication token that passed verification.
public struct ProviderTokenClaims: Sendable, Hashable {
    /// The `iss` claim: the team ID.
    public var teamID: String
    /// The `kid` header: the key ID.
    public var keyID: String
    /// The `iat` claim.
    public var issuedAt: Date
}

/// Verifies APNs provider tokens the way APNs does: an ES256 JWT whose `kid` names a registered key and whose `iss`
/// is that key's team, issued within the last hour.
///
/// Signature checks are cached per token string, as a provider reuses one token for up to an hour; the age check
/// runs on every request.
final class ProviderTokenVerifier: Sendable {
    /// The APNs key-based credential a token verified against.
    struct VerifiedToken: Sendable {
        var claims: ProviderTokenClaims
        var credential: MockAPNsServer.Credential
    }

    /// Tokens older than this are refused with `ExpiredProviderToken` (APNs: "no more than one hour old").
    static let maximumAge: TimeInterval = 3600
    private static let cacheLimit = 10_000

    private struct Key: Sendable {
        let credential: MockAPNsServer.Credential
        let collection: JWTKeyCollection
    }

    private struct Payload: JWTPayload {
        var iss: IssuerClaim
        var iat: IssuedAtClaim

        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    private struct Header: Decodable {
        var alg: String?
        var kid: String?
    }

    private let keys: [String: Key]
    private let cache = Mutex<[String: Result<VerifiedToken, APNsRejection>]>([:])

    init(credentials: [MockAPNsServer.Credential]) async throws {
        var keys: [String: Key] = [:]
        for credential in credentials {
            let collection = JWTKeyCollection()
            await collection.add(ecdsa: try ES256PublicKey(backing: credential.publicKey))
            keys[credential.keyID] = Key(credential: credential, collection: collection)
        }
        self.keys = keys
    }

    /// Verifies the `authorization` header value of a request made at `now`. An expired token comes back with both
    /// its verified claims and the `ExpiredProviderToken` rejection.
    func verify(authorization: String?, now: Date) async -> (VerifiedToken?, APNsRejection?) {
        guard let authorization, !authorization.isEmpty else { return (nil, .missingProviderToken) }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return (nil, .invalidProviderToken) }
        let token = String(parts[1]).trimmingCharacters(in: .whitespaces)

        let cached = cache.withLock { $0[token] }
        let result: Result<VerifiedToken, APNsRejection>
        if let cached {
            result = cached
        } else {
            result = await verifySignature(of: token)
            cache.withLock { cache in
                if cache.count >= Self.cacheLimit { cache.removeAll() }
                cache[token] = result
            }
        }
        switch result {
        case .failure(let rejection):
            return (nil, rejection)
        case .success(let verified):
            let expired = now.timeIntervalSince(verified.claims.issuedAt) > Self.maximumAge
            return (verified, expired ? .expiredProviderToken : nil)
        }
    }

    private func verifySignature(of token: String) async -> Result<VerifiedToken, APNsRejection> {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, let headerBytes = Base64URL.decode(String(segments[0])),
            let header = try? JSONDecoder().decode(Header.self, from: Data(headerBytes)),
            header.alg == "ES256", let keyID = header.kid, let key = keys[keyID]
        else { return .failure(.invalidProviderToken) }
        guard let payload = try? await key.collection.verify(token, as: Payload.self),
            payload.iss.value == key.credential.teamID
        else { return .failure(.invalidProviderToken) }
        return .success(
            VerifiedToken(
                claims: ProviderTokenClaims(teamID: payload.iss.value, keyID: keyID, issuedAt: payload.iat.value),
                credential: key.credential))
    }
}

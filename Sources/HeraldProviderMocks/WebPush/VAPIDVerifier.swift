import Crypto
import Foundation
import HeraldCore

/// The VAPID credentials of a push request that passed verification (RFC 8292).
public struct VAPIDClaims: Sendable, Hashable {
    /// The `aud` claim: the push service origin the token is for.
    public var audience: String
    /// The `exp` claim.
    public var expiresAt: Date
    /// The `sub` claim: the application server's contact.
    public var subject: String
    /// The `k` parameter: the application server's public key, base64url uncompressed point.
    public var publicKey: String
}

/// Checks `Authorization: vapid t=<JWT>, k=<key>` as a push service does (RFC 8292 §3–4): the
/// JWT's ES256 signature verifies with `k`, `aud` is this service's origin, `exp` is in the future
/// and at most 24 hours away, and `sub` is present.
enum VAPIDVerifier {
    /// Why a credential was refused: `missing` earns 401, the others 403 (RFC 8292 §4.2).
    enum Rejection: Error, Equatable {
        case missing
        case invalid(String)

        var status: Int {
            switch self {
            case .missing: 401
            case .invalid: 403
            }
        }

        var reason: String {
            switch self {
            case .missing: "missing vapid authorization"
            case .invalid(let detail): "invalid vapid authorization: \(detail)"
            }
        }
    }

    /// RFC 8292 §2: a push service may refuse an `exp` more than 24 hours after the request.
    static let maximumLifetime: TimeInterval = 24 * 3600

    private struct Header: Decodable {
        var alg: String?
    }

    private struct Claims: Decodable {
        var aud: String?
        var exp: Int?
        var sub: String?
    }

    static func verify(authorization: String?, origin: String, now: Date) -> Result<VAPIDClaims, Rejection> {
        guard let authorization, !authorization.isEmpty else { return .failure(.missing) }
        guard authorization.lowercased().hasPrefix("vapid ") else { return .failure(.missing) }
        var parameters: [String: String] = [:]
        for part in authorization.dropFirst("vapid ".count).split(separator: ",") {
            let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { return .failure(.invalid("malformed parameter")) }
            parameters[pair[0].lowercased()] = String(pair[1])
        }
        guard let token = parameters["t"], let key = parameters["k"] else {
            return .failure(.invalid("t and k are both required"))
        }
        guard let keyBytes = Base64URL.decode(key), keyBytes.count == 65,
            let publicKey = try? P256.Signing.PublicKey(x963Representation: keyBytes)
        else { return .failure(.invalid("k is not an uncompressed P-256 public key")) }

        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, let headerBytes = Base64URL.decode(String(segments[0])),
            let claimBytes = Base64URL.decode(String(segments[1])),
            let signatureBytes = Base64URL.decode(String(segments[2])),
            let header = try? JSONDecoder().decode(Header.self, from: Data(headerBytes)),
            let claims = try? JSONDecoder().decode(Claims.self, from: Data(claimBytes))
        else { return .failure(.invalid("t is not a JWT")) }
        guard header.alg == "ES256" else { return .failure(.invalid("alg is not ES256")) }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            publicKey.isValidSignature(signature, for: Array("\(segments[0]).\(segments[1])".utf8))
        else { return .failure(.invalid("the signature does not verify with k")) }

        guard let audience = claims.aud, audience == origin else {
            return .failure(.invalid("aud is not \(origin)"))
        }
        guard let exp = claims.exp else { return .failure(.invalid("exp is missing")) }
        let expiresAt = Date(timeIntervalSince1970: TimeInterval(exp))
        guard expiresAt > now else { return .failure(.invalid("the token has expired")) }
        guard expiresAt.timeIntervalSince(now) <= maximumLifetime else {
            return .failure(.invalid("exp is more than 24 hours ahead"))
        }
        guard let subject = claims.sub, !subject.isEmpty else { return .failure(.invalid("sub is missing")) }
        return .success(VAPIDClaims(audience: audience, expiresAt: expiresAt, subject: subject, publicKey: key))
    }
}

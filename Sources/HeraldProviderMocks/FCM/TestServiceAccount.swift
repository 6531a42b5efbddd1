import CryptoExtras
import Foundation
import JWTKit

/// A Google service account made fresh in memory for tests: an RSA-2048 key, its IDs, the JSON key file a client is
/// configured with, and signed token-endpoint assertions.
public struct TestServiceAccount: Sendable {
    /// The Firebase / Google Cloud project.
    public let projectID: String
    /// The account's email: the assertion's `iss`.
    public let clientEmail: String
    /// The key's ID: the assertion header's `kid` and the key file's `private_key_id`.
    public let privateKeyID: String
    /// The account's private key.
    public let privateKey: JWTKit.Insecure.RSA.PrivateKey

    /// One account for the whole test process, for the harnesses that need an account but not a new one: RSA key
    /// generation takes a moment (up to seconds in a debug build), and most harnesses start a mock FCM of their
    /// own that trusts whichever account they give it.
    public static let shared: TestServiceAccount = {
        do { return try TestServiceAccount() } catch { fatalError("Generating an RSA-2048 key failed: \(error)") }
    }()

    /// Generates a new account. RSA key generation takes a moment (up to seconds in a debug build): use ``shared``
    /// where any account will do.
    /// - Parameter clientEmail: Defaults to `herald-push@<projectID>.iam.gserviceaccount.com`.
    /// - Throws: When the RSA key cannot be generated.
    public init(projectID: String = "herald-test", clientEmail: String? = nil) throws {
        self.projectID = projectID
        self.clientEmail = clientEmail ?? "herald-push@\(projectID).iam.gserviceaccount.com"
        self.privateKeyID = (0..<20).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        self.privateKey = try JWTKit.Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))
    }

    /// The public key, which verifies the account's assertions (what ``MockFCMServer`` is started with).
    public var publicKey: JWTKit.Insecure.RSA.PublicKey { privateKey.publicKey }

    /// The private key as PKCS#8 PEM, as Google's key files carry it.
    public var privateKeyPEM: String {
        // `JWTKit.Insecure.RSA.PrivateKey` renders PKCS#1; Google's files use PKCS#8.
        (try? _RSA.Signing.PrivateKey(pemRepresentation: privateKey.pemRepresentation).pkcs8PEMRepresentation)
            ?? privateKey.pemRepresentation
    }

    /// The service-account JSON key file, with `token_uri` set to `tokenURI` (a mock's
    /// ``MockFCMServer/tokenURI``).
    public func json(tokenURI: String) -> String {
        let file = KeyFile(
            type: "service_account", projectID: projectID, privateKeyID: privateKeyID, privateKey: privateKeyPEM,
            clientEmail: clientEmail, clientID: "1\(privateKeyID.filter(\.isNumber).prefix(20))",
            authURI: "https://accounts.google.com/o/oauth2/auth", tokenURI: tokenURI,
            authProviderX509CertURL: "https://www.googleapis.com/oauth2/v1/certs",
            clientX509CertURL: "https://www.googleapis.com/robot/v1/metadata/x509/"
                + (clientEmail.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? clientEmail),
            universeDomain: "googleapis.com")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding strings cannot fail.
        return (try? String(decoding: encoder.encode(file), as: UTF8.self)) ?? "{}"
    }

    /// Signs the assertion a client sends to the token endpoint (RS256, header `kid` = ``privateKeyID``).
    /// - Parameters:
    ///   - tokenURI: The `aud` claim.
    ///   - issuedAt: The `iat` claim, truncated to whole seconds.
    ///   - lifetime: Seconds from `iat` to `exp`; Google accepts at most 3600.
    ///   - scope: The `scope` claim.
    /// - Throws: When JWTKit cannot sign.
    public func assertion(
        tokenURI: String, issuedAt: Date = Date(), lifetime: TimeInterval = 3600,
        scope: String = "https://www.googleapis.com/auth/firebase.messaging"
    ) async throws -> String {
        let issuedAt = Date(timeIntervalSince1970: issuedAt.timeIntervalSince1970.rounded(.down))
        let keys = JWTKeyCollection()
        let kid = JWKIdentifier(string: privateKeyID)
        await keys.add(rsa: privateKey, digestAlgorithm: .sha256, kid: kid)
        let claims = AssertionClaims(
            iss: IssuerClaim(value: clientEmail), scope: scope, aud: AudienceClaim(value: tokenURI),
            iat: IssuedAtClaim(value: issuedAt), exp: ExpirationClaim(value: issuedAt.addingTimeInterval(lifetime)))
        return try await keys.sign(claims, kid: kid)
    }

    private struct AssertionClaims: JWTPayload {
        var iss: IssuerClaim
        var scope: String
        var aud: AudienceClaim
        var iat: IssuedAtClaim
        var exp: ExpirationClaim

        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    private struct KeyFile: Encodable {
        var type: String
        var projectID: String
        var privateKeyID: String
        var privateKey: String
        var clientEmail: String
        var clientID: String
        var authURI: String
        var tokenURI: String
        var authProviderX509CertURL: String
        var clientX509CertURL: String
        var universeDomain: String

        enum CodingKeys: String, CodingKey {
            case type
            case projectID = "project_id"
            case privateKeyID = "private_key_id"
            case privateKey = "private_key"
            case clientEmail = "client_email"
            case clientID = "client_id"
            case authURI = "auth_uri"
            case tokenURI = "token_uri"
            case authProviderX509CertURL = "auth_provider_x509_cert_url"
            case clientX509CertURL = "client_x509_cert_url"
            case universeDomain = "universe_domain"
        }
    }
}

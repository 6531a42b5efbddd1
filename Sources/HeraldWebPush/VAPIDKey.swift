import Crypto
import HeraldCore

/// An application server's VAPID key pair (RFC 8292): a P-256 key whose private half signs the
/// JWT on every push and whose public half browsers take as `applicationServerKey` when they
/// subscribe (a subscription made with one key refuses pushes signed by another).
public struct VAPIDKey: Sendable {
    let privateKey: P256.Signing.PrivateKey

    /// Wraps a swift-crypto key.
    public init(_ privateKey: P256.Signing.PrivateKey) {
        self.privateKey = privateKey
    }

    /// Loads a key from PEM text: SEC 1 (`EC PRIVATE KEY`, what `openssl ecparam -genkey` and most
    /// web-push tools write) or PKCS #8 (`PRIVATE KEY`).
    /// - Throws: `WebPushError` `invalidVAPIDKey` when the text is not a P-256 private key.
    public init(pem: String) throws(WebPushError) {
        guard let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) else {
            throw .invalidVAPIDKey("is not a PEM P-256 private key")
        }
        self.privateKey = key
    }

    /// Loads a key from its raw 32-byte private scalar in base64url, the form web-push libraries
    /// print as the "private key" (`npx web-push generate-vapid-keys`).
    /// - Throws: `WebPushError` `invalidVAPIDKey` when the text is not 32 bytes of base64url or not a
    ///   valid scalar.
    public init(base64URL: String) throws(WebPushError) {
        guard let raw = Base64URL.decode(base64URL), raw.count == 32,
            let key = try? P256.Signing.PrivateKey(rawRepresentation: raw)
        else { throw .invalidVAPIDKey("is not a base64url 32-byte P-256 private key") }
        self.privateKey = key
    }

    /// A new random key pair.
    public static func generate() -> VAPIDKey {
        VAPIDKey(P256.Signing.PrivateKey())
    }

    /// The public key as browsers' `PushManager.subscribe({applicationServerKey})` takes it and as
    /// the `k` parameter of the `vapid` authorization carries it: the uncompressed point
    /// (`0x04 || x || y`, 65 bytes) in unpadded base64url.
    public var publicKeyBase64URL: String {
        Base64URL.encode(privateKey.publicKey.x963Representation)
    }

    /// The private scalar (32 bytes) in unpadded base64url; a secret.
    public var privateKeyBase64URL: String {
        Base64URL.encode(privateKey.rawRepresentation)
    }

    /// The private key as PKCS #8 PEM; a secret.
    public var pemRepresentation: String {
        privateKey.pemRepresentation
    }

    /// The public key, to verify signatures.
    public var publicKey: P256.Signing.PublicKey {
        privateKey.publicKey
    }
}

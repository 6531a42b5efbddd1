import Crypto
import HeraldCore

/// A browser's side of a push subscription for tests: the ECDH key pair and authentication secret
/// it makes when it subscribes, and the decryption of RFC 8291 `aes128gcm` push messages with
/// them. Written from the RFCs alone, apart from any sender, so that tests of a sender check it
/// against an independent reading.
public struct TestUserAgent: Sendable {
    /// Why a push message did not decrypt.
    public struct DecryptionError: Error, Sendable, CustomStringConvertible {
        /// What was wrong with the message.
        public let message: String

        /// See `CustomStringConvertible`.
        public var description: String { "push message decryption failed: \(message)" }
    }

    /// The subscription's ECDH private key (`p256dh` is its public half).
    public let privateKey: P256.KeyAgreement.PrivateKey
    /// The subscription's 16-byte authentication secret.
    public let authSecret: [UInt8]

    /// A user agent with the given keys, or fresh random ones.
    public init(privateKey: P256.KeyAgreement.PrivateKey = .init(), authSecret: [UInt8]? = nil) {
        self.privateKey = privateKey
        var generator = SystemRandomNumberGenerator()
        self.authSecret = authSecret ?? (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// The public key as the subscription's `keys.p256dh`: the uncompressed point in base64url.
    public var p256dh: String { Base64URL.encode(privateKey.publicKey.x963Representation) }

    /// The authentication secret as the subscription's `keys.auth`, in base64url.
    public var auth: String { Base64URL.encode(authSecret) }

    /// Decrypts an `aes128gcm` push message body (RFC 8188 §2, RFC 8291 §3–4): one record, whose
    /// padding must end in the last-record delimiter 0x02.
    /// - Throws: ``DecryptionError`` for a malformed header, a key that is not a P-256 point, more
    ///   than one record, a failed authentication tag, or a wrong delimiter.
    public func decrypt(_ body: [UInt8]) throws(DecryptionError) -> [UInt8] {
        guard body.count >= 21 else { throw DecryptionError(message: "the body is shorter than the header") }
        let salt = Array(body[0..<16])
        let recordSize = body[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let keyLength = Int(body[20])
        guard body.count >= 21 + keyLength else { throw DecryptionError(message: "the key id is truncated") }
        let senderPublic = Array(body[21..<(21 + keyLength)])
        let record = Array(body[(21 + keyLength)...])
        guard recordSize >= 18 else { throw DecryptionError(message: "record size \(recordSize) is below 18") }
        guard record.count >= 17 else { throw DecryptionError(message: "the record is shorter than its tag") }
        guard record.count <= recordSize else {
            throw DecryptionError(message: "more than one record (\(record.count) bytes, rs \(recordSize))")
        }
        guard keyLength == 65, let senderKey = try? P256.KeyAgreement.PublicKey(x963Representation: senderPublic)
        else { throw DecryptionError(message: "the key id is not an uncompressed P-256 point") }
        guard let secret = try? privateKey.sharedSecretFromKeyAgreement(with: senderKey) else {
            throw DecryptionError(message: "ECDH failed")
        }
        let userAgentPublic = Array(privateKey.publicKey.x963Representation)
        let ikm = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: secret.withUnsafeBytes { Array($0) }), salt: authSecret,
            info: Array("WebPush: info\u{0}".utf8) + userAgentPublic + senderPublic, outputByteCount: 32)
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: ikm, salt: salt, info: Array("Content-Encoding: aes128gcm\u{0}".utf8), outputByteCount: 16
        )
        let nonce = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: ikm, salt: salt, info: Array("Content-Encoding: nonce\u{0}".utf8), outputByteCount: 12)
        let padded: [UInt8]
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: nonce.withUnsafeBytes { Array($0) }), ciphertext: record.dropLast(16),
                tag: record.suffix(16))
            padded = Array(try AES.GCM.open(box, using: key))
        } catch {
            throw DecryptionError(message: "the record does not authenticate (\(error))")
        }
        guard let delimiter = padded.lastIndex(where: { $0 != 0 }) else {
            throw DecryptionError(message: "the record has no delimiter")
        }
        guard padded[delimiter] == 0x02 else {
            throw DecryptionError(message: "the delimiter is \(padded[delimiter]), not 0x02 (last record)")
        }
        return Array(padded[..<delimiter])
    }
}

import Crypto

/// The receiving side of RFC 8291: a subscription's key pair and authentication secret, and the
/// decryption of the `aes128gcm` messages sent to it (one record, RFC 8188 §2), with the key
/// derivation ``WebPushEncryptor`` uses. `herald listen --unifiedpush` is such a receiver.
public struct WebPushDecryptor: Sendable {
    /// The subscription's ECDH private key (`p256dh` is its public half).
    public let privateKey: P256.KeyAgreement.PrivateKey
    /// The subscription's 16-byte authentication secret.
    public let authSecret: [UInt8]

    /// A receiver with the given keys, or fresh random ones.
    public init(privateKey: P256.KeyAgreement.PrivateKey = .init(), authSecret: [UInt8]? = nil) {
        self.privateKey = privateKey
        var generator = SystemRandomNumberGenerator()
        self.authSecret = authSecret ?? (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// The public key as a subscription's `keys.p256dh`: the uncompressed point.
    public var publicKey: [UInt8] { Array(privateKey.publicKey.x963Representation) }

    /// Decrypts one message body.
    /// - Throws: `WebPushError` `decryptionFailed` naming what was wrong: a malformed header, a key
    ///   that is not a P-256 point, more than one record, a record that does not authenticate, or
    ///   a padding that does not end in the last record's delimiter (0x02).
    public func decrypt(_ body: [UInt8]) throws(WebPushError) -> [UInt8] {
        guard body.count >= 21 else { throw .decryptionFailed("the body is shorter than its header") }
        let salt = Array(body[0..<16])
        let recordSize = body[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let keyLength = Int(body[20])
        guard keyLength == 65, body.count >= 21 + keyLength + 17 else {
            throw .decryptionFailed("the header's key id is not a 65-byte P-256 point, or the record is cut short")
        }
        let senderPublic = Array(body[21..<86])
        let record = Array(body[86...])
        guard record.count <= recordSize else { throw .decryptionFailed("more than one record") }
        guard let senderKey = try? P256.KeyAgreement.PublicKey(x963Representation: senderPublic),
            let secret = try? privateKey.sharedSecretFromKeyAgreement(with: senderKey)
        else { throw .decryptionFailed("the sender's key is not a P-256 point") }
        let keys = WebPushEncryptor.deriveKeys(
            ecdhSecret: secret.withUnsafeBytes { Array($0) }, auth: authSecret, userAgentPublic: publicKey,
            senderPublic: senderPublic, salt: salt)
        let padded: [UInt8]
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: keys.nonce), ciphertext: record.dropLast(16), tag: record.suffix(16))
            padded = Array(try AES.GCM.open(box, using: SymmetricKey(data: keys.contentEncryptionKey)))
        } catch {
            throw .decryptionFailed("the record does not authenticate with this subscription's keys")
        }
        guard let delimiter = padded.lastIndex(where: { $0 != 0 }), padded[delimiter] == 0x02 else {
            throw .decryptionFailed("the record's padding does not end in the last record's delimiter")
        }
        return Array(padded[..<delimiter])
    }
}

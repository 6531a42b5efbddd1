import Crypto

/// Web Push message encryption (RFC 8291) with the `aes128gcm` content coding (RFC 8188), in one
/// record: the whole payload always fits one 4096-byte record, so a push service never sees a
/// message split across records.
///
/// The body is `salt(16) || rs(4) || idlen(1) || keyid(65) || AES-128-GCM(plaintext || 0x02)`,
/// where `keyid` is the sender's ephemeral public key and the key and nonce come from
///
/// ```
/// ecdh_secret = ECDH(ephemeral private key, ua_public)
/// IKM   = HKDF-SHA256(salt: auth, ikm: ecdh_secret, info: "WebPush: info\0" || ua_public || as_public, 32)
/// CEK   = HKDF-SHA256(salt: salt, ikm: IKM, info: "Content-Encoding: aes128gcm\0", 16)
/// NONCE = HKDF-SHA256(salt: salt, ikm: IKM, info: "Content-Encoding: nonce\0", 12)
/// ```
public enum WebPushEncryptor {
    /// The record size written in the header, and the largest body a push service must accept
    /// (RFC 8291 §4).
    public static let recordSize = 4096
    /// The header: salt (16), rs (4), idlen (1) and the 65-byte uncompressed key.
    public static let headerSize = 16 + 4 + 1 + 65
    /// The most plaintext one record carries: 4096 - 86 (header) - 16 (GCM tag) - 1 (delimiter).
    public static let maxPlaintextBytes = recordSize - headerSize - 16 - 1

    /// The keys RFC 8291 §3.4 and RFC 8188 §2.2 derive for one message.
    struct Keys {
        var ikm: [UInt8]
        var contentEncryptionKey: [UInt8]
        var nonce: [UInt8]
    }

    /// Encrypts a payload for one subscription.
    /// - Parameters:
    ///   - plaintext: At most ``maxPlaintextBytes`` bytes.
    ///   - p256dh: The subscription's public key: an uncompressed P-256 point (65 bytes, `0x04 || x || y`).
    ///   - auth: The subscription's 16-byte authentication secret.
    ///   - salt: 16 random bytes, new for every message; tests pass a fixed one.
    ///   - ephemeralKey: The sender's key pair, new for every message; tests pass a fixed one.
    /// - Returns: The request body: the aes128gcm header followed by the single record.
    /// - Throws: `WebPushError` `payloadTooLarge` (checked first, nothing is truncated),
    ///   `invalidP256DH`, `invalidAuthSecret`, or `encryptionFailed`.
    public static func encrypt(
        _ plaintext: some Collection<UInt8>, p256dh: [UInt8], auth: [UInt8], salt: [UInt8]? = nil,
        ephemeralKey: P256.KeyAgreement.PrivateKey = P256.KeyAgreement.PrivateKey()
    ) throws(WebPushError) -> [UInt8] {
        guard plaintext.count <= maxPlaintextBytes else { throw .payloadTooLarge(size: plaintext.count) }
        guard auth.count == 16 else { throw .invalidAuthSecret() }
        guard p256dh.count == 65, p256dh.first == 0x04,
            let userAgentKey = try? P256.KeyAgreement.PublicKey(x963Representation: p256dh)
        else { throw .invalidP256DH() }
        let salt = salt ?? randomSalt()
        guard salt.count == 16 else { throw .encryptionFailed("the salt must be 16 bytes") }

        let sharedSecret: SharedSecret
        do {
            sharedSecret = try ephemeralKey.sharedSecretFromKeyAgreement(with: userAgentKey)
        } catch {
            throw .encryptionFailed("ECDH: \(error)")
        }
        let senderPublic = Array(ephemeralKey.publicKey.x963Representation)
        let keys = deriveKeys(
            ecdhSecret: sharedSecret.withUnsafeBytes { Array($0) }, auth: auth, userAgentPublic: p256dh,
            senderPublic: senderPublic, salt: salt)

        var record = [UInt8]()
        record.reserveCapacity(plaintext.count + 1)
        record.append(contentsOf: plaintext)
        // The last (and only) record ends with the 0x02 delimiter and no padding (RFC 8188 §2).
        record.append(0x02)
        let sealed: AES.GCM.SealedBox
        do {
            sealed = try AES.GCM.seal(
                record, using: SymmetricKey(data: keys.contentEncryptionKey),
                nonce: try AES.GCM.Nonce(data: keys.nonce))
        } catch {
            throw .encryptionFailed("AES-GCM: \(error)")
        }

        var body = [UInt8]()
        body.reserveCapacity(headerSize + record.count + 16)
        body.append(contentsOf: salt)
        let size = UInt32(recordSize)
        body.append(contentsOf: [
            UInt8(size >> 24), UInt8((size >> 16) & 0xff), UInt8((size >> 8) & 0xff), UInt8(size & 0xff),
        ])
        body.append(UInt8(senderPublic.count))
        body.append(contentsOf: senderPublic)
        body.append(contentsOf: sealed.ciphertext)
        body.append(contentsOf: sealed.tag)
        return body
    }

    /// The key derivation of RFC 8291 §3.3–3.4 and RFC 8188 §2.2, separate so its intermediate
    /// values can be checked against RFC 8291 Appendix A.
    static func deriveKeys(
        ecdhSecret: [UInt8], auth: [UInt8], userAgentPublic: [UInt8], senderPublic: [UInt8], salt: [UInt8]
    ) -> Keys {
        let keyInfo = Array("WebPush: info".utf8) + [0] + userAgentPublic + senderPublic
        let ikm = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: ecdhSecret), salt: auth, info: keyInfo, outputByteCount: 32)
        let ikmBytes = ikm.withUnsafeBytes { Array($0) }
        let cek = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: ikm, salt: salt, info: Array("Content-Encoding: aes128gcm".utf8) + [0],
            outputByteCount: 16)
        let nonce = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: ikm, salt: salt, info: Array("Content-Encoding: nonce".utf8) + [0],
            outputByteCount: 12)
        return Keys(
            ikm: ikmBytes, contentEncryptionKey: cek.withUnsafeBytes { Array($0) },
            nonce: nonce.withUnsafeBytes { Array($0) })
    }

    private static func randomSalt() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}

import Crypto
import Foundation

/// Encrypts push tokens and other secrets at rest (AES-256-GCM) and derives the keyed hash that
/// indexes tokens for uniqueness and look-ups (HMAC-SHA256), both from one 32-byte master key.
public struct TokenCipher: Sendable {
    private let encryptionKey: SymmetricKey
    private let indexKey: SymmetricKey
    private let masterKey: SymmetricKey

    /// The length of a master key in bytes.
    public static let keyLength = 32

    /// Derives the encryption and index keys from a master key with HKDF-SHA256.
    /// - Throws: `HeraldError` when the key is not 32 bytes.
    public init(masterKey: [UInt8]) throws(HeraldError) {
        guard masterKey.count == Self.keyLength else {
            throw HeraldError(
                kind: .internal, code: "invalid_secret_key",
                message: "The secret key must be \(Self.keyLength) bytes (base64 encoded).")
        }
        let master = SymmetricKey(data: masterKey)
        self.masterKey = master
        encryptionKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: master, info: Data("herald token encryption v1".utf8), outputByteCount: 32)
        indexKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: master, info: Data("herald token index v1".utf8), outputByteCount: 32)
    }

    /// A key for another purpose derived from the master key (HKDF-SHA256 with `info`): every node
    /// sharing the master key derives the same one.
    public func derivedKey(info: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: masterKey, info: Data(info.utf8), outputByteCount: 32)
    }

    /// Makes a new random master key.
    public static func generateMasterKey() -> [UInt8] {
        SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
    }

    /// Encrypts bytes; the result is nonce, ciphertext and tag together.
    public func seal(_ plaintext: [UInt8]) throws(HeraldError) -> [UInt8] {
        do {
            guard let combined = try AES.GCM.seal(plaintext, using: encryptionKey).combined else {
                throw HeraldError.internal("Encryption produced no output.")
            }
            return Array(combined)
        } catch {
            throw .internal("Encryption failed.")
        }
    }

    /// Decrypts bytes made by ``seal(_:)``.
    /// - Throws: `HeraldError` with code `secret_key_mismatch` when the bytes were sealed with another key.
    public func open(_ sealed: [UInt8]) throws(HeraldError) -> [UInt8] {
        do {
            return Array(try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: encryptionKey))
        } catch {
            throw HeraldError(
                kind: .internal, code: "secret_key_mismatch",
                message: "Stored data cannot be decrypted with the configured secret key.")
        }
    }

    /// The keyed hash of a token's identity, scoped by service so equal strings of two services differ.
    public func index(_ identity: String, service: PushService) -> [UInt8] {
        var hmac = HMAC<SHA256>(key: indexKey)
        hmac.update(data: Array(service.rawValue.utf8) + [0])
        hmac.update(data: Array(identity.utf8))
        return Array(hmac.finalize())
    }
}

/// Short, non-reversible fingerprints of secrets for logs.
public enum SecretFingerprint {
    /// The first 12 hex characters of the SHA-256 of the secret: enough to correlate log lines,
    /// useless for recovering the secret.
    public static func of(_ secret: String) -> String {
        SHA256.hash(data: Array(secret.utf8)).prefix(6).map { String(format: "%02x", $0) }.joined()
    }
}

/// Constant-time comparison of secrets (API keys).
public enum SecretComparison {
    /// Whether two secrets are equal, taking the same time wherever they differ: both are hashed and
    /// the digests compared with swift-crypto's constant-time digest equality.
    public static func equal(_ lhs: String, _ rhs: String) -> Bool {
        SHA256.hash(data: Array(lhs.utf8)) == SHA256.hash(data: Array(rhs.utf8))
    }
}

/// A push token as every store keeps it: encrypted, and indexed by a keyed hash of its identity.
public struct SealedToken: Sendable, Equatable {
    /// The keyed hash of the token's identity within its service: what uniqueness and look-ups use.
    public var index: [UInt8]
    /// The token's storage bytes, encrypted (nonce, ciphertext and tag).
    public var sealed: [UInt8]

    /// Creates a sealed token from its stored parts.
    public init(index: [UInt8], sealed: [UInt8]) {
        self.index = index
        self.sealed = sealed
    }
}

extension TokenCipher {
    /// Seals a push token of a service for storage: its index and its encrypted bytes.
    /// - Throws: `HeraldError` when encryption fails.
    public func seal(_ token: PushToken, service: PushService) throws(HeraldError) -> SealedToken {
        SealedToken(index: index(token.identity, service: service), sealed: try seal(token.storageBytes))
    }

    /// Opens a token sealed by ``seal(_:service:)``.
    /// - Throws: `HeraldError` `secret_key_mismatch` for another key's bytes; decoding errors for bytes
    ///   that are not a token of the service.
    public func openToken(_ sealed: [UInt8], service: PushService) throws(HeraldError) -> PushToken {
        try PushToken(storageBytes: try open(sealed), service: service)
    }
}

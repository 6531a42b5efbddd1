import Foundation
import HeraldAPI
import HeraldCore
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Finds the master key for secrets at rest: `secret_key` from configuration, else the key file
/// beside the database, else a new key written to that file with mode 0600.
public enum SecretKeyLoader {
    /// Loads or creates the key.
    /// - Throws: `HeraldError` `invalid_secret_key` when a configured or stored key is malformed, or
    ///   the key file cannot be written.
    public static func cipher(for configuration: HeraldConfiguration, logger: Logger) throws -> TokenCipher {
        if let configured = configuration.secretKey {
            return try TokenCipher(masterKey: try decode(configured, source: "secret_key"))
        }
        guard let path = configuration.resolvedSecretKeyFile else {
            logger.warning("no secret_key configured and no key file for this database: using a temporary key")
            return try TokenCipher(masterKey: TokenCipher.generateMasterKey())
        }
        if FileManager.default.fileExists(atPath: path) {
            let text = try String(contentsOfFile: path, encoding: .utf8)
            return try TokenCipher(masterKey: try decode(text, source: path))
        }
        let key = TokenCipher.generateMasterKey()
        let text = Data(key).base64EncodedString() + "\n"
        guard createDurably(path, contents: Array(text.utf8)) else {
            throw HeraldError(
                kind: .internal, code: "invalid_secret_key", message: "Cannot write the secret key file \(path).")
        }
        logger.warning(
            "generated a new secret key for tokens at rest; back it up, or set HERALD_SECRET_KEY",
            metadata: ["herald.secret_key_file": "\(path)"])
        return try TokenCipher(masterKey: key)
    }

    /// Creates the file at `path` (mode 0600, never over an existing one) holding `contents`, and makes it
    /// durable before anything is encrypted with the key: the file is synced, then the directory that names
    /// it, so a power loss right after the first start cannot leave an empty key file (or none) beside a
    /// database whose tokens it encrypted.
    private static func createDurably(_ path: String, contents: [UInt8]) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        var written = 0
        while written < contents.count {
            let count = contents[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else {
                close(descriptor)
                return false
            }
            written += count
        }
        guard fsync(descriptor) == 0, close(descriptor) == 0 else { return false }
        let parent = (path as NSString).deletingLastPathComponent
        let directory = open(parent.isEmpty ? "." : parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { return false }
        defer { close(directory) }
        return fsync(directory) == 0
    }

    private static func decode(_ text: String, source: String) throws -> [UInt8] {
        guard let data = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)),
            data.count == TokenCipher.keyLength
        else {
            throw HeraldError(
                kind: .internal, code: "invalid_secret_key",
                message: "\(source) must hold \(TokenCipher.keyLength) bytes, base64 encoded (openssl rand -base64 32)."
            )
        }
        return Array(data)
    }
}

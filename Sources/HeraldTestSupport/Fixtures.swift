import Crypto
import Foundation
import HeraldCore
import Synchronization

/// Well-formed push credentials and tokens for tests, made fresh in memory.
public enum Fixtures {
    /// A random APNs device token: 64 hex characters (32 bytes), as iOS hands it out.
    public static func apnsToken() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    /// A random FCM registration token shaped like Firebase's (`<instance id>:APA91b…`).
    public static func fcmToken() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let part = { (count: Int) in String((0..<count).map { _ in alphabet.randomElement()! }) }
        return "\(part(22)):APA91b\(part(134))"
    }

    /// A browser-like Web Push subscription with a real P-256 public key and a 16-byte auth secret.
    public static func webPushSubscription(endpoint: String? = nil) -> WebPushSubscription {
        let key = P256.KeyAgreement.PrivateKey().publicKey.x963Representation
        let auth = (0..<16).map { _ in UInt8.random(in: 0...255) }
        return WebPushSubscription(
            endpoint: endpoint ?? "https://push.example.net/wpush/v2/\(UUID().uuidString.lowercased())",
            p256dh: Base64URL.encode(Array(key)), auth: Base64URL.encode(auth))
    }

    /// A fresh 32-byte master key's cipher.
    public static func cipher() -> TokenCipher {
        // A generated key always has the right length.
        try! TokenCipher(masterKey: TokenCipher.generateMasterKey())
    }
}

/// A directory under the system's temporary directory, removed by ``remove()`` or, for those a
/// harness or suite holds for its whole life, when the test process exits.
public struct TemporaryDirectory: Sendable {
    /// The directory's path.
    public let path: String

    /// Creates a new empty directory.
    public init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("herald-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        Self.created.withLock { paths in
            if !Self.exitHookInstalled.exchange(true, ordering: .relaxed) {
                atexit { TemporaryDirectory.removeAllCreated() }
                // Files the tests write hold keys and secrets, as an operator's do: owner-only, as
                // `herald serve` requires of a config file with secrets.
                umask(0o077)
            }
            paths.insert(path)
        }
    }

    /// A path inside the directory.
    public func file(_ name: String) -> String { path + "/" + name }

    /// Deletes the directory and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
        _ = Self.created.withLock { $0.remove(path) }
    }

    /// Directories made and not removed yet: deleted at exit, so runs leave nothing behind.
    private static let created = Mutex<Set<String>>([])
    private static let exitHookInstalled = Atomic<Bool>(false)

    private static func removeAllCreated() {
        for path in created.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
    }
}

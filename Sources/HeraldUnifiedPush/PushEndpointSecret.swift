import Crypto
import Foundation
import HeraldCore

/// The secret of a push endpoint's URL: 32 random bytes (256 bits) in base64url, and the digest
/// under which the store keeps its endpoint.
public struct PushEndpointSecret: Sendable, Equatable {
    /// The URL's last segment, 43 characters of base64url.
    public let text: String

    /// A new random secret.
    public init() {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        text = Base64URL.encode(bytes)
    }

    /// A secret read from a URL; nil when it cannot be one (its shape is checked, not its existence).
    public init?(_ text: String) {
        guard text.utf8.count == 43,
            text.utf8.allSatisfy({ $0.isASCIIAlphanumeric || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") })
        else { return nil }
        self.text = text
    }

    /// The SHA-256 digest of the secret, in lower-case hex: the store's key.
    public var digest: String {
        SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// A fingerprint for logs: never the whole secret.
    public var fingerprint: String { String(digest.prefix(12)) }
}

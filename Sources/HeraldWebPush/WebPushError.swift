/// Why the Web Push client refused to send something, before a byte went out, or could not be
/// configured (push services' own answers are ``WebPushResponse``s with a ``DeliveryOutcome``, not
/// errors).
public struct WebPushError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable code; compare with the static members (`error.code == .payloadTooLarge`).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String {
            case invalidEndpoint = "invalid_endpoint"
            case invalidP256DH = "invalid_p256dh"
            case invalidAuthSecret = "invalid_auth"
            case payloadTooLarge = "payload_too_large"
            case invalidTopic = "invalid_topic"
            case invalidVAPIDKey = "invalid_vapid_key"
            case invalidSubject = "invalid_vapid_subject"
            case encryptionFailed = "encryption_failed"
            case decryptionFailed = "decryption_failed"
        }

        private let base: Base

        /// The subscription's endpoint is not an absolute `https` URL with a host.
        public static let invalidEndpoint = Code(base: .invalidEndpoint)
        /// The subscription's `p256dh` is not a base64url uncompressed P-256 point.
        public static let invalidP256DH = Code(base: .invalidP256DH)
        /// The subscription's `auth` is not 16 bytes of base64url (RFC 8291 §3.2).
        public static let invalidAuthSecret = Code(base: .invalidAuthSecret)
        /// The payload is over the 3993 bytes one 4096-byte aes128gcm record carries (RFC 8291 §4).
        public static let payloadTooLarge = Code(base: .payloadTooLarge)
        /// The topic is over 32 characters or not base64url (RFC 8030 §5.4).
        public static let invalidTopic = Code(base: .invalidTopic)
        /// The VAPID key is not a P-256 private key.
        public static let invalidVAPIDKey = Code(base: .invalidVAPIDKey)
        /// The VAPID subject is not a `mailto:` or `https:` URI (RFC 8292 §2.1).
        public static let invalidSubject = Code(base: .invalidSubject)
        /// The cryptographic library failed while encrypting (never expected with valid keys).
        public static let encryptionFailed = Code(base: .encryptionFailed)
        /// A received message does not decrypt with the subscription's keys (``WebPushDecryptor``).
        public static let decryptionFailed = Code(base: .decryptionFailed)

        /// The code as snake_case text.
        public var description: String { base.rawValue }
    }

    /// What went wrong.
    public let code: Code
    /// A sentence for people.
    public let message: String
    /// The part of the request or configuration at fault (`endpoint`, `p256dh`, `auth`, `payload`,
    /// `topic`, `vapid_key`, `subject`).
    public let field: String?

    /// See `CustomStringConvertible`.
    public var description: String { "WebPushError(\(code)): \(message)" }

    static func invalidEndpoint(_ detail: String) -> Self {
        .init(code: .invalidEndpoint, message: "The subscription endpoint \(detail).", field: "endpoint")
    }
    static func invalidP256DH() -> Self {
        .init(
            code: .invalidP256DH,
            message: "The subscription's p256dh key is not a base64url uncompressed P-256 public key (65 bytes).",
            field: "p256dh")
    }
    static func invalidAuthSecret() -> Self {
        .init(
            code: .invalidAuthSecret, message: "The subscription's auth secret is not 16 bytes of base64url.",
            field: "auth")
    }
    static func payloadTooLarge(size: Int) -> Self {
        .init(
            code: .payloadTooLarge,
            message:
                "The Web Push payload is \(size) bytes; one aes128gcm record carries at most "
                + "\(WebPushEncryptor.maxPlaintextBytes).",
            field: "payload")
    }
    static func invalidTopic() -> Self {
        .init(
            code: .invalidTopic,
            message: "A Web Push topic is at most 32 characters of the base64url alphabet (A-Z a-z 0-9 - _).",
            field: "topic")
    }
    static func invalidVAPIDKey(_ detail: String) -> Self {
        .init(code: .invalidVAPIDKey, message: "The VAPID key \(detail).", field: "vapid_key")
    }
    static func invalidSubject() -> Self {
        .init(
            code: .invalidSubject,
            message: "The VAPID subject must be a mailto: address or an https: URL.", field: "subject")
    }
    static func encryptionFailed(_ detail: String) -> Self {
        .init(code: .encryptionFailed, message: "Encrypting the Web Push payload failed: \(detail).", field: nil)
    }
    static func decryptionFailed(_ detail: String) -> Self {
        .init(code: .decryptionFailed, message: "The push message does not decrypt: \(detail).", field: nil)
    }
}

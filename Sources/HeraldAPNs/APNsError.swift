/// Why the APNs client refused to send something, before a byte went out (APNs' own answers are
/// ``APNsReason``s in an ``APNsResponse``, not errors).
public struct APNsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable code; compare with the static members (`error.code == .payloadTooLarge`).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String {
            case invalidToken = "invalid_token"
            case emptyPayload = "payload_empty"
            case payloadTooLarge = "payload_too_large"
            case invalidCollapseID = "invalid_collapse_id"
            case invalidSigningKey = "invalid_apns_key"
        }

        private let base: Base

        /// The device token is not APNs hex of a valid length.
        public static let invalidToken = Code(base: .invalidToken)
        /// The payload is empty.
        public static let emptyPayload = Code(base: .emptyPayload)
        /// The payload is over the push type's limit (4096 bytes, 5120 for VoIP).
        public static let payloadTooLarge = Code(base: .payloadTooLarge)
        /// `apns-collapse-id` is over 64 bytes.
        public static let invalidCollapseID = Code(base: .invalidCollapseID)
        /// The `.p8` key is not a P-256 private key.
        public static let invalidSigningKey = Code(base: .invalidSigningKey)

        /// The code as snake_case text.
        public var description: String { base.rawValue }
    }

    /// What went wrong.
    public let code: Code
    /// A sentence for people.
    public let message: String
    /// The part of the request at fault (`token`, `payload`, `collapse_id`).
    public let field: String?

    public var description: String { "APNsError(\(code)): \(message)" }

    static func invalidToken(_ message: String) -> Self {
        .init(code: .invalidToken, message: message, field: "token")
    }
    static func emptyPayload() -> Self {
        .init(code: .emptyPayload, message: "The APNs payload is empty.", field: "payload")
    }
    static func payloadTooLarge(size: Int, pushType: APNsPushType) -> Self {
        .init(
            code: .payloadTooLarge,
            message:
                "The APNs payload is \(size) bytes; \(pushType.rawValue) pushes take at most \(pushType.maxPayloadBytes).",
            field: "payload")
    }
    static func invalidCollapseID() -> Self {
        .init(code: .invalidCollapseID, message: "apns-collapse-id is at most 64 bytes.", field: "collapse_id")
    }
    static func invalidSigningKey() -> Self {
        .init(code: .invalidSigningKey, message: "The APNs key is not a P-256 private key (.p8).", field: "key")
    }
}

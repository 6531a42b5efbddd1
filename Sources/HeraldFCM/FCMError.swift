/// Why the FCM client refused to send something or could not set itself up (FCM's own answers are
/// errors in an ``FCMResponse``, not thrown).
public struct FCMError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable code; compare with the static members (`error.code == .messageTooLarge`).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String {
            case invalidToken = "invalid_token"
            case messageTooLarge = "payload_too_large"
            case invalidServiceAccount = "invalid_service_account"
            case authorizationFailed = "fcm_auth_failed"
        }

        private let base: Base

        /// The registration token is not 1 to 4096 printable ASCII characters.
        public static let invalidToken = Code(base: .invalidToken)
        /// The message is over FCM's 4096-byte limit.
        public static let messageTooLarge = Code(base: .messageTooLarge)
        /// The service account JSON lacks a field.
        public static let invalidServiceAccount = Code(base: .invalidServiceAccount)
        /// No OAuth access token could be had from the token endpoint.
        public static let authorizationFailed = Code(base: .authorizationFailed)

        /// The code as snake_case text.
        public var description: String { base.rawValue }
    }

    /// What went wrong.
    public let code: Code
    /// A sentence for people.
    public let message: String
    /// The part at fault (`token`, `payload`, `service_account.<field>`), when there is one.
    public let field: String?

    public var description: String { "FCMError(\(code)): \(message)" }

    static func invalidToken(_ message: String) -> Self {
        .init(code: .invalidToken, message: message, field: "token")
    }
    static func messageTooLarge(size: Int) -> Self {
        .init(
            code: .messageTooLarge,
            message: "The FCM message is \(size) bytes; FCM takes at most \(FCMMessage.maxBytes).",
            field: "payload")
    }
    static func invalidServiceAccount(field: String?) -> Self {
        guard let field else {
            return .init(
                code: .invalidServiceAccount, message: "The service account file is not a JSON object.",
                field: "service_account")
        }
        return .init(
            code: .invalidServiceAccount, message: "The service account JSON has no '\(field)'.",
            field: "service_account.\(field)")
    }
    static func authorizationFailed(_ detail: String) -> Self {
        .init(code: .authorizationFailed, message: "FCM authorization failed: \(detail).", field: nil)
    }
}

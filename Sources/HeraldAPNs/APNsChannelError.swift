/// Why a channel management request or a broadcast failed: refused before a byte went out, refused by APNs (with its
/// status and reason), or left without an answer.
public struct APNsChannelError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable code; compare with the static members (`error.code == .rejected`).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String {
            case invalidRequest = "invalid_request"
            case rejected = "apns_rejected"
            case noAnswer = "apns_no_answer"
            case unexpectedAnswer = "apns_unexpected_answer"
            case signingFailed = "provider_token_failed"
        }

        private let base: Base

        /// The request is not one APNs could accept (an empty channel ID, a payload over 5,120 bytes, …); nothing
        /// was sent.
        public static let invalidRequest = Code(base: .invalidRequest)
        /// APNs answered with an error: ``APNsChannelError/status`` and ``APNsChannelError/reason`` say which.
        public static let rejected = Code(base: .rejected)
        /// No answer arrived: the connection failed or the request timed out. The request may have been carried
        /// out.
        public static let noAnswer = Code(base: .noAnswer)
        /// APNs answered with a success the client cannot read (no `apns-channel-id`, a body that is not the
        /// documented JSON, an unexpected status).
        public static let unexpectedAnswer = Code(base: .unexpectedAnswer)
        /// The provider token could not be signed; nothing was sent.
        public static let signingFailed = Code(base: .signingFailed)

        /// The code as snake_case text.
        public var description: String { base.rawValue }
    }

    /// What went wrong.
    public let code: Code
    /// The HTTP status APNs answered with; 0 when it did not answer.
    public let status: Int
    /// APNs' `reason`, when it gave one.
    public let reason: APNsChannelReason?
    /// The `apns-request-id` of the answer, to quote to Apple.
    public let requestID: String?
    /// A sentence for people.
    public let message: String

    public var description: String {
        "APNsChannelError(\(code)): \(message)"
    }

    static func invalidRequest(_ message: String) -> Self {
        .init(code: .invalidRequest, status: 0, reason: nil, requestID: nil, message: message)
    }

    static func rejected(status: Int, reason: APNsChannelReason?, requestID: String?) -> Self {
        .init(
            code: .rejected, status: status, reason: reason, requestID: requestID,
            message: "APNs answered \(status) \(reason?.wire ?? "without a reason").")
    }

    static func noAnswer(_ cause: any Error) -> Self {
        .init(code: .noAnswer, status: 0, reason: nil, requestID: nil, message: "No answer from APNs: \(cause)")
    }

    static func unexpectedAnswer(status: Int, requestID: String?, _ message: String) -> Self {
        .init(code: .unexpectedAnswer, status: status, reason: nil, requestID: requestID, message: message)
    }

    static func signingFailed(_ cause: any Error) -> Self {
        .init(
            code: .signingFailed, status: 0, reason: nil, requestID: nil,
            message: "The provider token could not be signed: \(cause)")
    }
}

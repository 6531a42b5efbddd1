import Foundation

/// Why an SNS call failed: SNS's own error response (with AWS's code kept verbatim), no answer at
/// all, an answer that is not SNS's, or a request the client refused to send.
/// ``SNSResponseClassifier`` maps each to one delivery outcome.
public struct SNSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable code; compare with the static members (`error.code == .service`).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String {
            case service = "sns_error"
            case unreachable = "sns_unreachable"
            case invalidResponse = "sns_invalid_response"
            case messageTooLarge = "payload_too_large"
            case missingCredentials = "sns_missing_credentials"
            case invalidEndpointURL = "sns_invalid_endpoint"
        }

        private let base: Base

        /// SNS answered with an `ErrorResponse`; `awsCode` holds its code.
        public static let service = Code(base: .service)
        /// No answer: the connection failed or timed out.
        public static let unreachable = Code(base: .unreachable)
        /// An answer that is not SNS's XML (a proxy's error page, a truncated body).
        public static let invalidResponse = Code(base: .invalidResponse)
        /// The message is over SNS's 256 KB limit; nothing was sent.
        public static let messageTooLarge = Code(base: .messageTooLarge)
        /// No credentials were configured and the `AWS_*` variables are not set.
        public static let missingCredentials = Code(base: .missingCredentials)
        /// The configured endpoint is not an `http` or `https` URL with a host.
        public static let invalidEndpointURL = Code(base: .invalidEndpointURL)

        /// The code as snake_case text.
        public var description: String { base.rawValue }
    }

    /// What went wrong.
    public let code: Code
    /// AWS's error code, verbatim (`InvalidParameter`, `EndpointDisabled`, `Throttling`,
    /// `SignatureDoesNotMatch`…), when SNS answered with one.
    public let awsCode: String?
    /// AWS's error type: `Sender` (the request is at fault) or `Receiver` (SNS is).
    public let type: String?
    /// AWS's message, or a sentence for people.
    public let message: String
    /// The HTTP status; 0 when no answer arrived.
    public let status: Int
    /// SNS's request id, for AWS support.
    public let requestID: String?

    /// Creates an error; the client makes them, tests and transports may too.
    public init(
        code: Code, awsCode: String? = nil, type: String? = nil, message: String, status: Int = 0,
        requestID: String? = nil
    ) {
        self.code = code
        self.awsCode = awsCode
        self.type = type
        self.message = message
        self.status = status
        self.requestID = requestID
    }

    /// The code, AWS's code when there is one, and the message.
    public var description: String {
        "SNSError(\(code)\(awsCode.map { ", \($0)" } ?? "")\(status == 0 ? "" : ", HTTP \(status)")): \(message)"
    }

    /// The ARN of the endpoint that already holds the token, when `CreatePlatformEndpoint` refused
    /// to create a second one with other attributes (`InvalidParameter`, "Invalid parameter: Token
    /// Reason: Endpoint arn:aws:sns:… already exists with the same Token, but different
    /// attributes."). Adopt it, then set its attributes with `SetEndpointAttributes`.
    public var existingEndpointARN: String? {
        guard code == .service, awsCode == "InvalidParameter" else { return nil }
        return Self.existingEndpointARN(inMessage: message)
    }

    /// The endpoint ARN named by an "already exists with the same Token" message; nil for any other.
    public static func existingEndpointARN(inMessage message: String) -> String? {
        guard let marker = message.range(of: "Endpoint arn:") else { return nil }
        let start = message.index(marker.upperBound, offsetBy: -4)
        let rest = message[start...]
        let arn = rest.prefix { !$0.isWhitespace }
        guard !arn.isEmpty,
            rest.dropFirst(arn.count).lowercased().hasPrefix(" already exists with the same token")
        else { return nil }
        return String(arn)
    }

    static func unreachable(_ detail: String) -> Self {
        .init(code: .unreachable, message: "SNS could not be reached: \(detail).")
    }
    static func invalidResponse(status: Int, detail: String) -> Self {
        .init(code: .invalidResponse, message: "SNS answered HTTP \(status) with \(detail).", status: status)
    }
    static func messageTooLarge(size: Int) -> Self {
        .init(
            code: .messageTooLarge,
            message: "The SNS message is \(size) bytes; SNS takes at most \(SNSMessage.maxBytes).")
    }
    static func missingCredentials() -> Self {
        .init(
            code: .missingCredentials,
            message: "No AWS credentials: configure them or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.")
    }
    static func invalidEndpointURL(_ url: String) -> Self {
        .init(code: .invalidEndpointURL, message: "The SNS endpoint '\(url)' is not an http(s) URL with a host.")
    }
}

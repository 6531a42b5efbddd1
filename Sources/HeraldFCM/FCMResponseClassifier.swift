import HeraldCore

/// Maps an FCM answer (HTTP status and `google.rpc.Status` body with its `FcmError` detail) to one
/// ``DeliveryOutcome``.
public enum FCMResponseClassifier {
    /// The parts of an error body Herald reads.
    public struct ErrorBody: Sendable, Equatable {
        /// `error.status` (`INVALID_ARGUMENT`, `NOT_FOUND`, `UNAVAILABLE`…).
        public var status: String?
        /// The `FcmError` detail's `errorCode` (`UNREGISTERED`, `SENDER_ID_MISMATCH`…).
        public var errorCode: String?
        /// `BadRequest` field violations' field names.
        public var fieldViolations: [String]
        public var message: String?

        /// Reads a `google.rpc.Status` error body; nil when it is not one.
        public init?(json: JSONValue) {
            guard case .object(let error)? = json.objectValue?["error"] else { return nil }
            if case .string(let value)? = error["status"] { status = value }
            if case .string(let value)? = error["message"] { message = value }
            fieldViolations = []
            if case .array(let details)? = error["details"] {
                for case .object(let detail) in details {
                    if case .string(let code)? = detail["errorCode"] { errorCode = code }
                    if case .array(let violations)? = detail["fieldViolations"] {
                        for case .object(let violation) in violations {
                            if case .string(let field)? = violation["field"] { fieldViolations.append(field) }
                        }
                    }
                }
            }
        }
    }

    /// The outcome of a response.
    /// - Parameter retryAfter: the `Retry-After` header in seconds, when present.
    public static func outcome(status: Int, name: String?, error: ErrorBody?, retryAfter: Int?) -> DeliveryOutcome {
        if status == 200 { return .delivered(providerID: name) }
        let code = error?.errorCode ?? error?.status ?? "HTTP \(status)"
        let after = retryAfter.map { Duration.seconds($0) }
        switch code {
        case "UNREGISTERED":
            return .invalidToken(reason: code, since: nil)
        case "INVALID_ARGUMENT" where error?.fieldViolations.contains("message.token") == true:
            // A token FCM cannot parse: rejected, not gone (UNREGISTERED is the token that went).
            return .rejectedToken(reason: code)
        case "QUOTA_EXCEEDED", "UNAVAILABLE", "INTERNAL", "RESOURCE_EXHAUSTED":
            return .retry(reason: code, after: after)
        case "SENDER_ID_MISMATCH", "THIRD_PARTY_AUTH_ERROR", "PERMISSION_DENIED", "UNAUTHENTICATED":
            return .configurationFailure(reason: code)
        default:
            if status == 429 || status >= 500 { return .retry(reason: code, after: after) }
            return .rejected(reason: code)
        }
    }
}

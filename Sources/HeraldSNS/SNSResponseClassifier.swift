import HeraldCore

/// Maps what SNS made of a `Publish` (a message id, or an ``SNSError`` with AWS's code) to one
/// ``DeliveryOutcome``. SNS answers for itself, not for APNs or FCM: it accepts a publish and
/// delivers later, disabling the endpoint (`Enabled=false`) when the provider refuses the token, so
/// the next publish to it answers `EndpointDisabled`.
public enum SNSResponseClassifier {
    /// Codes for a request SNS or AWS could not handle now: throttling, and AWS's 5xx codes.
    public static let retryCodes: Set<String> = [
        "Throttling", "ThrottlingException", "Throttled", "RequestLimitExceeded", "TooManyRequestsException",
        "KMSThrottling", "InternalError", "InternalFailure", "ServiceUnavailable",
    ]

    /// Codes that say Herald's AWS credentials, their permissions or the platform application are
    /// wrong: nothing will go out until an operator fixes them.
    public static let configurationCodes: Set<String> = [
        "InvalidClientTokenId", "SignatureDoesNotMatch", "AuthorizationError", "AccessDenied",
        "AccessDeniedException", "IncompleteSignature", "MissingAuthenticationToken", "ExpiredToken",
        "UnrecognizedClientException", "InvalidSecurity", "OptInRequired", "PlatformApplicationDisabled",
        "KMSAccessDenied", "KMSDisabled", "KMSInvalidState", "KMSNotFound", "KMSOptInRequired",
    ]

    /// The outcome of a publish: its message id, or the error it failed with.
    public static func outcome(_ result: Result<String, SNSError>) -> DeliveryOutcome {
        switch result {
        case .success(let messageID): .delivered(providerID: messageID)
        case .failure(let error): outcome(for: error)
        }
    }

    /// The outcome of a failed publish.
    public static func outcome(for error: SNSError) -> DeliveryOutcome {
        switch error.code {
        case .service: outcome(status: error.status, awsCode: error.awsCode, message: error.message)
        case .unreachable: .retry(reason: "\(error.code): \(error.message)", after: nil)
        case .missingCredentials, .invalidEndpointURL: .configurationFailure(reason: error.code.description)
        case .invalidResponse where error.status == 429 || error.status >= 500:
            .retry(reason: "HTTP \(error.status)", after: nil)
        default: .rejected(reason: error.code.description)
        }
    }

    /// The outcome of an SNS error response.
    /// - Parameters:
    ///   - status: the HTTP status.
    ///   - awsCode: AWS's error code, verbatim.
    ///   - message: AWS's message; `InvalidParameter` is an invalid token only when it names the
    ///     token or a missing endpoint.
    public static func outcome(status: Int, awsCode: String?, message: String?) -> DeliveryOutcome {
        guard let code = awsCode else {
            if status == 429 || status >= 500 || status == 0 { return .retry(reason: "HTTP \(status)", after: nil) }
            return .rejected(reason: "HTTP \(status)")
        }
        switch code {
        case "EndpointDisabled", "NotFound":
            return .invalidToken(reason: code, since: nil)
        case "InvalidParameter" where namesTheToken(message ?? ""):
            return .invalidToken(reason: code, since: nil)
        case _ where retryCodes.contains(code):
            return .retry(reason: code, after: nil)
        case _ where configurationCodes.contains(code):
            return .configurationFailure(reason: code)
        default:
            if status == 429 || status >= 500 { return .retry(reason: code, after: nil) }
            return .rejected(reason: code)
        }
    }

    /// Whether an `InvalidParameter` message is about the device: the token itself ("Invalid
    /// parameter: Token Reason: …"), or an endpoint that no longer exists ("Invalid parameter:
    /// TargetArn Reason: No endpoint found for the target arn specified"). An existing endpoint
    /// holding the token ("already exists with the same Token") is not: that is a registration
    /// conflict, resolved with ``SNSError/existingEndpointARN``.
    static func namesTheToken(_ message: String) -> Bool {
        if SNSError.existingEndpointARN(inMessage: message) != nil { return false }
        let lowered = message.lowercased()
        return lowered.contains("parameter: token") || lowered.contains("no endpoint found")
            || lowered.contains("endpoint does not exist")
    }
}

import HTTPTypes
import HeraldAPI
import HeraldCore
import Hummingbird
import Logging

/// The error bodies of the AOVIS register route, exactly as §4 of the guide lists them:
/// `401 {"error":"invalid_session"}`, `400 {"error":"invalid_body"}`, `500 {"error":"internal_error"}`;
/// and, in the same shape, Herald's limits: `429 {"error":"rate_limited"}` (with `Retry-After`).
package enum AOVISFailure: Error, Equatable {
    /// The app token is missing or does not verify (or is not a user's).
    case invalidSession
    /// A malformed body, or a `deviceId` the user does not actively own.
    case invalidBody
    /// Too many registrations, or too many refused credentials from the caller's address.
    case rateLimited
    /// Anything unexpected.
    case internalError

    /// Classifies any error a route step throws: Herald's own by kind, anything else is internal.
    package init(_ error: any Error) {
        switch error {
        case let failure as AOVISFailure: self = failure
        case let error as HeraldError:
            switch error.kind {
            case .unauthorized: self = .invalidSession
            case .badRequest, .payloadTooLarge: self = .invalidBody
            case .tooManyRequests: self = .rateLimited
            default: self = .internalError
            }
        default: self = .internalError
        }
    }

    package var status: HTTPResponse.Status {
        switch self {
        case .invalidSession: .unauthorized
        case .invalidBody: .badRequest
        case .rateLimited: .tooManyRequests
        case .internalError: .internalServerError
        }
    }

    package var code: String {
        switch self {
        case .invalidSession: "invalid_session"
        case .invalidBody: "invalid_body"
        case .rateLimited: "rate_limited"
        case .internalError: "internal_error"
        }
    }

    /// The documented response.
    package var response: Response {
        .json(.object(["error": .string(code)]), status: status)
    }

    /// The documented response for `error`, logged without detail that could carry a secret.
    package static func response(for error: any Error, logger: Logger) -> Response {
        let failure = AOVISFailure(error)
        var metadata: Logger.Metadata = ["herald.error": "\(failure.code)"]
        if let error = error as? HeraldError {
            metadata["herald.cause"] = "\(error.code)"
            metadata["herald.field"] = "\(error.field ?? "")"
        } else if !(error is AOVISFailure) {
            metadata["herald.cause"] = "\(type(of: error))"
        }
        if failure == .internalError {
            logger.error("aovis register failed", metadata: metadata)
        } else {
            logger.info("aovis register refused", metadata: metadata)
        }
        return failure.response
    }
}

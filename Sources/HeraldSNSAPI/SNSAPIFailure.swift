import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldSigV4
import Hummingbird

/// An error as SNS answers it: `<ErrorResponse><Error><Type/><Code/><Message/></Error><RequestId/>`
/// with SNS's code and status.
package struct SNSAPIFailure: Error, Equatable {
    /// `Sender` (the caller's fault) or `Receiver`.
    package var type: String
    /// SNS's error code (`InvalidParameter`, `NotFound`).
    package var code: String
    package var status: HTTPResponse.Status
    package var message: String

    package static func invalidParameter(_ message: String) -> Self {
        .init(type: "Sender", code: "InvalidParameter", status: .badRequest, message: message)
    }
    package static func notFound(_ message: String) -> Self {
        .init(type: "Sender", code: "NotFound", status: .notFound, message: message)
    }
    package static func authorization(_ message: String) -> Self {
        .init(type: "Sender", code: "AuthorizationError", status: .forbidden, message: message)
    }
    /// An access key no app has, as AWS answers it.
    package static func invalidClientTokenID() -> Self {
        .init(
            type: "Sender", code: "InvalidClientTokenId", status: .forbidden,
            message: "The security token included in the request is invalid.")
    }
    package static func endpointDisabled() -> Self {
        .init(type: "Sender", code: "EndpointDisabled", status: .badRequest, message: "Endpoint is disabled")
    }
    package static func invalidAction(_ action: String?) -> Self {
        .init(
            type: "Sender", code: "InvalidAction", status: .badRequest,
            message: action.map { "Could not find operation \($0) for version \(SNSAPIRoutes.version)" }
                ?? "The action or operation requested is invalid. Verify that the action is typed correctly.")
    }
    package static func internalError() -> Self {
        .init(type: "Receiver", code: "InternalError", status: .internalServerError, message: "Internal Error")
    }

    /// A refused signature, with the code and status AWS answers.
    package init(_ error: SigV4Error) {
        self.init(
            type: "Sender", code: error.awsCode, status: HTTPResponse.Status(code: error.status),
            message: error.message)
    }

    package init(type: String, code: String, status: HTTPResponse.Status, message: String) {
        self.type = type
        self.code = code
        self.status = status
        self.message = message
    }

    /// Classifies what an action threw: SNS's own failures as they are, Herald's by kind (the
    /// engine's validation of a payload is an invalid parameter), anything else internal.
    package init(_ error: any Error) {
        if let failure = error as? SNSAPIFailure {
            self = failure
            return
        }
        if let error = error as? SigV4Error {
            self.init(error)
            return
        }
        guard let error = HeraldError.classify(error) else {
            self = .internalError()
            return
        }
        switch error.kind {
        case .badRequest, .conflict:
            self = .invalidParameter("Invalid parameter: \(error.field ?? "Message") Reason: \(error.message)")
        case .payloadTooLarge:
            self = .invalidParameter("Invalid parameter: Message too long")
        case .notFound: self = .notFound("\(error.message)")
        case .tooManyRequests:
            self.init(type: "Sender", code: "Throttled", status: .tooManyRequests, message: error.message)
        case .unavailable:
            self.init(type: "Receiver", code: "ServiceUnavailable", status: .serviceUnavailable, message: error.message)
        default: self = .internalError()
        }
    }

    /// The error body.
    package func response(requestID: String) -> Response {
        let xml =
            "<ErrorResponse xmlns=\"\(SNSAPIRoutes.namespace)\"><Error><Type>\(type)</Type>"
            + "<Code>\(SNSXML.escape(code))</Code><Message>\(SNSXML.escape(message))</Message></Error>"
            + "<RequestId>\(requestID)</RequestId></ErrorResponse>"
        return SNSXML.response(xml, status: status, requestID: requestID)
    }
}

import HTTPTypes
import HeraldAPI
import HeraldCore

/// A LeanCloud error answer: `{"code": <int>, "error": "<message>"}` with LeanCloud's code and
/// HTTP status (its REST API's error code table).
package struct LeanCloudFailure: Error, Sendable, Equatable {
    package var status: HTTPResponse.Status
    /// LeanCloud's error code.
    package var code: Int
    package var message: String
    /// Seconds before a `429`'s request may succeed (the `Retry-After` header).
    package var retryAfter: Int?

    /// 1: an internal server error.
    package static func internalError(_ message: String = "Internal server error.") -> Self {
        Self(status: .internalServerError, code: 1, message: message)
    }

    /// 101: the object does not exist.
    package static func objectNotFound(_ className: String, _ id: String) -> Self {
        Self(status: .notFound, code: 101, message: "Could not find object by id '\(id)' for class '\(className)'.")
    }

    /// 102: a query or its parameters are invalid.
    package static func invalidQuery(_ message: String) -> Self {
        Self(status: .badRequest, code: 102, message: message)
    }

    /// 104: an object id is missing.
    package static func missingObjectID() -> Self { Self(status: .badRequest, code: 104, message: "Missing objectId.") }

    /// 107: the body is not JSON (or not the JSON object expected).
    package static func malformedJSON(_ message: String) -> Self {
        Self(status: .badRequest, code: 107, message: "Malformed json object. \(message)")
    }

    /// 105: a field name LeanCloud does not allow.
    package static func invalidKeyName(_ key: String) -> Self {
        Self(status: .badRequest, code: 105, message: "Invalid key name '\(key)'.")
    }

    /// 112: a channel name is invalid.
    package static func invalidChannel(_ message: String) -> Self {
        Self(status: .badRequest, code: 112, message: message)
    }

    /// 111: a field holds a value of the wrong type.
    package static func invalidType(_ message: String) -> Self {
        Self(status: .badRequest, code: 111, message: message)
    }

    /// 114: an iOS installation without a valid device token.
    package static func invalidDeviceToken(_ message: String) -> Self {
        Self(status: .badRequest, code: 114, message: message)
    }

    /// 116: the body or the payload is too large.
    package static func objectTooLarge(_ message: String) -> Self {
        Self(status: .badRequest, code: 116, message: message)
    }

    /// 119: the operation needs the master key (or client push).
    package static func forbidden(_ message: String = "The operation isn't allowed for clients.") -> Self {
        Self(status: .forbidden, code: 119, message: message)
    }

    /// 135: the installation lacks its device type, or names one Herald cannot reach.
    package static func invalidDeviceType(_ message: String) -> Self {
        Self(status: .badRequest, code: 135, message: message)
    }

    /// 401: unknown app, wrong key or signature.
    package static func unauthorized(_ message: String = "Unauthorized.") -> Self {
        Self(status: .unauthorized, code: 401, message: message)
    }

    /// 429: too many requests (registrations, or refused credentials from the caller's address).
    package static func tooManyRequests(_ message: String, retryAfter: Int? = nil) -> Self {
        Self(status: .tooManyRequests, code: 429, message: message, retryAfter: retryAfter)
    }

    /// 503 (code 1): the store or engine cannot take the request now.
    package static func unavailable(_ message: String) -> Self {
        Self(status: .serviceUnavailable, code: 1, message: message)
    }

    /// The body.
    package var json: JSONValue { .object(["code": .number(JSONNumber(code)), "error": .string(message)]) }

    /// The failure for an error of Herald's validation, engine or store.
    package static func from(_ error: any Error) -> Self {
        if let failure = error as? Self { return failure }
        guard let error = HeraldError.classify(error) else { return .unavailable("The database is unavailable.") }
        switch error.kind {
        case _ where error.code == "payload_too_large", .payloadTooLarge: return .objectTooLarge(error.message)
        case _
        where error.code.hasPrefix("invalid_query") || error.code == "unknown_operator"
            || error.code == "invalid_regex" || error.code == "query_too_complex":
            return .invalidQuery(error.message)
        case .badRequest: return .invalidType(error.message)
        case .notFound: return Self(status: .notFound, code: 101, message: error.message)
        case .tooManyRequests: return .tooManyRequests(error.message)
        case .unavailable: return .unavailable(error.message)
        default: return .internalError()
        }
    }
}

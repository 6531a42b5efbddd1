import Foundation

/// A Google API error answer: the HTTP status and the `google.rpc.Status` body
/// `{"error": {"code", "message", "status", "details"}}` that FCM HTTP v1 sends.
struct GoogleRPCError: Error, Sendable {
    /// One entry of `details`.
    enum Detail: Sendable {
        /// `type.googleapis.com/google.firebase.fcm.v1.FcmError` with an FCM `errorCode`.
        case fcmError(String)
        /// `type.googleapis.com/google.rpc.BadRequest` naming the offending fields.
        case badRequest([MockFCMServer.FieldViolation])
    }

    /// The HTTP status, repeated as `error.code`.
    var code: Int
    /// The canonical status name, e.g. `INVALID_ARGUMENT`.
    var status: String
    var message: String
    var details: [Detail] = []

    /// The FCM error code in `details`, if any.
    var fcmErrorCode: String? {
        for case .fcmError(let code) in details { return code }
        return nil
    }

    /// The JSON body.
    func body() -> [UInt8] {
        // Encoding strings and integers cannot fail.
        (try? Array(JSONEncoder().encode(Envelope(error: self)))) ?? []
    }

    private struct Envelope: Encodable {
        var error: GoogleRPCError
    }
}

extension GoogleRPCError: Encodable {
    private enum CodingKeys: String, CodingKey {
        case code, message, status, details
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(code, forKey: .code)
        try container.encode(message, forKey: .message)
        try container.encode(status, forKey: .status)
        if !details.isEmpty {
            try container.encode(details, forKey: .details)
        }
    }
}

extension GoogleRPCError.Detail: Encodable {
    private enum CodingKeys: String, CodingKey {
        case type = "@type"
        case errorCode
        case fieldViolations
    }

    private struct Violation: Encodable {
        var field: String?
        var description: String
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .fcmError(let code):
            try container.encode("type.googleapis.com/google.firebase.fcm.v1.FcmError", forKey: .type)
            try container.encode(code, forKey: .errorCode)
        case .badRequest(let violations):
            try container.encode("type.googleapis.com/google.rpc.BadRequest", forKey: .type)
            try container.encode(
                violations.map { Violation(field: $0.field, description: $0.description) }, forKey: .fieldViolations)
        }
    }
}

extension GoogleRPCError {
    /// `400 INVALID_ARGUMENT` for a value of the wrong type or form, worded as Google's JSON transcoder words it.
    static func invalidValue(at field: String, type: String, value: String) -> GoogleRPCError {
        let message = "Invalid value at '\(field)' (\(type)), \(value)"
        return GoogleRPCError(
            code: 400, status: "INVALID_ARGUMENT", message: message,
            details: [.badRequest([.init(field: field, description: message)])])
    }

    /// `400 INVALID_ARGUMENT` for a field the message type does not have.
    static func unknownName(_ name: String, at parent: String?) -> GoogleRPCError {
        let location = parent.map { " at '\($0)'" } ?? ""
        let message = "Invalid JSON payload received. Unknown name \"\(name)\"\(location): Cannot find field."
        return GoogleRPCError(
            code: 400, status: "INVALID_ARGUMENT", message: message,
            details: [.badRequest([.init(field: parent ?? "", description: message)])])
    }

    /// `400 INVALID_ARGUMENT` with FCM's `INVALID_ARGUMENT` error code.
    static func invalidArgument(_ message: String, field: String? = nil) -> GoogleRPCError {
        var details: [Detail] = [.fcmError("INVALID_ARGUMENT")]
        if let field {
            details.append(.badRequest([.init(field: field, description: message)]))
        }
        return GoogleRPCError(code: 400, status: "INVALID_ARGUMENT", message: message, details: details)
    }

    /// `401 UNAUTHENTICATED`: no valid OAuth 2 access token.
    static let unauthenticated = GoogleRPCError(
        code: 401, status: "UNAUTHENTICATED",
        message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or "
            + "other valid authentication credential. See "
            + "https://developers.google.com/identity/sign-in/web/devconsole-project.")

    /// `404 NOT_FOUND` for a path or method the API does not have.
    static let methodNotFound = GoogleRPCError(code: 404, status: "NOT_FOUND", message: "Method not found.")
}

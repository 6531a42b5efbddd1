/// An error that Herald reports to a caller: a stable snake_case `code`, a human `message`, and the
/// request `field` at fault when there is one.
///
/// The `kind` says how the error maps onto a transport (the server turns it into an HTTP status);
/// the core module knows nothing about HTTP.
public struct HeraldError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The class of failure, used by transports to choose a status.
    public enum Kind: Sendable, Equatable {
        case badRequest
        case unauthorized
        case forbidden
        case notFound
        case conflict
        case payloadTooLarge
        case tooManyRequests
        case unavailable
        case `internal`
    }

    /// How the failure maps onto a transport.
    public var kind: Kind
    /// Stable snake_case code that clients can switch on.
    public var code: String
    /// Human-readable explanation; never contains a secret.
    public var message: String
    /// The request field at fault (dotted path for nested fields), when there is one.
    public var field: String?

    /// Creates an error; prefer the static constructors below so codes stay consistent.
    public init(kind: Kind, code: String, message: String, field: String? = nil) {
        self.kind = kind
        self.code = code
        self.message = message
        self.field = field
    }

    public var description: String {
        "\(code): \(message)" + (field.map { " (field: \($0))" } ?? "")
    }
}

extension HeraldError {
    /// The body is not valid JSON.
    public static func invalidJSON(_ detail: String) -> Self {
        .init(kind: .badRequest, code: "invalid_json", message: "The request body is not valid JSON: \(detail)")
    }

    /// The request's content type is not the one the route reads.
    public static func invalidContentType(expected: String) -> Self {
        .init(
            kind: .badRequest, code: "invalid_content_type",
            message: "The request must have Content-Type \(expected).")
    }

    /// The body is larger than the route accepts.
    public static func bodyTooLarge(limit: Int) -> Self {
        .init(
            kind: .payloadTooLarge, code: "body_too_large",
            message: "The request body is larger than \(limit) bytes.")
    }

    /// A field the route does not know.
    public static func unknownField(_ field: String) -> Self {
        .init(kind: .badRequest, code: "unknown_field", message: "Unknown field '\(field)'.", field: field)
    }

    /// A required field is absent or null.
    public static func missingField(_ field: String) -> Self {
        .init(kind: .badRequest, code: "missing_field", message: "Field '\(field)' is required.", field: field)
    }

    /// A field has the wrong JSON type.
    public static func invalidType(_ field: String, expected: String) -> Self {
        .init(
            kind: .badRequest, code: "invalid_type", message: "Field '\(field)' must be \(expected).",
            field: field)
    }

    /// A field has the right type but a value Herald does not accept.
    public static func invalidValue(_ field: String, code: String = "invalid_value", _ message: String) -> Self {
        .init(kind: .badRequest, code: code, message: message, field: field)
    }

    /// No credentials, or credentials that do not verify.
    public static func unauthorized(_ message: String = "A valid bearer key or user token is required.") -> Self {
        .init(kind: .unauthorized, code: "unauthorized", message: message)
    }

    /// Valid credentials that may not perform this action.
    public static func forbidden(_ message: String) -> Self {
        .init(kind: .forbidden, code: "forbidden", message: message)
    }

    /// The resource does not exist, or the caller may not know that it does.
    public static func notFound(_ what: String) -> Self {
        .init(kind: .notFound, code: "not_found", message: "\(what) was not found.")
    }

    /// The store is not reachable.
    public static func unavailable(_ message: String) -> Self {
        .init(kind: .unavailable, code: "unavailable", message: message)
    }

    /// An unexpected failure; the message is safe to show.
    public static func `internal`(_ message: String = "An unexpected error occurred.") -> Self {
        .init(kind: .internal, code: "internal_error", message: message)
    }
}

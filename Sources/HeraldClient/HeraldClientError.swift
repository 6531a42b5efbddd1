import Foundation

/// A failed Herald call: the server's error (`{"error": {"code", "message", "field"}}`) with the
/// HTTP status, or a failure on this side (no answer, an unreadable answer, no registration yet).
///
/// Match on ``code``: the server's codes are stable snake_case (`invalid_token`, `not_found`,
/// `forbidden`, …); the client's own are the static members below.
public struct HeraldClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status of the answer; nil when there was none.
    public var status: Int?
    /// A stable snake_case code.
    public var code: String
    /// What went wrong, for people.
    public var message: String
    /// The request field at fault, when the server named one.
    public var field: String?

    /// Creates an error.
    public init(status: Int?, code: String, message: String, field: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
    }

    public var description: String {
        var text = "Herald: \(code): \(message)"
        if let field { text += " (field \(field))" }
        if let status { text += " [HTTP \(status)]" }
        return text
    }

    /// The server could not be reached, or did not answer, after every retry.
    public static func network(_ underlying: any Error) -> Self {
        .init(status: nil, code: "network_error", message: "No answer from Herald: \(underlying.localizedDescription)")
    }

    /// The answer was not the JSON the route documents.
    public static func invalidResponse(status: Int?, _ detail: String) -> Self {
        .init(status: status, code: "invalid_response", message: detail)
    }

    /// The call needs a registered installation and there is none (call `register` first).
    public static let notRegistered = Self(
        status: nil, code: "not_registered", message: "This device has no Herald installation yet; register first.")

    /// A notification's `userInfo` carries no Herald notification id (it was not sent by Herald).
    public static let noNotificationID = Self(
        status: nil, code: "no_notification_id", message: "The notification carries no Herald notification id.")

    /// The platform could not be told from the running system; pass it explicitly.
    public static let unknownPlatform = Self(
        status: nil, code: "unknown_platform", message: "The platform is unknown on this system; pass platform:.")

    /// The configuration is unusable (a base URL that cannot take a path).
    public static func invalidConfiguration(_ detail: String) -> Self {
        .init(status: nil, code: "invalid_configuration", message: detail)
    }
}

import Foundation
import HTTPTypes
import HeraldCore
import Hummingbird
import NIOCore

/// An answer other than `200` in ntfy's error body: `{"code", "http", "error", "link"?}`, with
/// ntfy's own codes (`40009`: the topic; `40101`: unauthorized; …), which its clients log.
package struct NtfyError: Error, Sendable, Equatable {
    package var status: HTTPResponse.Status
    package var code: Int
    package var error: String
    package var link: String?

    static let authenticationLink = "https://ntfy.sh/docs/publish/#authentication"
    static let limitationsLink = "https://ntfy.sh/docs/publish/#limitations"
    static let templatingLink = "https://ntfy.sh/docs/publish/#message-templating"

    package static func invalidTopic(_ detail: String = "topic invalid") -> Self {
        Self(status: .badRequest, code: 40009, error: "invalid request: \(detail)")
    }
    package static func invalidPriority() -> Self {
        Self(
            status: .badRequest, code: 40007, error: "invalid priority parameter",
            link: "https://ntfy.sh/docs/publish/#message-priority")
    }
    package static func invalidDelay() -> Self {
        Self(
            status: .badRequest, code: 40004, error: "invalid delay parameter: unable to parse delay",
            link: "https://ntfy.sh/docs/publish/#scheduled-delivery")
    }
    package static func delayTooSmall() -> Self {
        Self(
            status: .badRequest, code: 40005, error: "invalid delay parameter: too small, please refer to the docs",
            link: "https://ntfy.sh/docs/publish/#scheduled-delivery")
    }
    package static func delayTooLarge() -> Self {
        Self(
            status: .badRequest, code: 40006, error: "invalid delay parameter: too large, please refer to the docs",
            link: "https://ntfy.sh/docs/publish/#scheduled-delivery")
    }
    package static func invalidAttachURL() -> Self {
        Self(status: .badRequest, code: 40013, error: "invalid request: attachment URL is invalid")
    }
    package static func invalidIconURL() -> Self {
        Self(status: .badRequest, code: 40021, error: "invalid request: icon URL is invalid")
    }
    package static func notJSONMessage() -> Self {
        Self(status: .badRequest, code: 40017, error: "invalid request: request body must be message JSON")
    }
    package static func invalidActions() -> Self {
        Self(status: .badRequest, code: 40018, error: "invalid request: actions invalid")
    }
    package static func invalidJSON() -> Self {
        Self(status: .badRequest, code: 40024, error: "invalid request: request body must be valid JSON")
    }
    package static func jsonTooLarge() -> Self {
        Self(status: .contentTooLarge, code: 41303, error: "JSON body too large")
    }
    /// A message larger than 4,096 bytes (ntfy would keep it as an attachment; Herald keeps none).
    package static func tooLarge(_ detail: String = "message too large: at most 4096 bytes") -> Self {
        Self(status: .contentTooLarge, code: 41301, error: detail)
    }
    package static func unauthorized() -> Self {
        Self(status: .unauthorized, code: 40101, error: "unauthorized", link: authenticationLink)
    }
    package static func forbidden() -> Self {
        Self(status: .forbidden, code: 40301, error: "forbidden", link: authenticationLink)
    }
    package static func tooManyRequests() -> Self {
        Self(
            status: .tooManyRequests, code: 42901, error: "limit reached: too many requests, please be nice",
            link: limitationsLink)
    }
    package static func tooManyAuthFailures() -> Self {
        Self(
            status: .tooManyRequests, code: 42909, error: "limit reached: too many auth failures",
            link: limitationsLink)
    }
    /// A templated title or message over 4,096 bytes.
    package static func templatedMessageTooLarge() -> Self {
        Self(
            status: .badRequest, code: 40041,
            error: "invalid request: message or title is too large after replacing template", link: templatingLink)
    }
    /// A templated publish whose body is not JSON.
    package static func templateSourceNotJSON() -> Self {
        Self(
            status: .badRequest, code: 40042,
            error: "invalid request: message body must be JSON if templating is enabled", link: templatingLink)
    }
    /// A template that cannot be parsed: for Herald, every inline Go template (`detail` says why),
    /// appended as ntfy appends the parser's error.
    package static func templateInvalid(_ detail: String) -> Self {
        Self(
            status: .badRequest, code: 40043, error: "invalid request: could not parse template; \(detail)",
            link: templatingLink)
    }
    /// A template that failed while it ran (`github` given an event it does not handle); `detail`
    /// names the template and part and quotes the failure.
    package static func templateExecutionFailed(_ detail: String) -> Self {
        Self(
            status: .badRequest, code: 40045, error: "invalid request: template execution failed; \(detail)",
            link: templatingLink)
    }
    /// A template name Herald does not serve (ntfy's answer for a name with no template file).
    package static func templateNotFound(_ detail: String) -> Self {
        Self(
            status: .badRequest, code: 40047, error: "invalid request: template file not found; \(detail)",
            link: templatingLink)
    }
    static let updatingLink = "https://ntfy.sh/docs/publish/#updating-deleting-notifications"

    /// A sequence id that is not 1 to 64 of `A-Z a-z 0-9 _ -`.
    package static func invalidSequenceID() -> Self {
        Self(
            status: .badRequest, code: 40049, error: "invalid request: sequence ID invalid", link: updatingLink)
    }
    /// A clear or delete of a sequence the app never published (ntfy would publish the event anyway;
    /// Herald has nothing on any device to act on).
    package static func sequenceNotFound() -> Self {
        Self(
            status: .notFound, code: 40401, error: "page not found: no message with this sequence ID",
            link: updatingLink)
    }
    package static func internalError() -> Self {
        Self(status: .internalServerError, code: 50001, error: "internal server error")
    }

    /// The answer (one JSON object and a newline, as ntfy writes it).
    package func response(retryAfter: Int? = nil) -> Response {
        var body: [String: JSONValue] = [
            "code": .number(JSONNumber(code)), "http": .number(JSONNumber(Int(status.code))), "error": .string(error),
        ]
        body["link"] = link.map(JSONValue.string)
        var headers: HTTPFields = [.contentType: "application/json"]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return Response(
            status: status, headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: JSONValue.object(body).serialized() + [0x0A])))
    }
}

import Foundation
import HTTPTypes
import HeraldCore
import Hummingbird
import NIOCore

/// An answer other than `200` in the Matrix specification's error body (`errcode`, `error`; a
/// `429` also `retry_after_ms`). A homeserver retries a notify that failed, with backoff.
package struct MatrixError: Error, Sendable, Equatable {
    package var status: HTTPResponse.Status
    /// `M_NOT_JSON`, `M_BAD_JSON`, `M_TOO_LARGE`, `M_LIMIT_EXCEEDED`, `M_UNKNOWN`.
    package var errcode: String
    package var error: String
    package var retryAfterMilliseconds: Int?

    /// The body is not JSON.
    package static func notJSON() -> Self {
        Self(status: .badRequest, errcode: "M_NOT_JSON", error: "The body is not JSON.")
    }

    /// The body is JSON, but not a notify request.
    package static func badJSON(_ error: String) -> Self {
        Self(status: .badRequest, errcode: "M_BAD_JSON", error: error)
    }

    /// The body is larger than Herald reads.
    package static func tooLarge(limit: Int) -> Self {
        Self(status: .contentTooLarge, errcode: "M_TOO_LARGE", error: "The body is larger than \(limit) bytes.")
    }

    /// Too many new pushkeys from this address: the homeserver retries after `retryAfter` seconds.
    package static func limitExceeded(retryAfter: Int) -> Self {
        Self(
            status: .tooManyRequests, errcode: "M_LIMIT_EXCEEDED",
            error: "Too many new pushkeys from this address; try again later.",
            retryAfterMilliseconds: retryAfter * 1_000)
    }

    /// Herald could not take the notify now (its database): the homeserver retries it.
    package static func unavailable(_ error: String) -> Self {
        Self(status: .serviceUnavailable, errcode: "M_UNKNOWN", error: error)
    }

    /// The answer.
    package func response() -> Response {
        var body: [String: JSONValue] = ["errcode": .string(errcode), "error": .string(error)]
        body["retry_after_ms"] = retryAfterMilliseconds.map { .number(JSONNumber($0)) }
        var headers: HTTPFields = [.contentType: "application/json"]
        if let milliseconds = retryAfterMilliseconds { headers[.retryAfter] = String((milliseconds + 999) / 1_000) }
        return Response(
            status: status, headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: JSONValue.object(body).serialized())))
    }
}

import Foundation
import HTTPTypes
import HeraldCore
import Hummingbird
import NIOCore

/// An answer other than `200` in Gotify's error body: `{"error", "errorCode", "errorDescription"}`.
package struct GotifyError: Error, Sendable, Equatable {
    package var status: HTTPResponse.Status
    package var description: String

    package static func badRequest(_ description: String) -> Self {
        Self(status: .badRequest, description: description)
    }
    package static func unauthorized() -> Self {
        Self(
            status: .unauthorized,
            description: "you need to provide a valid access token or user credentials to access this api")
    }
    package static func forbidden() -> Self {
        Self(status: .forbidden, description: "you are not allowed to access this api")
    }
    package static func tooLarge(_ description: String) -> Self {
        Self(status: .contentTooLarge, description: description)
    }
    package static func tooManyRequests() -> Self {
        Self(status: .tooManyRequests, description: "too many messages from this application, try again later")
    }
    package static func internalError() -> Self {
        Self(status: .internalServerError, description: "the message could not be stored")
    }

    /// The answer.
    package func response(retryAfter: Int? = nil) -> Response {
        let body = JSONValue.object([
            "error": .string(status.reasonPhrase), "errorCode": .number(JSONNumber(Int(status.code))),
            "errorDescription": .string(description),
        ])
        var headers: HTTPFields = [.contentType: "application/json"]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return Response(
            status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body.serialized())))
    }
}

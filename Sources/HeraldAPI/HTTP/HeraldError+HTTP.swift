import Foundation
import HTTPTypes
import HeraldCore
import Hummingbird
import NIOCore

extension HeraldError: ResponseGenerator {}
extension HeraldError: HTTPResponseError {
    /// The HTTP status of the error's kind.
    public var status: HTTPResponse.Status {
        switch kind {
        case .badRequest: .badRequest
        case .unauthorized: .unauthorized
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .conflict: .conflict
        case .payloadTooLarge: .contentTooLarge
        case .tooManyRequests: .tooManyRequests
        case .unavailable: .serviceUnavailable
        case .internal: .internalServerError
        }
    }

    /// Renders the native error body `{"error": {"code", "message", "field"}}`.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var error: [String: JSONValue] = ["code": .string(code), "message": .string(message)]
        error["field"] = field.map(JSONValue.string) ?? .null
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if kind == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        return Response(
            status: status, headers: headers,
            body: .init(byteBuffer: ByteBuffer(bytes: JSONValue.object(["error": .object(error)]).serialized())))
    }
}

extension Response {
    /// A JSON response from a `JSONValue`.
    package static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: value.serialized())))
    }
}

extension Request {
    /// Reads the body as one JSON value, enforcing the content type and the size limit.
    /// - Throws: `HeraldError` `invalid_content_type` (400), `body_too_large` (413) or `invalid_json` (400).
    package func jsonBody(limit: Int) async throws -> JSONValue {
        let contentType = headers[.contentType]?.split(separator: ";").first?
            .trimmingCharacters(in: .whitespaces).lowercased()
        guard contentType == "application/json" else {
            throw HeraldError.invalidContentType(expected: "application/json")
        }
        if let length = headers[.contentLength].flatMap(Int.init), length > limit {
            throw HeraldError.bodyTooLarge(limit: limit)
        }
        var bytes: [UInt8] = []
        for try await buffer in body {
            guard bytes.count + buffer.readableBytes <= limit else { throw HeraldError.bodyTooLarge(limit: limit) }
            bytes.append(contentsOf: buffer.readableBytesView)
        }
        return try JSONValue.parse(bytes)
    }
}

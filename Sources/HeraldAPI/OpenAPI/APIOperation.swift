import HTTPTypes
import OpenAPIKit

/// One route as `/openapi.yaml` describes it: method, path template and its OpenAPI operation.
///
/// Routes are registered only through these declarations (``RouteTable``), and the document is
/// built from what the router registered, so a route cannot exist without its description. The
/// path's `{name}` segments become required path parameters; the query parameters are the
/// ``QueryParameter`` declarations that ``ListQuery`` also validates with.
package struct APIOperation: Sendable {
    /// Who may call the operation.
    package enum Security: Sendable {
        /// `Authorization: Bearer …` (server key, client key, user token), the document's default.
        case bearer
        /// No credential.
        case none
        /// An AWS Signature Version 4 `Authorization` header (the SNS-compatible API).
        case sigV4
        /// The web console's session cookie alone (no CSRF token).
        case consoleCookie
    }

    /// The request body's media type.
    package enum BodyEncoding: Sendable {
        /// `application/json`.
        case json
        /// `application/x-www-form-urlencoded` (the AWS Query API).
        case form
        /// `application/octet-stream`: opaque bytes (an RFC 8030 push message).
        case binary
    }

    package var method: HTTPRequest.Method
    /// The full path template, as the router and the document name it (`/v1/installations/{id}`).
    package var path: String
    /// The query parameters the route reads; any other is refused.
    package var query: [QueryParameter]
    package var operation: OpenAPI.Operation

    /// Declares an operation.
    /// - Parameters:
    ///   - pathParameters: Schemas of the path's `{name}` segments; a segment not given is a
    ///     non-empty string.
    ///   - headers: Request header parameters.
    ///   - body: The request body's schema, when the route takes one (always required).
    ///   - bodyEncoding: How the body is encoded: JSON unless said.
    ///   - responses: Each status the route answers and what it carries. An operation that answers
    ///     the native error body also answers, in that body, `429 rate_limited` when it authenticates
    ///     (`http.auth_failures_per_minute`), and `503 storage_unavailable` when it writes (a full
    ///     disk, a read-only database); both are added here unless declared.
    package init(
        _ method: HTTPRequest.Method, _ path: String, tags: [String] = [], summary: String,
        description: String? = nil, security: Security = .bearer, pathParameters: [String: JSONSchema] = [:],
        query: [QueryParameter] = [], headers: [OpenAPI.Parameter] = [], body: JSONSchema? = nil,
        bodyEncoding: BodyEncoding = .json, responses: [(Int, APIResponse)]
    ) {
        self.method = method
        self.path = path
        self.query = query
        var parameters: OpenAPI.Parameter.Array = Self.pathParameterNames(path).map { name in
            .b(.path(name: name, schema: pathParameters[name] ?? .string(minLength: 1)))
        }
        parameters += query.map { .b($0.openAPI) }
        parameters += headers.map { .b($0) }
        var responses = responses
        if responses.contains(where: { if case .error = $0.1 { true } else { false } }) {
            let declared = Set(responses.map(\.0))
            if security != .none, !declared.contains(429) { responses.append((429, .error)) }
            if method != .get, !path.hasPrefix("/console"), !declared.contains(503) { responses.append((503, .error)) }
        }
        var map: OpenAPI.Response.Map = [:]
        for (status, response) in responses {
            map[OpenAPI.Response.StatusCode(integerLiteral: status)] = response.openAPI
        }
        let requirements: [OpenAPI.SecurityRequirement]? =
            switch security {
            case .bearer: nil
            case .none: []
            case .sigV4: [[.component(named: "sigv4"): []]]
            case .consoleCookie: [[.component(named: "cookieAuth"): []]]
            }
        operation = OpenAPI.Operation(
            tags: tags.isEmpty ? nil : tags, summary: summary, description: description, parameters: parameters,
            requestBody: body.map { schema in
                let content: OpenAPI.Content.Map =
                    switch bodyEncoding {
                    case .json: .json(schema)
                    case .form: [.form: .b(OpenAPI.Content(schema: schema))]
                    case .binary: [.other("application/octet-stream"): .b(OpenAPI.Content(schema: schema))]
                    }
                return OpenAPI.Request(content: content, required: true)
            },
            responses: map, security: requirements)
    }

    /// The names of a path template's `{name}` segments, in order.
    package static func pathParameterNames(_ path: String) -> [String] {
        path.split(separator: "/").compactMap { segment in
            segment.hasPrefix("{") && segment.hasSuffix("}") ? String(segment.dropFirst().dropLast()) : nil
        }
    }
}

/// What an operation answers with one status.
package enum APIResponse: Sendable {
    /// A JSON body of this schema.
    case json(String, JSONSchema)
    /// No body.
    case empty(String)
    /// The native error body (`#/components/responses/Error`).
    case error
    /// A `text/xml` body of this schema (the AWS Query API's answers).
    case xml(String, JSONSchema)
    /// A response described in full.
    case custom(OpenAPI.Response)

    package var openAPI: Either<OpenAPI.Reference<OpenAPI.Response>, OpenAPI.Response> {
        switch self {
        case .json(let description, let schema):
            .b(OpenAPI.Response(description: description, content: .json(schema)))
        case .xml(let description, let schema):
            .b(
                OpenAPI.Response(
                    description: description,
                    content: [OpenAPI.ContentType(rawValue: "text/xml")!: .b(OpenAPI.Content(schema: schema))]))
        case .empty(let description): .b(OpenAPI.Response(description: description))
        case .error: .a(.component(named: "Error"))
        case .custom(let response): .b(response)
        }
    }
}

extension Array where Element == (Int, APIResponse) {
    /// The native error response under each status.
    package static func errors(_ statuses: Int...) -> Self { statuses.map { ($0, .error) } }
}

extension OrderedDictionary
where Key == OpenAPI.ContentType, Value == Either<OpenAPI.Reference<OpenAPI.Content>, OpenAPI.Content> {
    /// `application/json` of this schema.
    package static func json(_ schema: JSONSchema) -> Self { [.json: .b(OpenAPI.Content(schema: schema))] }
}

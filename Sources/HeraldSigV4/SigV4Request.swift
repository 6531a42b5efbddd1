import Foundation
import NIOHTTP1

/// An HTTP request as Signature Version 4 sees it: what a client signs, or what a server received
/// and verifies.
public struct SigV4Request: Sendable {
    /// The HTTP method (`GET`, `POST`).
    public var method: String
    /// The absolute path, not percent-encoded (`/` for the Query API); signing encodes it.
    public var path: String
    /// The query parameters, not percent-encoded, in any order; signing encodes and sorts them.
    public var query: [(name: String, value: String)]
    /// The headers; repeated names are kept and signed as one comma-joined value.
    public var headers: HTTPHeaders
    /// The body (the payload whose SHA-256 is signed).
    public var body: [UInt8]

    /// Creates a request from its decoded parts.
    public init(
        method: String, path: String = "/", query: [(name: String, value: String)] = [], headers: HTTPHeaders = [:],
        body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// Creates a request from what a server received: the request target as on the wire
    /// (`/path?name=value&…`, percent-encoded), which is split and decoded.
    public init(method: String, target: String, headers: HTTPHeaders, body: [UInt8]) {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let rawPath = parts.first.map(String.init) ?? "/"
        var query: [(name: String, value: String)] = []
        if parts.count > 1 {
            for pair in parts[1].split(separator: "&") {
                let nameValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = Self.percentDecoded(String(nameValue[0]))
                let value = nameValue.count > 1 ? Self.percentDecoded(String(nameValue[1])) : ""
                query.append((name, value))
            }
        }
        self.init(
            method: method, path: rawPath.isEmpty ? "/" : Self.percentDecoded(rawPath), query: query, headers: headers,
            body: body)
    }

    /// `%XX` sequences decoded; `+` stays a plus, as AWS SDKs encode a space as `%20`. Text that is
    /// not valid percent-encoding is kept as it is.
    private static func percentDecoded(_ text: String) -> String {
        text.removingPercentEncoding ?? text
    }
}

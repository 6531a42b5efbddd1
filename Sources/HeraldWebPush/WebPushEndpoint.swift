import Foundation
import HeraldHTTP2

/// A subscription endpoint taken apart: where to connect, what to put in `:path`, and the origin
/// the VAPID JWT names. Push resources are `https` only (RFC 8030 §8).
struct WebPushEndpoint: Sendable, Hashable {
    /// The host and port to connect to.
    var origin: HTTP2OriginPools.Origin
    /// `https://host[:port]`: the JWT's `aud`.
    var audience: String
    /// The path and query, as sent in `:path`.
    var path: String
    /// The endpoint as given.
    var url: String

    init(_ text: String) throws(WebPushError) {
        guard let components = URLComponents(string: text) else { throw .invalidEndpoint("is not a URL") }
        guard components.scheme?.lowercased() == "https" else { throw .invalidEndpoint("is not an https URL") }
        guard var host = components.host, !host.isEmpty else { throw .invalidEndpoint("has no host") }
        guard components.user == nil, components.password == nil else {
            throw .invalidEndpoint("carries credentials")
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        host = host.lowercased()
        let port = components.port ?? 443
        guard (1...65_535).contains(port) else { throw .invalidEndpoint("has an invalid port") }
        let authority = host.contains(":") ? "[\(host)]" : host
        origin = HTTP2OriginPools.Origin(host: host, port: port)
        audience = port == 443 ? "https://\(authority)" : "https://\(authority):\(port)"
        let encodedPath = components.percentEncodedPath
        path = (encodedPath.isEmpty ? "/" : encodedPath) + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        url = text
    }
}

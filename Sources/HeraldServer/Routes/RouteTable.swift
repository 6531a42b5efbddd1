import HTTPTypes
import Hummingbird

/// A route as the OpenAPI document names it: method and path template (`/v1/installations/{id}`).
public struct RouteDescriptor: Sendable, Hashable, CustomStringConvertible {
    public var method: HTTPRequest.Method
    public var path: String

    public var description: String { "\(method.rawValue) \(path)" }
}

/// Registers routes on a router group and remembers each one, so a test can check that every
/// route Herald serves is described in `/openapi.yaml`.
struct RouteTable {
    private(set) var routes: [RouteDescriptor] = []

    mutating func on(
        _ group: RouterGroup<HeraldRequestContext>, prefix: String, _ path: String, method: HTTPRequest.Method,
        use handler: @escaping @Sendable (Request, HeraldRequestContext) async throws -> Response
    ) {
        group.on(RouterPath(path), method: method, use: handler)
        let suffix = path.isEmpty || path.hasPrefix("/") ? path : "/" + path
        routes.append(RouteDescriptor(method: method, path: prefix + suffix))
    }
}

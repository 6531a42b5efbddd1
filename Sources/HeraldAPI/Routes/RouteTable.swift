import HTTPTypes
import Hummingbird
import Synchronization

/// A route as the OpenAPI document names it: method and path template (`/v1/installations/{id}`).
public struct RouteDescriptor: Sendable, Hashable, CustomStringConvertible {
    public var method: HTTPRequest.Method
    public var path: String

    /// A route by method and path template.
    public init(method: HTTPRequest.Method, path: String) {
        self.method = method
        self.path = path
    }

    public var description: String { "\(method.rawValue) \(path)" }
}

/// Registers routes on router groups from their ``APIOperation`` declarations and keeps the
/// declarations: `/openapi.yaml` is built from them, and ``RouteIndex`` answers which methods a
/// path takes.
package struct RouteTable {
    package private(set) var operations: [APIOperation] = []
    package let index: RouteIndex

    package init(index: RouteIndex) {
        self.index = index
    }

    /// Registers `handler` for `operation` on `group`, whose routes all start with `prefix`.
    package mutating func on(
        _ group: RouterGroup<HeraldRequestContext>, prefix: String, _ operation: APIOperation,
        use handler: @escaping @Sendable (Request, HeraldRequestContext) async throws -> Response
    ) {
        precondition(operation.path.hasPrefix(prefix), "\(operation.path) is not under \(prefix)")
        let relative = operation.path.dropFirst(prefix.count).drop { $0 == "/" }
        group.on(RouterPath(String(relative)), method: operation.method, use: handler)
        operations.append(operation)
        index.add(RouteDescriptor(method: operation.method, path: operation.path))
    }

    /// The routes registered, as the document names them.
    package var routes: [RouteDescriptor] { operations.map { RouteDescriptor(method: $0.method, path: $0.path) } }
}

/// The path templates the router serves and their methods, filled while routes are registered
/// and read for each request that matched no route: a known path with another method is
/// `405 Method Not Allowed` with `Allow`, not `404`.
package final class RouteIndex: Sendable {
    private let routes = Mutex<[[Substring]: [HTTPRequest.Method]]>([:])

    package init() {}

    package func add(_ route: RouteDescriptor) {
        routes.withLock { $0[Self.segments(route.path), default: []].append(route.method) }
    }

    /// The methods served for a request path; empty when no template matches it.
    package func methods(for path: String) -> [HTTPRequest.Method] {
        let segments = Self.segments(path)
        return routes.withLock { routes in
            // As the router does, a literal segment hides a `{parameter}` at the same place: `/metrics`
            // is the metrics route's, never `/{topic}`'s, so only the most literal templates count.
            let matching = routes.filter { Self.matches(segments, $0.key) }
            let best = matching.map { Self.literals($0.key) }.max { $0 != $1 && Self.precedes($1, $0) }
            var methods: [HTTPRequest.Method] = []
            for (template, templateMethods) in matching where Self.literals(template) == best {
                for method in templateMethods where !methods.contains(method) { methods.append(method) }
            }
            return methods
        }
    }

    /// Which of a template's segments are literal (not `{parameter}`).
    private static func literals(_ template: [Substring]) -> [Bool] {
        template.map { !($0.hasPrefix("{") && $0.hasSuffix("}")) }
    }

    /// Whether `a` is at least as literal as `b`: at the first place they differ, `a` is the literal.
    private static func precedes(_ a: [Bool], _ b: [Bool]) -> Bool {
        for (x, y) in zip(a, b) where x != y { return x }
        return true
    }

    private static func segments(_ path: String) -> [Substring] {
        let path = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return path.split(separator: "/")
    }

    private static func matches(_ segments: [Substring], _ template: [Substring]) -> Bool {
        guard segments.count == template.count else { return false }
        return zip(segments, template).allSatisfy { segment, part in
            (part.hasPrefix("{") && part.hasSuffix("}")) || segment == part
        }
    }
}

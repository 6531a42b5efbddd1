import HTTPTypes
import HeraldAPI
import Hummingbird

/// Believes `X-Forwarded-For` from the reverse proxies `http.trusted_proxies` lists, and only from
/// them: a request whose TCP peer is one of them counts, in every per-address limit, as the client the
/// proxies named (``TrustedProxies/client(peer:forwardedFor:)``). Added only when the list is not empty.
struct TrustedProxyMiddleware: RouterMiddleware {
    typealias Context = HeraldRequestContext
    let proxies: TrustedProxies

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let peer = context.remoteAddress?.ipAddress, proxies.contains(peer) else {
            return try await next(request, context)
        }
        var context = context
        let client = proxies.client(peer: peer, forwardedFor: request.headers[values: .xForwardedFor])
        if client != peer { context.forwardedClient = client }
        return try await next(request, context)
    }
}

extension HTTPField.Name {
    /// `X-Forwarded-For`: the addresses a request passed through, the client's first.
    static let xForwardedFor = Self("X-Forwarded-For")!
}

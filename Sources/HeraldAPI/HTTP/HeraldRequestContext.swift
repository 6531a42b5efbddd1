import HeraldCore
import Hummingbird
import HummingbirdAuth
import NIOCore

/// The per-request context of Herald's router: Hummingbird's core storage plus the caller.
public struct HeraldRequestContext: AuthRequestContext, RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The verified caller, set by ``BearerAuthenticator``.
    public var identity: Principal?
    /// The TCP peer: the client, or the reverse proxy in front of it.
    public let remoteAddress: SocketAddress?
    /// The client a trusted proxy named in `X-Forwarded-For` (set by the server's middleware when
    /// `http.trusted_proxies` lists the peer); nil for a request straight from its client.
    public var forwardedClient: String?

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.identity = nil
        self.remoteAddress = source.channel.remoteAddress
    }

    /// The client's address, which the per-address limits count by (failed credentials, registrations,
    /// the console's sign-ins, new pushkeys): the peer's, or the one a trusted proxy forwarded.
    public var clientAddress: String {
        forwardedClient ?? remoteAddress?.ipAddress ?? "unknown"
    }
}

extension HeraldRequestContext {
    /// The verified caller.
    /// - Throws: `HeraldError.unauthorized` when the route was reached without authentication.
    package func principal() throws(HeraldError) -> Principal {
        guard let identity else { throw .unauthorized() }
        return identity
    }

    /// The app of a caller holding its server key.
    /// - Throws: `HeraldError.forbidden` with `message` for any other caller.
    package func requireServerKey(_ message: String) throws(HeraldError) -> String {
        guard case .server(let appID) = try principal() else { throw .forbidden(message) }
        return appID
    }
}

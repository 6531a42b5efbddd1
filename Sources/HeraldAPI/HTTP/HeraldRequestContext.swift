import HeraldCore
import Hummingbird
import HummingbirdAuth
import NIOCore

/// The per-request context of Herald's router: Hummingbird's core storage plus the caller.
public struct HeraldRequestContext: AuthRequestContext, RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The verified caller, set by ``BearerAuthenticator``.
    public var identity: Principal?
    /// The client's address (the console limits failed sign-ins per address).
    public let remoteAddress: SocketAddress?

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.identity = nil
        self.remoteAddress = source.channel.remoteAddress
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

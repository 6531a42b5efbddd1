import Hummingbird
import HummingbirdAuth

/// The per-request context of Herald's router: Hummingbird's core storage plus the caller.
public struct HeraldRequestContext: AuthRequestContext, RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The verified caller, set by ``BearerAuthenticator``.
    public var identity: Principal?

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.identity = nil
    }
}

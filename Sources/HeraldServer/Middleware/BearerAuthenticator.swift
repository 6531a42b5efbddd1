import HTTPTypes
import HeraldCore
import Hummingbird
import HummingbirdAuth

/// Resolves `Authorization: Bearer <credential>` to a ``Principal`` and refuses requests without a
/// valid one with `401`. Routes then check what the principal may do.
struct BearerAuthenticator: RouterMiddleware {
    typealias Context = HeraldRequestContext

    let apps: AppDirectory
    /// The web console's sessions: without a bearer credential, a console session cookie with its
    /// CSRF token stands for the app's server key.
    var console: ConsoleGate?

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        if let bearer = request.headers.bearer?.token, !bearer.isEmpty {
            context.identity = try await apps.authenticate(
                bearer: bearer, appHint: request.headers[HTTPField.Name.heraldApp])
        } else if let principal = try await console?.principal(request) {
            context.identity = principal
        } else {
            throw HeraldError.unauthorized("Authorization: Bearer <key or user token> is required.")
        }
        return try await next(request, context)
    }
}

extension HTTPField.Name {
    /// Names the app a user token belongs to when Herald serves several.
    static let heraldApp = Self("X-Herald-App")!
}

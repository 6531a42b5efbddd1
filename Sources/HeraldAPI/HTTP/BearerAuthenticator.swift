import HTTPTypes
import HeraldCore
import Hummingbird
import HummingbirdAuth

/// What stands for a bearer credential on a request that has none: the web console's session
/// cookie with its CSRF token (HeraldServer's `ConsoleGate`).
package protocol SessionCredentials: Sendable {
    /// The caller of `request`'s session; nil when it carries none.
    /// - Throws: `HeraldError` when it carries one that is not valid.
    func principal(_ request: Request) async throws -> Principal?
}

/// Resolves `Authorization: Bearer <credential>` to a ``Principal`` and refuses requests without a
/// valid one with `401`. Routes then check what the principal may do.
package struct BearerAuthenticator: RouterMiddleware {
    package typealias Context = HeraldRequestContext

    package let apps: AppDirectory
    /// Without a bearer credential, a console session stands for the app's server key.
    package var console: (any SessionCredentials)?

    package init(apps: AppDirectory, console: (any SessionCredentials)? = nil) {
        self.apps = apps
        self.console = console
    }

    package func handle(
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
    package static let heraldApp = Self("X-Herald-App")!
}

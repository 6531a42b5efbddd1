import HTTPTypes
import HeraldCore
import Hummingbird
import HummingbirdAuth

/// Resolves `Authorization: Bearer <credential>` to a ``Principal`` and refuses requests without a
/// valid one with `401`. Routes then check what the principal may do.
struct BearerAuthenticator: RouterMiddleware {
    typealias Context = HeraldRequestContext

    let apps: AppDirectory

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let bearer = request.headers.bearer?.token, !bearer.isEmpty else {
            throw HeraldError.unauthorized("Authorization: Bearer <key or user token> is required.")
        }
        var context = context
        context.identity = try await apps.authenticate(
            bearer: bearer, appHint: request.headers[HTTPField.Name.heraldApp])
        return try await next(request, context)
    }
}

extension HTTPField.Name {
    /// Names the app a user token belongs to when Herald serves several.
    static let heraldApp = Self("X-Herald-App")!
}

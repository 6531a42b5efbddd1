import HTTPTypes
import HeraldAPI
import HeraldCore
import Hummingbird
import Logging

/// Gives every error the native JSON shape: Hummingbird's own errors are translated, a known path
/// asked with a method it does not take is `405` with `Allow` (RFC 9110 §15.5.6), and anything
/// unexpected becomes a `500 internal_error` that is logged without detail reaching the caller.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The routes served, for `405`.
    let routes: RouteIndex

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            for dialect in HeraldApplication.dialects {
                if let response = dialect.unrouted(method: request.method, path: request.uri.path) { return response }
            }
            let allowed = routes.methods(for: request.uri.path)
            guard !allowed.isEmpty else { throw Self.translate(error) }
            var response = try HeraldError(
                kind: .badRequest, code: "method_not_allowed",
                message: "\(request.uri.path) does not take \(request.method.rawValue).", field: nil
            )
            .response(from: request, context: context)
            response.status = .methodNotAllowed
            response.headers[.allow] = allowed.map(\.rawValue).joined(separator: ", ")
            return response
        } catch let error as HeraldError {
            if error.kind == .internal {
                context.logger.error("request failed", metadata: ["herald.error": "\(error.code)"])
            }
            throw error
        } catch let error as HTTPError {
            throw Self.translate(error)
        } catch let error as any HTTPResponseError {
            throw HeraldError(
                kind: .badRequest, code: "http_\(error.status.code)", message: error.status.reasonPhrase)
        } catch {
            if let failure = HeraldError.classify(error) {
                context.logger.error("request failed", metadata: ["herald.error": "\(failure.message)"])
                throw failure
            }
            context.logger.error("unexpected error", metadata: ["herald.error": "\(type(of: error))"])
            throw HeraldError.internal()
        }
    }

    static func translate(_ error: HTTPError) -> HeraldError {
        switch error.status {
        case .notFound: .init(kind: .notFound, code: "not_found", message: "No such route.")
        case .methodNotAllowed:
            .init(kind: .badRequest, code: "method_not_allowed", message: "The route does not take this method.")
        case .contentTooLarge: .bodyTooLarge(limit: 0)
        case .unauthorized: .unauthorized()
        default:
            .init(
                kind: error.status.code >= 500 ? .internal : .badRequest, code: "http_\(error.status.code)",
                message: error.body ?? error.status.reasonPhrase)
        }
    }
}

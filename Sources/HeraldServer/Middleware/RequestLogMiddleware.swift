import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// One log line per request: method, route template (never the raw path or query, which may carry
/// ids and tokens), status and duration.
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        func log(_ status: Int) {
            let elapsed = ContinuousClock.now - start
            let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
            context.logger.info(
                "request",
                metadata: [
                    "http.method": "\(request.method.rawValue)",
                    "http.route": "\(context.endpointPath ?? "unmatched")",
                    "http.status": "\(status)",
                    "http.duration_ms": "\((milliseconds * 100).rounded() / 100)",
                ])
        }
        do {
            let response = try await next(request, context)
            log(response.status.code)
            return response
        } catch let error as any HTTPResponseError {
            log(error.status.code)
            throw error
        } catch {
            log(500)
            throw error
        }
    }
}

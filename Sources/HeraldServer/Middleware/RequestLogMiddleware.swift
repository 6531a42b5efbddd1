import HTTPTypes
import HeraldAPI
import HeraldCore
import Hummingbird
import Logging
import NIOCore

/// Gives every request an id and one log line: the client's `X-Request-Id` when usable (else a new
/// one) is on every line logged for the request — and on the notifications it creates, so their
/// jobs log it too — and is returned in `X-Request-Id`. The line names the method, the route
/// template (never the raw path or query, which may carry ids and tokens), status and duration.
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        let requestID =
            request.headers[.requestID].flatMap { RequestTrace.isValid($0) ? $0 : nil }
            ?? RequestTrace.generate()
        var context = context
        // Hummingbird's own per-request id key, so `context.id` and every line agree.
        context.logger[metadataKey: "hb.request.id"] = "\(requestID)"
        let logger = context.logger
        func log(_ status: Int) {
            let elapsed = ContinuousClock.now - start
            let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
            logger.info(
                "request",
                metadata: [
                    "http.method": "\(request.method.rawValue)",
                    "http.route": "\(context.endpointPath ?? "unmatched")",
                    "http.status": "\(status)",
                    "http.duration_ms": "\((milliseconds * 100).rounded() / 100)",
                ])
        }
        do {
            var response = try await RequestTrace.$requestID.withValue(requestID) {
                try await next(request, context)
            }
            response.headers[.requestID] = requestID
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

extension HTTPField.Name {
    /// `X-Request-Id`: the request's id, honoured from the client or generated, and returned.
    static let requestID = Self("X-Request-Id")!
}

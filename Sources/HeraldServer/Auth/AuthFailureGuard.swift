import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import Hummingbird
import Logging

/// Limits how often one client address may present credentials that are refused
/// (`http.auth_failures_per_minute`): every surface's refusals count (a `401` anywhere, and what a
/// dialect says refuses a caller's credentials: an SNS signature `403`, an unknown Home Assistant
/// push token), and an address that used up its allowance is answered `429` with `Retry-After` in
/// its surface's error shape, before any credential is looked at, until its allowance refills.
/// Requests that succeed cost nothing, and the public routes (health, readiness, the document, the
/// VAPID key) are never refused. The address is the TCP peer's: behind a reverse proxy its clients
/// share one allowance.
struct AuthFailureGuard: RouterMiddleware {
    typealias Context = HeraldRequestContext

    let limiter: FailureLimiter
    let now: @Sendable () -> Date

    /// Routes that take no credential and stay open to everyone.
    static let publicPaths: Set<String> = ["/healthz", "/readyz", "/openapi.yaml"]

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        guard !Self.publicPaths.contains(path), !path.hasPrefix("/v1/webpush/") else {
            return try await next(request, context)
        }
        let address = context.clientAddress
        if let retryAfter = limiter.retryAfter(address, now: now()) {
            context.logger.notice(
                "request refused: too many refused credentials from this address",
                metadata: ["herald.retry_after": "\(retryAfter)"])
            var response = try Self.refusal(path: path, retryAfter: retryAfter, request: request, context: context)
            response.headers[.retryAfter] = String(retryAfter)
            return response
        }
        do {
            let response = try await next(request, context)
            if Self.refusesCredentials(path: path, status: response.status) { limiter.fail(address, now: now()) }
            return response
        } catch let error as any HTTPResponseError {
            if Self.refusesCredentials(path: path, status: error.status) { limiter.fail(address, now: now()) }
            throw error
        }
    }

    /// Whether an answer of `status` on `path` refused the caller's credentials.
    static func refusesCredentials(path: String, status: HTTPResponse.Status) -> Bool {
        status == .unauthorized
            || HeraldApplication.dialects.contains { $0.refusesCredentials(path: path, status: status) }
    }

    /// The `429` for `path`: its dialect's error body, or the native one.
    static func refusal(path: String, retryAfter: Int, request: Request, context: Context) throws -> Response {
        for dialect in HeraldApplication.dialects {
            if let response = dialect.tooManyRefusedCredentials(path: path, retryAfter: retryAfter) { return response }
        }
        return try HeraldError(
            kind: .tooManyRequests, code: "rate_limited",
            message: "Too many requests with refused credentials from this address; try again in \(retryAfter) seconds."
        ).response(from: request, context: context)
    }
}

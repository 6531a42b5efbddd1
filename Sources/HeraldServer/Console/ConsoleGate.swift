import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import Hummingbird

/// Resolves the console's session cookie to the app's server-key principal, for the native API and
/// the console's own routes: the cookie must be a valid session that was not signed out (the store
/// says, so a sign-out on one node holds on all), and the request must carry its CSRF token in
/// `X-CSRF-Token` (every method, reads included).
struct ConsoleGate: SessionCredentials {
    let sessions: ConsoleSessions
    let apps: AppDirectory
    /// Where signed-out sessions are kept.
    let store: any ConsoleSessionStore
    let now: @Sendable () -> Date

    /// The session the request's cookie carries; nil without the cookie.
    /// - Throws: `HeraldError.unauthorized` when the cookie holds no valid session (expired, signed
    ///   out, tampered, or its app's server key rotated); what the store throws.
    func session(_ request: Request) async throws -> ConsoleSessions.Session? {
        guard let value = Self.cookie(ConsoleSessions.cookieName, in: request.headers) else { return nil }
        guard let session = sessions.verify(value, now: now(), serverKey: apps.serverKey(appID:)),
            try await !store.isConsoleSessionRevoked(digest: ConsoleSessions.digest(of: session))
        else {
            throw HeraldError(
                kind: .unauthorized, code: "session_expired",
                message: "The console session has expired, was signed out or is no longer valid; sign in again.")
        }
        return session
    }

    /// The principal of a console request: the app's server key, once the session and its CSRF token
    /// are checked; nil when the request has no session cookie.
    /// - Throws: `HeraldError` `session_expired` (401), `csrf_failed` (403); what the store throws.
    func principal(_ request: Request) async throws -> Principal? {
        guard let session = try await self.session(request) else { return nil }
        try checkCSRF(request, for: session)
        return .server(appID: session.appID)
    }

    /// Signs out the session the request's cookie carries, when it still is one: from then on every
    /// node sharing the store refuses it. A cookie that holds no session (none, expired, already
    /// signed out) needs nothing more.
    /// - Returns: The session ended; nil when there was none.
    /// - Throws: `HeraldError` `csrf_failed` (403) when the session's CSRF token is missing or wrong
    ///   (nothing is changed); what the store throws.
    func signOut(_ request: Request) async throws -> ConsoleSessions.Session? {
        guard let value = Self.cookie(ConsoleSessions.cookieName, in: request.headers),
            let session = sessions.verify(value, now: now(), serverKey: apps.serverKey(appID:))
        else { return nil }
        try checkCSRF(request, for: session)
        try await store.revokeConsoleSession(digest: ConsoleSessions.digest(of: session), expiresAt: session.expiresAt)
        return session
    }

    private func checkCSRF(_ request: Request, for session: ConsoleSessions.Session) throws(HeraldError) {
        guard sessions.checkCSRF(request.headers[.csrfToken], for: session) else {
            throw HeraldError(
                kind: .forbidden, code: "csrf_failed",
                message: "X-CSRF-Token is missing or does not match the console session.", field: "X-CSRF-Token")
        }
    }

    /// A cookie's value from the `Cookie` header(s).
    static func cookie(_ name: String, in headers: HTTPFields) -> String? {
        for header in headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name {
                    return parts[1].trimmingCharacters(in: .whitespaces)
                }
            }
        }
        return nil
    }
}

extension HTTPField.Name {
    /// The console's CSRF token header.
    static let csrfToken = Self("X-CSRF-Token")!
}

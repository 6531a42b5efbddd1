import Foundation
import HTTPTypes
import HeraldCore
import Hummingbird

/// Resolves the console's session cookie to the app's server-key principal, for the native API and
/// the console's own routes: the cookie must be a valid session, and the request must carry its CSRF
/// token in `X-CSRF-Token` (every method, reads included).
struct ConsoleGate: Sendable {
    let sessions: ConsoleSessions
    let apps: AppDirectory
    let now: @Sendable () -> Date

    /// The session the request's cookie carries; nil without the cookie.
    /// - Throws: `HeraldError.unauthorized` when the cookie holds no valid session (expired, tampered,
    ///   or its app's server key rotated).
    func session(_ request: Request) throws(HeraldError) -> ConsoleSessions.Session? {
        guard let value = Self.cookie(ConsoleSessions.cookieName, in: request.headers) else { return nil }
        guard let session = sessions.verify(value, now: now(), serverKey: apps.serverKey(appID:)) else {
            throw HeraldError(
                kind: .unauthorized, code: "session_expired",
                message: "The console session has expired or is no longer valid; sign in again.")
        }
        return session
    }

    /// The principal of a console request: the app's server key, once the session and its CSRF token
    /// are checked; nil when the request has no session cookie.
    /// - Throws: `HeraldError` `session_expired` (401), `csrf_failed` (403).
    func principal(_ request: Request) throws(HeraldError) -> Principal? {
        guard let session = try self.session(request) else { return nil }
        guard sessions.checkCSRF(request.headers[.csrfToken], for: session) else {
            throw HeraldError(
                kind: .forbidden, code: "csrf_failed",
                message: "X-CSRF-Token is missing or does not match the console session.", field: "X-CSRF-Token")
        }
        return .server(appID: session.appID)
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

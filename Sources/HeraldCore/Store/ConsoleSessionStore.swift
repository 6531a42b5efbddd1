import Foundation

/// The web console's signed-out sessions, kept where every node sharing the store reads them: a
/// console session is a signed cookie any node can verify on its own, so signing out ends it only
/// once every node refuses it from then on. A session is named by a digest of its cookie, never
/// the cookie itself, and kept until it would have expired anyway (the clean-up job drops it then).
public protocol ConsoleSessionStore: Sendable {
    /// Records that the session `digest` names has ended; `expiresAt` is when it would have expired.
    /// Revoking a session twice keeps it revoked.
    func revokeConsoleSession(digest: String, expiresAt: Date) async throws

    /// Whether the session `digest` names was signed out.
    func isConsoleSessionRevoked(digest: String) async throws -> Bool
}

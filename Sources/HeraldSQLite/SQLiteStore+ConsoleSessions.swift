import Foundation
import GRDB
import HeraldCore

extension SQLiteStore: ConsoleSessionStore {
    public func revokeConsoleSession(digest: String, expiresAt: Date) async throws {
        try await durableWrite { db in
            try db.cachedExecute(
                sql: """
                    INSERT INTO console_revocations (digest, expires_at) VALUES (?, ?)
                    ON CONFLICT (digest) DO NOTHING
                    """,
                arguments: [digest, expiresAt.timeIntervalSince1970])
        }
    }

    public func isConsoleSessionRevoked(digest: String) async throws -> Bool {
        try await database.read { db in
            try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT 1 FROM console_revocations WHERE digest = ?"), arguments: [digest])
                ?? false
        }
    }
}

import Foundation
import HeraldCore
import PostgresNIO

extension PostgresStore: ConsoleSessionStore {
    public func revokeConsoleSession(digest: String, expiresAt: Date) async throws {
        try await transaction { connection in
            try await connection.run(
                "INSERT INTO console_revocations (digest, expires_at) VALUES ($1, $2) ON CONFLICT (digest) DO NOTHING",
                [digest, expiresAt.timeIntervalSince1970])
        }
    }

    public func isConsoleSessionRevoked(digest: String) async throws -> Bool {
        try await read { connection in
            try await !connection.rows("SELECT 1 FROM console_revocations WHERE digest = $1", [digest]).isEmpty
        }
    }
}

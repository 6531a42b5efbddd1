import Foundation
import HeraldCore
import PostgresNIO

extension PostgresStore: JobQueue {
    public func scheduleJob(kind: JobKind, reference: String, runAt: Date) async throws {
        try await transaction { connection in
            try await self.scheduleJob(connection, kind: kind, reference: reference, runAt: runAt)
        }
    }

    /// Stores or moves a job earlier in the caller's transaction, and announces it to every node
    /// when that transaction commits.
    func scheduleJob(_ connection: PostgresConnection, kind: JobKind, reference: String, runAt: Date) async throws {
        try await connection.run(
            """
            INSERT INTO jobs (kind, reference, run_at) VALUES ($1, $2, $3)
            ON CONFLICT (kind, reference) DO UPDATE SET run_at = least(jobs.run_at, excluded.run_at)
            """, [kind.rawValue, reference, runAt.timeIntervalSince1970])
        try await connection.notifyJobs()
    }

    public func claimJob(kinds: [JobKind], owner: String, now: Date, lockedUntil: Date) async throws -> Job? {
        // One statement: the due job is locked (skipping those another node is claiming) and leased.
        let rows = try await read { connection in
            try await connection.rows(
                """
                UPDATE jobs SET locked_by = $1, locked_until = $2, attempts = attempts + 1
                WHERE id = (
                    SELECT id FROM jobs WHERE kind = ANY($3) AND run_at <= $4
                        AND (locked_until IS NULL OR locked_until < $4)
                    ORDER BY run_at LIMIT 1 FOR UPDATE SKIP LOCKED)
                RETURNING id, kind, reference, attempts
                """, [owner, lockedUntil.timeIntervalSince1970, kinds.map(\.rawValue), now.timeIntervalSince1970])
        }
        return try rows.first.map { row in
            Job(
                id: try row.get("id"), kind: JobKind(rawValue: try row.get("kind")),
                reference: try row.get("reference"),
                attempts: try row.get("attempts"))
        }
    }

    public func queueStatistics(now: Date) async throws -> QueueStatistics {
        let rows = try await read { connection in
            try await connection.rows(
                """
                SELECT
                    COUNT(*) FILTER (WHERE locked_until >= $1) AS running,
                    COUNT(*) FILTER (WHERE (locked_until IS NULL OR locked_until < $1) AND run_at <= $1) AS due,
                    COUNT(*) FILTER (WHERE (locked_until IS NULL OR locked_until < $1) AND run_at > $1) AS scheduled,
                    MIN(run_at) FILTER (WHERE (locked_until IS NULL OR locked_until < $1) AND run_at <= $1) AS oldest
                FROM jobs
                """, [now.timeIntervalSince1970])
        }
        guard let row = rows.first else { return QueueStatistics() }
        return QueueStatistics(
            due: Int(try row.get("due", as: Int64.self)), running: Int(try row.get("running", as: Int64.self)),
            scheduled: Int(try row.get("scheduled", as: Int64.self)),
            oldestDueAt: try row.get("oldest", as: Double?.self).map(Date.init(timeIntervalSince1970:)))
    }

    public func releaseJob(id: Int64, owner: String, runAt: Date, error: String?) async throws {
        try await transaction { connection in
            let released = try await connection.changes(
                """
                UPDATE jobs SET locked_by = NULL, locked_until = NULL, run_at = $1, last_error = $2
                WHERE id = $3 AND locked_by = $4
                """, [runAt.timeIntervalSince1970, error, id, owner])
            // Another node may take it when it is due.
            if released > 0 { try await connection.notifyJobs() }
        }
    }

    public func finishJob(id: Int64, owner: String) async throws {
        try await read { connection in
            try await connection.run("DELETE FROM jobs WHERE id = $1 AND locked_by = $2", [id, owner])
        }
    }

    public func renewJob(id: Int64, owner: String, lockedUntil: Date) async throws -> Bool {
        try await read { connection in
            try await connection.changes(
                "UPDATE jobs SET locked_until = $1 WHERE id = $2 AND locked_by = $3",
                [lockedUntil.timeIntervalSince1970, id, owner]) > 0
        }
    }
}

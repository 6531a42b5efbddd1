import Foundation
import GRDB
import HeraldCore

extension SQLiteStore: JobQueue {
    public func scheduleJob(kind: JobKind, reference: String, runAt: Date) async throws {
        try await durableWrite { db in try self.scheduleJob(db, kind: kind, reference: reference, runAt: runAt) }
    }

    func scheduleJob(_ db: Database, kind: JobKind, reference: String, runAt: Date) throws {
        let signals = self.signals
        db.afterNextTransaction { _ in signals.signal() }
        try db.cachedExecute(
            sql: """
                INSERT INTO jobs (kind, reference, run_at) VALUES (?, ?, ?)
                ON CONFLICT (kind, reference) DO UPDATE SET run_at = min(run_at, excluded.run_at)
                """,
            arguments: [kind.rawValue, reference, runAt.timeIntervalSince1970])
    }

    public func jobSignals() -> AsyncStream<Void> { signals.stream() }

    public func claimJob(kinds: [JobKind], owner: String, now: Date, lockedUntil: Date) async throws -> Job? {
        let marks = Self.placeholders(kinds.count)
        let nowValue = now.timeIntervalSince1970
        var arguments: [any DatabaseValueConvertible] = [owner, lockedUntil.timeIntervalSince1970]
        arguments += kinds.map(\.rawValue)
        arguments += [nowValue, nowValue]
        let values = StatementArguments(arguments.map(\.databaseValue))
        // `+kind`: the due index (run_at) finds the earliest due job at once; the (kind, reference)
        // one would read every job of the kind and sort them, on each claim, which slows as a
        // backlog grows, just when workers are behind. (Cached: one statement per count of kinds.)
        return try await groupCommit.write(durable: false) { db in
            try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                            UPDATE jobs SET locked_by = ?, locked_until = ?, attempts = attempts + 1
                        WHERE id = (
                            SELECT id FROM jobs WHERE +kind IN (\(marks)) AND run_at <= ?
                                AND (locked_until IS NULL OR locked_until < ?)
                            ORDER BY run_at LIMIT 1)
                        RETURNING id, kind, reference, attempts
                        """),
                arguments: values
            ).map {
                Job(
                    id: $0["id"], kind: JobKind(rawValue: $0["kind"]), reference: $0["reference"],
                    attempts: $0["attempts"])
            }
        }
    }

    public func queueStatistics(now: Date) async throws -> QueueStatistics {
        let nowValue = now.timeIntervalSince1970
        return try await database.read { db in
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT
                            COUNT(*) FILTER (WHERE locked_until >= ?1) AS running,
                            COUNT(*) FILTER (WHERE (locked_until IS NULL OR locked_until < ?1) AND run_at <= ?1) AS due,
                            COUNT(*) FILTER (WHERE (locked_until IS NULL OR locked_until < ?1) AND run_at > ?1) AS scheduled,
                            MIN(run_at) FILTER (WHERE (locked_until IS NULL OR locked_until < ?1) AND run_at <= ?1) AS oldest
                        FROM jobs
                        """), arguments: [nowValue])
            return QueueStatistics(
                due: row?["due"] ?? 0, running: row?["running"] ?? 0, scheduled: row?["scheduled"] ?? 0,
                oldestDueAt: (row?["oldest"] as Double?).map(Date.init(timeIntervalSince1970:)))
        }
    }

    public func releaseJob(id: Int64, owner: String, runAt: Date, error: String?) async throws {
        try await groupCommit.write(durable: false) { db in
            try db.cachedExecute(
                sql: """
                    UPDATE jobs SET locked_by = NULL, locked_until = NULL, run_at = ?, last_error = ?
                    WHERE id = ? AND locked_by = ?
                    """,
                arguments: [runAt.timeIntervalSince1970, error, id, owner])
        }
    }

    public func finishJob(id: Int64, owner: String) async throws {
        try await groupCommit.write(durable: false) { db in
            try db.cachedExecute(sql: "DELETE FROM jobs WHERE id = ? AND locked_by = ?", arguments: [id, owner])
        }
    }

    public func renewJob(id: Int64, owner: String, lockedUntil: Date) async throws -> Bool {
        try await groupCommit.write(durable: false) { db in
            try db.cachedExecute(
                sql: "UPDATE jobs SET locked_until = ? WHERE id = ? AND locked_by = ?",
                arguments: [lockedUntil.timeIntervalSince1970, id, owner])
            return db.changesCount > 0
        }
    }

    /// Unlocks jobs whose workers died with an earlier process, and the webhook events it had claimed:
    /// one SQLite database serves one node, so `herald serve` calls this at start.
    /// - Returns: How many jobs were unlocked.
    public func recoverJobs() async throws -> Int {
        // One SQLite database serves one node: a lock that exists before this process claimed
        // anything belongs to a process that is gone.
        try await write { db in
            try db.execute(sql: "UPDATE jobs SET locked_by = NULL, locked_until = NULL WHERE locked_by IS NOT NULL")
            let jobs = db.changesCount
            // So are its webhook events' leases: they are due again now, not when the lease would have ended.
            try db.execute(
                sql: """
                    UPDATE webhook_deliveries SET locked_by = NULL, locked_until = NULL
                    WHERE state = 'pending' AND locked_by IS NOT NULL
                    """)
            // And its Live Activity claims: none of its sends is in flight any more.
            try db.execute(
                sql: "UPDATE live_activity_members SET sending_until = NULL WHERE sending_until IS NOT NULL")
            return jobs
        }
    }
}

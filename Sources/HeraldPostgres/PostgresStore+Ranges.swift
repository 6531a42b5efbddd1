import Foundation
import HeraldCore
import PostgresNIO

// The ranges a large notification's target is cut into, each worked as a job of its own by any
// node sharing the database.
extension PostgresStore {
    public func addRange(
        _ range: FanoutRange, jobID: Int64, owner: String, now: Date, lockedUntil: Date, waitUntil: Date
    ) async throws -> Bool {
        try await transaction { connection in
            guard
                try await connection.changes(
                    "UPDATE jobs SET locked_until = $1 WHERE id = $2 AND locked_by = $3",
                    [lockedUntil.timeIntervalSince1970, jobID, owner]) == 1
            else { return false }
            let last = range.through == nil
            // The notification's row first, as a page commit locks it: a range finishing now waits
            // for this transaction and then sees `ranged`.
            try await connection.run(
                """
                UPDATE notifications SET cursor = $1, status = 'sending', started_at = coalesce(started_at, $2)
                WHERE id = $3
                """,
                [last ? FanoutRange.ranged : FanoutRange.ranging, now.timeIntervalSince1970, range.notificationID])
            try await connection.run(
                """
                INSERT INTO fanout_ranges (notification_id, idx, after_key, through_key) VALUES ($1, $2, $3, $4)
                ON CONFLICT (notification_id, idx) DO NOTHING
                """, [range.notificationID, range.index, range.after, range.through])
            try await self.scheduleJob(connection, kind: .range, reference: range.jobReference, runAt: now)
            if last {
                try await connection.run(
                    "UPDATE jobs SET locked_by = NULL, locked_until = NULL, run_at = $1 WHERE id = $2",
                    [waitUntil.timeIntervalSince1970, jobID])
            }
            return true
        }
    }

    public func fanoutRanges(notificationID: String) async throws -> [FanoutRange] {
        try await read { connection in
            try await connection.rows(
                "SELECT * FROM fanout_ranges WHERE notification_id = $1 ORDER BY idx", [notificationID])
        }.map(Self.decodeRange)
    }

    public func fanoutRange(notificationID: String, index: Int) async throws -> FanoutRange? {
        try await read { connection in
            try await connection.rows(
                "SELECT * FROM fanout_ranges WHERE notification_id = $1 AND idx = $2", [notificationID, index])
        }.first.map(Self.decodeRange)
    }

    public func releaseWhileRanging(
        jobID: Int64, owner: String, notificationID: String, runAt: Date
    ) async throws -> Bool {
        try await transaction { connection in
            // Locked as a page commit locks it: a range's final commit either finished before (and
            // is counted) or waits and then sees the job released.
            try await connection.run("SELECT 1 FROM notifications WHERE id = $1 FOR UPDATE", [notificationID])
            guard try await Self.rangesLeft(notificationID, connection) else { return false }
            let released = try await connection.changes(
                """
                UPDATE jobs SET locked_by = NULL, locked_until = NULL, run_at = $1 WHERE id = $2 AND locked_by = $3
                """, [runAt.timeIntervalSince1970, jobID, owner])
            if released > 0 { try await connection.notifyJobs() }
            return true
        }
    }

    /// In a range's final commit, after its update of the notification row: when no range is left
    /// and every range is stored, the notification's job is due at `at`.
    func wakeAfterRanges(_ notificationID: String, at: Date, _ connection: PostgresConnection) async throws {
        guard try await !Self.rangesLeft(notificationID, connection),
            try await connection.rows("SELECT cursor FROM notifications WHERE id = $1", [notificationID]).first?
                .get("cursor", as: String?.self) == FanoutRange.ranged
        else { return }
        try await scheduleJob(connection, kind: .notification, reference: notificationID, runAt: at)
    }

    /// Whether a range of the notification is not done.
    private static func rangesLeft(_ notificationID: String, _ connection: PostgresConnection) async throws -> Bool {
        try await !connection.rows(
            "SELECT 1 FROM fanout_ranges WHERE notification_id = $1 AND cursor IS DISTINCT FROM 'done' LIMIT 1",
            [notificationID]
        ).isEmpty
    }

    private static func decodeRange(_ row: PostgresRandomAccessRow) throws -> FanoutRange {
        FanoutRange(
            notificationID: try row.get("notification_id"), index: Int(try row.get("idx", as: Int64.self)),
            after: try row.get("after_key"), through: try row.get("through_key"), cursor: try row.get("cursor"))
    }
}

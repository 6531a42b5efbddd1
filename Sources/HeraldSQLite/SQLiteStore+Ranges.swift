import Foundation
import GRDB
import HeraldCore

// The ranges a large notification's target is cut into, each worked as a job of its own.
extension SQLiteStore {
    public func addRange(
        _ range: FanoutRange, jobID: Int64, owner: String, now: Date, lockedUntil: Date, waitUntil: Date
    ) async throws -> Bool {
        try await groupCommit.write(durable: false) { db in
            try db.cachedExecute(
                sql: "UPDATE jobs SET locked_until = ? WHERE id = ? AND locked_by = ?",
                arguments: [lockedUntil.timeIntervalSince1970, jobID, owner])
            guard db.changesCount == 1 else { return false }
            try db.cachedExecute(
                sql: """
                    INSERT INTO fanout_ranges (notification_id, idx, after_key, through_key) VALUES (?, ?, ?, ?)
                    ON CONFLICT (notification_id, idx) DO NOTHING
                    """,
                arguments: [range.notificationID, range.index, range.after, range.through])
            try self.scheduleJob(db, kind: .range, reference: range.jobReference, runAt: now)
            let last = range.through == nil
            try db.cachedExecute(
                sql: """
                    UPDATE notifications SET cursor = ?, status = 'sending', started_at = coalesce(started_at, ?)
                    WHERE id = ?
                    """,
                arguments: [
                    last ? FanoutRange.ranged : FanoutRange.ranging, now.timeIntervalSince1970, range.notificationID,
                ])
            if last {
                try db.cachedExecute(
                    sql: "UPDATE jobs SET locked_by = NULL, locked_until = NULL, run_at = ? WHERE id = ?",
                    arguments: [waitUntil.timeIntervalSince1970, jobID])
            }
            return true
        }
    }

    public func fanoutRanges(notificationID: String) async throws -> [FanoutRange] {
        try await database.read { db in
            try Row.fetchAll(
                db.cachedStatement(sql: "SELECT * FROM fanout_ranges WHERE notification_id = ? ORDER BY idx"),
                arguments: [notificationID]
            ).map(Self.decodeRange)
        }
    }

    public func fanoutRange(notificationID: String, index: Int) async throws -> FanoutRange? {
        try await database.read { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM fanout_ranges WHERE notification_id = ? AND idx = ?"),
                arguments: [notificationID, index]
            ).map(Self.decodeRange)
        }
    }

    public func releaseWhileRanging(
        jobID: Int64, owner: String, notificationID: String, runAt: Date
    ) async throws -> Bool {
        // One writer: no page commit runs between the count and the release.
        try await groupCommit.write(durable: false) { db in
            guard try Self.rangesLeft(db, notificationID: notificationID) else { return false }
            try db.cachedExecute(
                sql: """
                    UPDATE jobs SET locked_by = NULL, locked_until = NULL, run_at = ? WHERE id = ? AND locked_by = ?
                    """,
                arguments: [runAt.timeIntervalSince1970, jobID, owner])
            return true
        }
    }

    /// Moves a range's cursor in a page commit; a range made `done` when none is left and every
    /// range is stored makes the notification's job due now.
    func moveRange(_ db: Database, notificationID: String, index: Int, to cursor: String, at: Date?) throws {
        try db.cachedExecute(
            sql: "UPDATE fanout_ranges SET cursor = ? WHERE notification_id = ? AND idx = ?",
            arguments: [cursor, notificationID, index])
        guard cursor == "done", try !Self.rangesLeft(db, notificationID: notificationID),
            try String.fetchOne(
                db.cachedStatement(sql: "SELECT cursor FROM notifications WHERE id = ?"), arguments: [notificationID])
                == FanoutRange.ranged
        else { return }
        try scheduleJob(db, kind: .notification, reference: notificationID, runAt: at ?? Date())
    }

    /// Whether a range of the notification is not done.
    private static func rangesLeft(_ db: Database, notificationID: String) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT EXISTS (SELECT 1 FROM fanout_ranges WHERE notification_id = ? AND cursor IS NOT 'done')
                    """),
            arguments: [notificationID]) ?? false
    }

    private static func decodeRange(_ row: Row) -> FanoutRange {
        FanoutRange(
            notificationID: row["notification_id"], index: row["idx"], after: row["after_key"],
            through: row["through_key"],
            cursor: row["cursor"])
    }
}

import Foundation
import GRDB
import HeraldCore

extension SQLiteStore {
    // MARK: Rows

    func sealSpec(_ notification: PushNotification) throws -> (bytes: Data, sealed: Bool) {
        let (bytes, sealed) = try NotificationSpec(notification).stored(cipher: cipher)
        return (Data(bytes), sealed)
    }

    func decodeNotification(_ row: Row) throws -> PushNotification {
        func date(_ column: String) -> Date? { (row[column] as Double?).map(Date.init(timeIntervalSince1970:)) }
        let spec = try NotificationSpec(
            stored: Array(row["spec"] as Data), sealed: row["spec_sealed"] as Bool, cipher: cipher)
        guard let status = NotificationStatus(rawValue: row["status"]) else {
            throw HeraldError.internal("Stored notification is unreadable.")
        }
        var notification = PushNotification(
            id: row["id"], appID: row["app_id"], target: spec.target,
            payload: spec.payload, source: spec.source,
            category: spec.category, pushTime: spec.pushTime,
            notBefore: date("not_before"), expiresAt: date("expires_at"),
            respectPreferences: spec.respectPreferences, idempotencyKey: row["idempotency_key"],
            status: status,
            counts: NotificationCounts(
                targeted: row["targeted"], sent: row["sent"], failed: row["failed"], invalid: row["invalid"],
                skippedPreferences: row["skipped_preferences"], skippedExpired: row["skipped_expired"],
                rateLimited: row["rate_limited"], opened: row["opened"]),
            createdAt: date("created_at") ?? Date(timeIntervalSince1970: 0), startedAt: date("started_at"),
            completedAt: date("completed_at"), requestID: spec.requestID)
        notification.waitsForChannel = spec.waitsForChannel
        notification.updatable = spec.updatable
        notification.revision = spec.revision
        notification.liveActivity = spec.liveActivity
        notification.template = spec.template
        if row.hasColumn("locale_counts") {
            notification.counts.byLocale = NotificationCounts.byLocale(stored: row["locale_counts"])
        }
        return notification
    }

    public func cursor(notificationID: String) async throws -> String? {
        try await database.read { db in
            try String.fetchOne(
                db.cachedStatement(sql: "SELECT cursor FROM notifications WHERE id = ?"), arguments: [notificationID])
        }
    }
}

extension Database {
    /// Runs a statement compiled once per connection: the fan-out's page commits repeat the same few.
    func cachedExecute(sql: String, arguments: StatementArguments) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }
}

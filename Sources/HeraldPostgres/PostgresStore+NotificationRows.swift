import Foundation
import HeraldCore
import PostgresNIO

extension PostgresStore {
    // MARK: Rows

    /// The columns a notification is read from.
    static let notificationColumns = """
        id, app_id, status, spec, spec_sealed, idempotency_key, not_before, expires_at, targeted, sent, failed,
        invalid, skipped_preferences, skipped_expired, rate_limited, opened, created_at, started_at, completed_at,
        locale_counts::text AS locale_counts
        """

    func sealSpec(_ notification: PushNotification) throws -> (bytes: Data, sealed: Bool) {
        let (bytes, sealed) = try NotificationSpec(notification).stored(cipher: cipher)
        return (Data(bytes), sealed)
    }

    func decodeNotification(_ row: PostgresRandomAccessRow) throws -> PushNotification {
        let spec = try NotificationSpec(
            stored: try row.bytes("spec"), sealed: try row.get("spec_sealed", as: Bool.self), cipher: cipher)
        guard let status = NotificationStatus(rawValue: try row.get("status")) else {
            throw HeraldError.internal("Stored notification is unreadable.")
        }
        var notification = PushNotification(
            id: try row.get("id"), appID: try row.get("app_id"), target: spec.target,
            payload: spec.payload, source: spec.source,
            category: spec.category, pushTime: spec.pushTime,
            notBefore: try row.date("not_before"), expiresAt: try row.date("expires_at"),
            respectPreferences: spec.respectPreferences,
            idempotencyKey: try row.get("idempotency_key"), status: status,
            counts: try Self.counts(row),
            createdAt: try row.date("created_at") ?? Date(timeIntervalSince1970: 0),
            startedAt: try row.date("started_at"), completedAt: try row.date("completed_at"),
            requestID: spec.requestID)
        notification.waitsForChannel = spec.waitsForChannel
        notification.updatable = spec.updatable
        notification.revision = spec.revision
        notification.liveActivity = spec.liveActivity
        notification.template = spec.template
        notification.counts.byLocale = NotificationCounts.byLocale(
            stored: try row.get("locale_counts", as: String?.self))
        return notification
    }
}

extension PostgresStore {
    /// A `notifications` row's counts (the webhook events' final counts read them too).
    static func counts(_ row: PostgresRandomAccessRow) throws -> NotificationCounts {
        NotificationCounts(
            targeted: try row.get("targeted"), sent: try row.get("sent"), failed: try row.get("failed"),
            invalid: try row.get("invalid"), skippedPreferences: try row.get("skipped_preferences"),
            skippedExpired: try row.get("skipped_expired"), rateLimited: try row.get("rate_limited"),
            opened: try row.get("opened"))
    }
}

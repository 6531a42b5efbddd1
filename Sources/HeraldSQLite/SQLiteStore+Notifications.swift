import Foundation
import GRDB
import HeraldCore

extension SQLiteStore: DispatchLedger {
    public func insertNotification(
        _ notification: PushNotification, runAt: Date, idempotencyWindow: Duration, lease: JobLease?
    ) async throws -> (notification: PushNotification, created: Bool) {
        let spec = try sealSpec(notification)
        return try await groupCommit.write(durable: true) { db in
            if let key = notification.idempotencyKey,
                let row = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT * FROM notifications WHERE app_id = ? AND idempotency_key = ?"),
                    arguments: [notification.appID, key])
            {
                let earlier = try self.decodeNotification(row)
                if notification.createdAt.timeIntervalSince(earlier.createdAt) < idempotencyWindow.timeInterval {
                    return (earlier, false)
                }
                // The key is free again once its window has passed.
                try db.cachedExecute(
                    sql: "UPDATE notifications SET idempotency_key = NULL WHERE id = ?", arguments: [earlier.id])
            }
            try self.insertNotification(notification, spec: spec, runAt: runAt, lease: lease, db)
            return (notification, true)
        }
    }

    /// Inserts a notification and its job (leased when `lease` is given) in the caller's transaction.
    func insertNotification(
        _ notification: PushNotification, spec: (bytes: Data, sealed: Bool), runAt: Date, lease: JobLease?,
        _ db: Database
    ) throws {
        try db.cachedExecute(
            sql: """
                INSERT INTO notifications (id, app_id, status, spec, spec_sealed, idempotency_key, not_before,
                    expires_at, created_at, source)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                notification.id, notification.appID, notification.status.rawValue, spec.bytes, spec.sealed,
                notification.idempotencyKey, notification.notBefore?.timeIntervalSince1970,
                notification.expiresAt?.timeIntervalSince1970, notification.createdAt.timeIntervalSince1970,
                notification.source,
            ])
        guard let lease else {
            return try self.scheduleJob(db, kind: .notification, reference: notification.id, runAt: runAt)
        }
        // Leased to this node's worker, which has it in memory: no one is told to claim it.
        let id = try Int64.fetchOne(
            db.cachedStatement(
                sql: """
                    INSERT INTO jobs (kind, reference, run_at, locked_by, locked_until, attempts)
                    VALUES ('notification', ?, ?, ?, ?, 1) RETURNING id
                    """),
            arguments: [
                notification.id, runAt.timeIntervalSince1970, lease.owner, lease.until.timeIntervalSince1970,
            ])
        guard let id else { throw DatabaseError(message: "A leased job was not inserted.") }
        lease.grant(Job(id: id, kind: .notification, reference: notification.id, attempts: 1))
    }

    public func notification(appID: String, id: String) async throws -> PushNotification? {
        try await database.read { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM notifications WHERE app_id = ? AND id = ?"),
                arguments: [appID, id]
            ).map(self.decodeNotification)
        }
    }

    public func notification(id: String) async throws -> PushNotification? {
        try await database.read { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM notifications WHERE id = ?"), arguments: [id])
                .map(self.decodeNotification)
        }
    }

    public func notifications(
        appID: String, status: NotificationStatus?, page: PageRequest
    ) async throws -> [PushNotification] {
        var sql = "SELECT * FROM notifications WHERE app_id = ?"
        var arguments: [any DatabaseValueConvertible] = [appID]
        if let status {
            sql += " AND status = ?"
            arguments.append(status.rawValue)
        }
        if let after = page.after {
            sql += " AND id < ?"
            arguments.append(after)
        }
        sql += " ORDER BY id DESC LIMIT ?"
        arguments.append(page.limit)
        let values = StatementArguments(arguments.map(\.databaseValue))
        let query = sql
        return try await database.read { db in
            try Row.fetchAll(db, sql: query, arguments: values).map(self.decodeNotification)
        }
    }

    public func notification(appID: String, idempotencyKey: String) async throws -> PushNotification? {
        try await database.read { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM notifications WHERE app_id = ? AND idempotency_key = ?"),
                arguments: [appID, idempotencyKey]
            ).map(self.decodeNotification)
        }
    }

    public func replaceScheduledNotification(_ notification: PushNotification) async throws -> Bool {
        let spec = try sealSpec(notification)
        return try await durableWrite { db in
            try db.cachedExecute(
                sql: """
                    UPDATE notifications SET spec = ?, spec_sealed = ? WHERE app_id = ? AND id = ? AND status = 'scheduled'
                    AND NOT EXISTS (
                        SELECT 1 FROM jobs WHERE kind = 'notification' AND reference = notifications.id AND locked_by IS NOT NULL)
                    """,
                arguments: [spec.bytes, spec.sealed, notification.appID, notification.id])
            return db.changesCount > 0
        }
    }

    public func cancelNotification(appID: String, id: String, now: Date) async throws -> PushNotification? {
        try await durableWrite { db in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT * FROM notifications WHERE app_id = ? AND id = ?"),
                    arguments: [appID, id])
            else { return nil }
            let notification = try self.decodeNotification(row)
            guard !notification.status.isFinal else { return notification }
            try db.cachedExecute(
                sql: "UPDATE notifications SET status = 'canceled', completed_at = ? WHERE id = ?",
                arguments: [now.timeIntervalSince1970, id])
            try db.cachedExecute(sql: "DELETE FROM jobs WHERE kind = 'notification' AND reference = ?", arguments: [id])
            try db.cachedExecute(
                sql: """
                    DELETE FROM jobs WHERE kind = 'range' AND reference IN (
                        SELECT notification_id || '#' || idx FROM fanout_ranges WHERE notification_id = ?)
                    """,
                arguments: [id])
            try db.cachedExecute(sql: "DELETE FROM pending_deliveries WHERE notification_id = ?", arguments: [id])
            let canceled = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM notifications WHERE id = ?"), arguments: [id]
            )
            .map(self.decodeNotification)
            if let canceled {
                try self.tell(appID: appID, .notificationCanceled, db) {
                    WebhookEvent.finished(
                        appID: appID, notificationID: id, status: .canceled, counts: canceled.counts,
                        createdAt: canceled.createdAt, completedAt: now
                    ).map { [$0] } ?? []
                }
            }
            return canceled
        }
    }

    public func deliveries(
        notificationID: String, outcome: DeliveryRecord.Outcome?, page: PageRequest
    ) async throws -> [LedgerEntry] {
        var sql = "SELECT * FROM deliveries WHERE notification_id = ?"
        var arguments: [any DatabaseValueConvertible] = [notificationID]
        if let outcome {
            sql += " AND outcome = ?"
            arguments.append(outcome.rawValue)
        }
        if let after = page.after.flatMap(Int64.init) {
            sql += " AND sequence > ?"
            arguments.append(after)
        }
        sql += " ORDER BY sequence LIMIT ?"
        arguments.append(page.limit)
        let values = StatementArguments(arguments.map(\.databaseValue))
        let query = sql
        return try await database.read { db in
            try Row.fetchAll(db, sql: query, arguments: values).map(Self.ledgerEntry)
        }
    }

    /// A `deliveries` row as a ledger entry.
    static func ledgerEntry(_ row: Row) -> LedgerEntry {
        LedgerEntry(
            sequence: row["sequence"],
            record: DeliveryRecord(
                notificationID: row["notification_id"], installationID: row["installation_id"],
                tokenSuffix: row["token_suffix"], service: PushService(rawValue: row["service"]) ?? .apns,
                outcome: DeliveryRecord.Outcome(rawValue: row["outcome"]) ?? .failed,
                providerID: row["provider_id"], reason: row["reason"], attempts: row["attempts"],
                at: Date(timeIntervalSince1970: row["at"])))
    }
}

/// The listings, ledger reads, cancelling and opens above.
extension SQLiteStore: NotificationRecords {}

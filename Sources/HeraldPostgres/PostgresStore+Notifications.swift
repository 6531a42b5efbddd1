import Foundation
import HeraldCore
import PostgresNIO

extension PostgresStore: DispatchLedger {
    public func insertNotification(
        _ notification: PushNotification, runAt: Date, idempotencyWindow: Duration, lease: JobLease?
    ) async throws -> (notification: PushNotification, created: Bool) {
        let spec = try sealSpec(notification)
        guard let key = notification.idempotencyKey else {
            // One statement (its own transaction): the notification and its job in one round trip.
            if let lease {
                try await read { connection in
                    try await self.insertNotification(notification, spec: spec, runAt: runAt, lease: lease, connection)
                }
                return (notification, true)
            }
            return try await transaction { connection in
                try await self.insertNotification(notification, spec: spec, runAt: runAt, lease: nil, connection)
                return (notification, true)
            }
        }
        return try await transaction { connection in
            // Two nodes taking the same key at once serialize on this lock.
            try await connection.run(
                "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", ["\(notification.appID)\u{1F}\(key)"])
            if let row = try await connection.rows(
                "SELECT \(Self.notificationColumns) FROM notifications WHERE app_id = $1 AND idempotency_key = $2",
                [notification.appID, key]
            ).first {
                let earlier = try self.decodeNotification(row)
                if notification.createdAt.timeIntervalSince(earlier.createdAt) < idempotencyWindow.timeInterval {
                    return (earlier, false)
                }
                // The key is free again once its window has passed.
                try await connection.run(
                    "UPDATE notifications SET idempotency_key = NULL WHERE id = $1", [earlier.id])
            }
            try await self.insertNotification(notification, spec: spec, runAt: runAt, lease: lease, connection)
            return (notification, true)
        }
    }

    /// Inserts a notification and its job (leased when `lease` is given) in one statement, in the
    /// caller's transaction (or as its own when there is none and the job is leased). An unleased
    /// job is announced to every node when the transaction commits. `alongside` makes one more
    /// write of the same statement: given the values bound so far, it appends its own and returns
    /// its SQL (a data-modifying statement).
    func insertNotification(
        _ notification: PushNotification, spec: (bytes: Data, sealed: Bool), runAt: Date, lease: JobLease?,
        _ connection: PostgresConnection, alongside: ((inout [SQLBind]) -> String)? = nil
    ) async throws {
        var values: [SQLBind] = [
            notification.id, notification.appID, notification.status.rawValue, spec.bytes, spec.sealed,
            notification.idempotencyKey, notification.notBefore?.timeIntervalSince1970,
            notification.expiresAt?.timeIntervalSince1970, notification.createdAt.timeIntervalSince1970,
            notification.source, runAt.timeIntervalSince1970,
        ]
        guard let lease else {
            let also = alongside.map { $0(&values) } ?? ""
            try await connection.run(Self.insertNotificationSQL(leased: false, alongside: also), values)
            return try await connection.notifyJobs()
        }
        // Leased to this node's worker, which has it in memory: no node is told to claim it.
        values += [lease.owner, lease.until.timeIntervalSince1970]
        let id: Int64?
        if let alongside {
            let also = alongside(&values)
            id = try await connection.rows(Self.insertNotificationSQL(leased: true, alongside: also), values).first?
                .get("id")
        } else {
            id = try await connection.rows(InsertLeasedNotification(bindings: try PostgresBindings(values))).first
        }
        guard let id else { throw HeraldError.internal("A leased job was not inserted.") }
        lease.grant(Job(id: id, kind: .notification, reference: notification.id, attempts: 1))
    }

    /// The statement inserting a notification ($1–$10) and its job due at $11, leased to $12 until
    /// $13 when `leased` (answering its id), else announced; `alongside`, when not empty, is one
    /// more data-modifying statement run with them.
    static func insertNotificationSQL(leased: Bool, alongside: String) -> String {
        let insertJob =
            leased
            ? """
            INSERT INTO jobs (kind, reference, run_at, locked_by, locked_until, attempts)
            VALUES ('notification', $1, $11, $12, $13, 1) RETURNING id
            """
            : """
            INSERT INTO jobs (kind, reference, run_at) VALUES ('notification', $1, $11)
            ON CONFLICT (kind, reference) DO UPDATE SET run_at = least(jobs.run_at, excluded.run_at)
            """
        return """
            WITH inserted AS (
                INSERT INTO notifications (id, app_id, status, spec, spec_sealed, idempotency_key, not_before,
                    expires_at, created_at, source)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
            )\(alongside.isEmpty ? "" : ", alongside AS (\(alongside))")
            \(insertJob)
            """
    }

    public func notification(appID: String, id: String) async throws -> PushNotification? {
        let rows = try await read { connection in
            try await connection.rows(
                "SELECT \(Self.notificationColumns) FROM notifications WHERE app_id = $1 AND id = $2", [appID, id])
        }
        return try rows.first.map(decodeNotification)
    }

    public func notification(id: String) async throws -> PushNotification? {
        let rows = try await read { connection in
            try await connection.rows("SELECT \(Self.notificationColumns) FROM notifications WHERE id = $1", [id])
        }
        return try rows.first.map(decodeNotification)
    }

    public func notifications(
        appID: String, status: NotificationStatus?, page: PageRequest
    ) async throws -> [PushNotification] {
        var sql = "SELECT \(Self.notificationColumns) FROM notifications WHERE app_id = $1"
        var values: [SQLBind] = [appID]
        if let status {
            values.append(status.rawValue)
            sql += " AND status = $\(values.count)"
        }
        if let after = page.after {
            values.append(after)
            sql += " AND id < $\(values.count)"
        }
        values.append(page.limit)
        sql += " ORDER BY id DESC LIMIT $\(values.count)"
        let (query, binds) = (sql, values)
        return try await read { connection in try await connection.rows(query, binds) }.map(decodeNotification)
    }

    public func notification(appID: String, idempotencyKey: String) async throws -> PushNotification? {
        let rows = try await read { connection in
            try await connection.rows(
                "SELECT \(Self.notificationColumns) FROM notifications WHERE app_id = $1 AND idempotency_key = $2",
                [appID, idempotencyKey])
        }
        return try rows.first.map(decodeNotification)
    }

    public func replaceScheduledNotification(_ notification: PushNotification) async throws -> Bool {
        let spec = try sealSpec(notification)
        return try await read { connection in
            try await connection.changes(
                """
                    UPDATE notifications SET spec = $1, spec_sealed = $2 WHERE app_id = $3 AND id = $4 AND status = 'scheduled'
                AND NOT EXISTS (
                    SELECT 1 FROM jobs WHERE kind = 'notification' AND reference = notifications.id AND locked_by IS NOT NULL)
                """,
                [spec.bytes, spec.sealed, notification.appID, notification.id]) > 0
        }
    }

    public func cancelNotification(appID: String, id: String, now: Date) async throws -> PushNotification? {
        try await transaction { connection in
            guard
                let row = try await connection.rows(
                    "SELECT \(Self.notificationColumns) FROM notifications WHERE app_id = $1 AND id = $2 FOR UPDATE",
                    [appID, id]
                ).first
            else { return nil }
            let notification = try self.decodeNotification(row)
            guard !notification.status.isFinal else { return notification }
            try await connection.run(
                "UPDATE notifications SET status = 'canceled', completed_at = $1 WHERE id = $2",
                [now.timeIntervalSince1970, id])
            try await connection.run("DELETE FROM jobs WHERE kind = 'notification' AND reference = $1", [id])
            try await connection.run(
                """
                DELETE FROM jobs WHERE kind = 'range' AND reference IN (
                    SELECT notification_id || '#' || idx FROM fanout_ranges WHERE notification_id = $1)
                """, [id])
            try await connection.run("DELETE FROM pending_deliveries WHERE notification_id = $1", [id])
            // With the app's enabled endpoints: `notification.canceled` costs no statement when none wants it.
            guard
                let canceledRow = try await connection.rows(
                    """
                    SELECT \(Self.notificationColumns), \(Self.webhookColumns(appID: "notifications.app_id"))
                    FROM notifications WHERE id = $1
                    """, [id]
                ).first
            else { return nil }
            let canceled = try self.decodeNotification(canceledRow)
            try await Self.tell(.notificationCanceled, try Self.webhookSubscriptions(canceledRow), connection) {
                WebhookEvent.finished(
                    appID: appID, notificationID: id, status: .canceled, counts: canceled.counts,
                    createdAt: canceled.createdAt, completedAt: now
                ).map { [$0] } ?? []
            }
            return canceled
        }
    }

    public func deliveries(
        notificationID: String, outcome: DeliveryRecord.Outcome?, page: PageRequest
    ) async throws -> [LedgerEntry] {
        var sql = "SELECT * FROM deliveries WHERE notification_id = $1"
        var values: [SQLBind] = [notificationID]
        if let outcome {
            values.append(outcome.rawValue)
            sql += " AND outcome = $\(values.count)"
        }
        if let after = page.after.flatMap(Int64.init) {
            values.append(after)
            sql += " AND sequence > $\(values.count)"
        }
        values.append(page.limit)
        sql += " ORDER BY sequence LIMIT $\(values.count)"
        let (query, binds) = (sql, values)
        return try await read { connection in try await connection.rows(query, binds) }.map(Self.ledgerEntry)
    }

    /// A `deliveries` row as a ledger entry.
    static func ledgerEntry(_ row: PostgresRandomAccessRow) throws -> LedgerEntry {
        LedgerEntry(
            sequence: try row.get("sequence"),
            record: DeliveryRecord(
                notificationID: try row.get("notification_id"), installationID: try row.get("installation_id"),
                tokenSuffix: try row.get("token_suffix"),
                service: PushService(rawValue: try row.get("service")) ?? .apns,
                outcome: DeliveryRecord.Outcome(rawValue: try row.get("outcome")) ?? .failed,
                providerID: try row.get("provider_id"), reason: try row.get("reason"),
                attempts: try row.get("attempts"), at: try row.date("at") ?? Date(timeIntervalSince1970: 0)))
    }

    public func cursor(notificationID: String) async throws -> String? {
        try await read { connection in
            try await connection.rows("SELECT cursor FROM notifications WHERE id = $1", [notificationID]).first
        }.flatMap { try $0.get("cursor", as: String?.self) }
    }
}

/// The listings, ledger reads, cancelling and opens above.
extension PostgresStore: NotificationRecords {}

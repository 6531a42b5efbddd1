import Foundation
import HeraldCore
import PostgresNIO

extension PostgresStore: JobQueue, DispatchLedger {
    // MARK: Notifications

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
        lease.grant(Job(id: id, kind: "notification", reference: notification.id, attempts: 1))
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
            try await connection.run("DELETE FROM pending_deliveries WHERE notification_id = $1", [id])
            return try await connection.rows(
                "SELECT \(Self.notificationColumns) FROM notifications WHERE id = $1", [id]
            ).first.map(self.decodeNotification)
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

    // MARK: Jobs

    public func scheduleJob(kind: String, reference: String, runAt: Date) async throws {
        try await transaction { connection in
            try await self.scheduleJob(connection, kind: kind, reference: reference, runAt: runAt)
        }
    }

    /// Stores or moves a job earlier in the caller's transaction, and announces it to every node
    /// when that transaction commits.
    func scheduleJob(_ connection: PostgresConnection, kind: String, reference: String, runAt: Date) async throws {
        try await connection.run(
            """
            INSERT INTO jobs (kind, reference, run_at) VALUES ($1, $2, $3)
            ON CONFLICT (kind, reference) DO UPDATE SET run_at = least(jobs.run_at, excluded.run_at)
            """, [kind, reference, runAt.timeIntervalSince1970])
        try await connection.notifyJobs()
    }

    public func claimJob(kinds: [String], owner: String, now: Date, lockedUntil: Date) async throws -> Job? {
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
                """, [owner, lockedUntil.timeIntervalSince1970, kinds, now.timeIntervalSince1970])
        }
        return try rows.first.map { row in
            Job(
                id: try row.get("id"), kind: try row.get("kind"), reference: try row.get("reference"),
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

    // MARK: Fan-out

    public func resolve(
        _ target: NotificationTarget, appID: String, after: String?, limit: Int
    ) async throws -> [DeliveryTarget] {
        guard var (condition, values) = try audienceCondition(target, appID: appID) else { return [] }
        if let after {
            values.append(after)
            condition += " AND id > $\(values.count)"
        }
        values.append(limit)
        let sql = """
            SELECT \(Self.targetColumns) FROM installations
            WHERE \(condition) ORDER BY id LIMIT $\(values.count)
            """
        let binds = values
        let rows = try await read { connection in try await connection.run(sql, binds).rows }
        var targets: [DeliveryTarget] = []
        targets.reserveCapacity(rows.count)
        // By position: a broadcast's pages read thousands of rows.
        for row in rows {
            let (id, platform, service, environment, sealed, timezone, bundleID) = try row.decode(
                (String, String, String, String, Data, String?, String?).self)
            targets.append(
                try deliveryTarget(
                    id: id, platform: platform, service: service, environment: environment, sealed: Array(sealed),
                    timezone: timezone, bundleID: bundleID))
        }
        return targets
    }

    /// Every first page, with the preferences of the pages that ask for them, in one statement:
    /// a prepared one when every target is user ids or installation ids.
    public func resolveFirstPages(_ requests: [FirstPageRequest]) async throws -> FirstPages {
        if let byKey = try ResolveFirstPagesByKey(requests) {
            let rows = try await read { connection in try await connection.rows(byKey) }
            return try firstPages(rows, of: requests)
        }
        var values: [SQLBind] = []
        var selects: [String] = []
        for (index, request) in requests.enumerated() {
            guard
                let (condition, binds) = try audienceCondition(
                    request.target, appID: request.appID, firstParameter: values.count + 1)
            else { continue }
            values += binds
            values.append(request.limit)
            let preferences =
                request.withPreferences
                ? "(SELECT body FROM preferences WHERE installation_id = installations.id)" : "NULL::text"
            selects.append(
                """
                (SELECT \(index) AS request, \(Self.targetColumns), \(preferences) AS preferences
                FROM installations WHERE \(condition) ORDER BY id LIMIT $\(values.count))
                """)
        }
        guard !selects.isEmpty else { return try firstPages([], of: requests) }
        let sql = selects.joined(separator: "\nUNION ALL\n")
        let binds = values
        return try firstPages(try await read { connection in try await connection.rows(sql, binds) }, of: requests)
    }

    /// The pages of rows answering `request` (its index), `preferences` and ``targetColumns``: each in
    /// its installations' order as `resolve` reads them, cut to its request's limit.
    private func firstPages(_ rows: [PostgresRandomAccessRow], of requests: [FirstPageRequest]) throws -> FirstPages {
        var pages = [[DeliveryTarget]](repeating: [], count: requests.count)
        var preferences: [String: Preferences] = [:]
        for row in rows {
            let target = try deliveryTarget(row)
            pages[try row.get("request", as: Int.self)].append(target)
            if let body = try row.get("preferences", as: String?.self) {
                preferences[target.installationID] = try Preferences(stored: body)
            }
        }
        for index in pages.indices where !pages[index].isEmpty {
            var seen: Set<String> = []
            pages[index] = Array(
                pages[index].sorted { $0.installationID < $1.installationID }.filter {
                    seen.insert($0.installationID).inserted
                }
                .prefix(requests[index].limit))
        }
        // Only of the installations left on pages that asked (a key's rows past its page's limit go).
        let asked = Set(zip(requests, pages).filter(\.0.withPreferences).flatMap { $0.1.map(\.installationID) })
        return FirstPages(pages: pages, preferences: preferences.filter { asked.contains($0.key) })
    }

    /// The columns ``deliveryTarget(_:)`` reads.
    static let targetColumns = "id, platform, service, environment, token_sealed, timezone, bundle_id"

    /// An installation row (``targetColumns``) as a delivery target, its token opened.
    private func deliveryTarget(_ row: PostgresRandomAccessRow) throws -> DeliveryTarget {
        try deliveryTarget(
            id: row.get("id"), platform: row.get("platform"), service: row.get("service"),
            environment: row.get("environment"), sealed: row.bytes("token_sealed"), timezone: row.get("timezone"),
            bundleID: row.get("bundle_id"))
    }

    /// An installation's stored columns as a delivery target, its token opened.
    private func deliveryTarget(
        id: String, platform: String, service: String, environment: String, sealed: [UInt8], timezone: String?,
        bundleID: String?
    ) throws -> DeliveryTarget {
        guard let platform = Platform(rawValue: platform), let service = PushService(rawValue: service),
            let environment = PushEnvironment(rawValue: environment)
        else { throw HeraldError.internal("Stored installation has an unknown platform, service or environment.") }
        return DeliveryTarget(
            installationID: id, token: try cipher.openToken(sealed, service: service), platform: platform,
            service: service, environment: environment, timezone: timezone, bundleID: bundleID)
    }

    public func count(_ target: NotificationTarget, appID: String) async throws -> [PushService: Int] {
        try await read { connection in try await self.count(target, appID: appID, connection) }
    }

    /// Whether the target reaches at least one installation (an existence check, not a count).
    func reachesAnyone(
        _ target: NotificationTarget, appID: String, _ connection: PostgresConnection
    ) async throws -> Bool {
        guard let (condition, values) = try audienceCondition(target, appID: appID) else { return false }
        return try await !connection.rows("SELECT 1 FROM installations WHERE \(condition) LIMIT 1", values).isEmpty
    }

    /// A target's installations by service, on the caller's connection (none for raw tokens).
    func count(
        _ target: NotificationTarget, appID: String, _ connection: PostgresConnection
    ) async throws -> [PushService: Int] {
        guard let (condition, values) = try audienceCondition(target, appID: appID) else { return [:] }
        let rows = try await connection.rows(
            "SELECT service, count(*) AS n FROM installations WHERE \(condition) GROUP BY service", values)
        var counts: [PushService: Int] = [:]
        for row in rows {
            if let service = PushService(rawValue: try row.get("service")) { counts[service] = try row.get("n") }
        }
        return counts
    }

    /// The SQL condition selecting a target's installations; nil for raw tokens (no installations).
    /// Its placeholders start at `firstParameter`.
    private func audienceCondition(
        _ target: NotificationTarget, appID: String, firstParameter: Int = 1
    ) throws -> (String, [SQLBind])? {
        let offset = firstParameter - 1
        var conditions = ["app_id = $\(firstParameter)", "valid"]
        var values: [SQLBind] = [appID]
        func list(_ column: String, _ items: [String]) {
            values.append(items)
            conditions.append("\(column) = ANY($\(offset + values.count))")
        }
        switch target.audience {
        case .tokens: return nil
        case .all: break
        case .installationIDs(let ids): list("id", ids)
        case .userIDs(let ids): list("user_id", ids)
        case .channels(let channels):
            values.append(channels)
            conditions.append(
                """
                id IN (SELECT installation_id FROM installation_channels
                    WHERE app_id = $\(firstParameter) AND channel = ANY($\(offset + values.count)))
                """)
        case .query(let query):
            let compiled = try query.query.postgresCondition(firstParameter: offset + values.count + 1)
            conditions.append("(\(compiled.sql))")
            values += compiled.values
        }
        if let platforms = target.platforms { list("platform", platforms.map(\.rawValue).sorted()) }
        if let services = target.services { list("service", services.map(\.rawValue).sorted()) }
        return (conditions.joined(separator: " AND "), values)
    }

    public func wakeOfflineDeliveries(recipient: String, now: Date) async throws -> Int {
        try await transaction { connection in
            let rows = try await connection.rows(
                """
                UPDATE pending_deliveries SET run_at = $1 WHERE recipient = $2 AND reason = 'offline'
                RETURNING notification_id
                """, [now.timeIntervalSince1970, recipient])
            let notifications = try rows.map { try $0.get("notification_id", as: String.self) }
            for id in Set(notifications) {
                try await self.scheduleJob(connection, kind: "notification", reference: id, runAt: now)
            }
            return notifications.count
        }
    }

    public func duePending(notificationID: String, now: Date, limit: Int) async throws -> [PendingDelivery] {
        try await read { connection in
            try await connection.rows(
                """
                SELECT * FROM pending_deliveries WHERE notification_id = $1 AND run_at <= $2
                ORDER BY run_at, attempts LIMIT $3
                """, [notificationID, now.timeIntervalSince1970, limit])
        }.map { row in
            PendingDelivery(
                notificationID: try row.get("notification_id"), recipient: try row.get("recipient"),
                runAt: try row.date("run_at") ?? now, attempts: try row.get("attempts"),
                reason: PendingDelivery.Reason(rawValue: try row.get("reason")) ?? .retry)
        }
    }

    public func nextPending(notificationID: String) async throws -> Date? {
        try await read { connection in
            try await connection.rows(
                "SELECT min(run_at) AS next FROM pending_deliveries WHERE notification_id = $1", [notificationID])
        }.first.flatMap { try $0.date("next") }
    }

    public func preferences(installationIDs: [String]) async throws -> [String: Preferences] {
        guard !installationIDs.isEmpty else { return [:] }
        let rows = try await read { connection in
            try await connection.rows(
                "SELECT installation_id, body FROM preferences WHERE installation_id = ANY($1)", [installationIDs])
        }
        var result: [String: Preferences] = [:]
        for row in rows {
            result[try row.get("installation_id")] = try Preferences(stored: try row.get("body", as: String.self))
        }
        return result
    }

    public func incrementBadges(installationIDs: [String], now: Date) async throws -> [String: Int] {
        guard !installationIDs.isEmpty else { return [:] }
        let rows = try await read { connection in
            try await connection.rows(
                "UPDATE installations SET badge = badge + 1 WHERE id = ANY($1) RETURNING id, badge", [installationIDs])
        }
        var result: [String: Int] = [:]
        for row in rows { result[try row.get("id")] = try row.get("badge") }
        return result
    }

    public func commit(_ page: PageCommit) async throws -> Bool {
        var delivered: [(id: String, at: Double)] = []
        var otherEvents: [(id: String, event: InstallationEvent)] = []
        for (id, event) in page.installationEvents {
            if case .delivered(let at) = event {
                delivered.append((id, at.timeIntervalSince1970))
            } else {
                otherEvents.append((id, event))
            }
        }
        let held = CommitHeldPage(page: page, delivered: delivered)
        guard !otherEvents.isEmpty || !page.pending.isEmpty || !page.resolvedPending.isEmpty else {
            // The common page (deliveries, the ledger and counts): one statement, its own transaction.
            return try await read { connection in try await connection.rows(held).first == 1 }
        }
        return try await transaction { connection in
            guard try await connection.rows(held).first == 1 else { return false }
            for (id, event) in otherEvents { try await self.apply(event, to: id, connection) }
            for pending in page.pending {
                try await connection.run(
                    """
                    INSERT INTO pending_deliveries (notification_id, recipient, run_at, attempts, reason)
                    VALUES ($1, $2, $3, $4, $5)
                    ON CONFLICT (notification_id, recipient) DO UPDATE SET
                        run_at = excluded.run_at, attempts = excluded.attempts, reason = excluded.reason
                    """,
                    [
                        pending.notificationID, pending.recipient, pending.runAt.timeIntervalSince1970,
                        pending.attempts, pending.reason.rawValue,
                    ])
            }
            if !page.pending.isEmpty { try await connection.notifyJobs() }
            if !page.resolvedPending.isEmpty {
                try await connection.run(
                    "DELETE FROM pending_deliveries WHERE notification_id = $1 AND recipient = ANY($2)",
                    [page.notificationID, page.resolvedPending])
            }
            return true
        }
    }

    private func apply(_ event: InstallationEvent, to id: String, _ connection: PostgresConnection) async throws {
        switch event {
        case .delivered(let at):
            let time = at.timeIntervalSince1970
            try await connection.run(
                """
                UPDATE installations SET failure_count = 0, last_delivered_at = $1
                WHERE id = $2 AND (failure_count <> 0 OR last_delivered_at IS NULL
                    OR last_delivered_at < $3 OR last_delivered_at > $1)
                """, [time, id, time - InstallationEvent.deliveredResolution])
        case .invalidated(let reason, let since, let at):
            // APNs: a 410 whose timestamp is older than the installation's last update is stale
            // (the app registered the token again after APNs saw it go).
            try await connection.run(
                """
                UPDATE installations SET valid = FALSE, invalidated_at = $1, last_failure_at = $1,
                    last_failure_reason = $2
                WHERE id = $3 AND ($4::float8 IS NULL OR updated_at <= $4::float8)
                """, [at.timeIntervalSince1970, reason, id, since?.timeIntervalSince1970])
            // The ledger keeps the answer; the installation itself goes when its registration asked
            // for that (preferences and channels cascade).
            try await connection.run(
                "DELETE FROM installations WHERE id = $1 AND NOT valid AND delete_when_invalid", [id])
        case .failed(let reason, let at, let maxFailures):
            try await connection.run(
                """
                UPDATE installations SET failure_count = failure_count + 1, last_failure_at = $1,
                    last_failure_reason = $2,
                    valid = CASE WHEN failure_count + 1 >= $3 THEN FALSE ELSE valid END,
                    invalidated_at = CASE WHEN failure_count + 1 >= $3 AND valid THEN $1 ELSE invalidated_at END
                WHERE id = $4
                """, [at.timeIntervalSince1970, reason, maxFailures, id])
        }
    }

    // MARK: Opens

    public func recordOpen(
        appID: String, notificationID: String, installationID: String, userID: String?, openedAt: Date
    ) async throws -> OpenRecording {
        try await transaction { connection in
            // The notification's row is locked first: two nodes recording the same open serialize on
            // it, and the count moves only with a new opens row.
            guard
                try await !connection.rows(
                    "SELECT 1 FROM notifications WHERE app_id = $1 AND id = $2 FOR UPDATE", [appID, notificationID]
                ).isEmpty
            else { return .unknownNotification }
            guard
                let owner = try await connection.rows(
                    "SELECT user_id FROM installations WHERE app_id = $1 AND id = $2", [appID, installationID]
                ).first,
                try userID == nil || owner.get("user_id", as: String?.self) == userID
            else { return .unknownInstallation }
            let inserted = try await connection.changes(
                """
                INSERT INTO opens (notification_id, installation_id, opened_at) VALUES ($1, $2, $3)
                ON CONFLICT (notification_id, installation_id) DO NOTHING
                """, [notificationID, installationID, openedAt.timeIntervalSince1970])
            guard inserted == 1 else {
                let first = try await connection.rows(
                    "SELECT opened_at FROM opens WHERE notification_id = $1 AND installation_id = $2",
                    [notificationID, installationID]
                ).first?.date("opened_at")
                return .repeated(openedAt: first ?? openedAt)
            }
            try await connection.run("UPDATE notifications SET opened = opened + 1 WHERE id = $1", [notificationID])
            return .recorded(openedAt: openedAt)
        }
    }

    // MARK: Rows

    /// The columns a notification is read from.
    static let notificationColumns = """
        id, app_id, status, spec, spec_sealed, idempotency_key, not_before, expires_at, targeted, sent, failed,
        invalid, skipped_preferences, skipped_expired, rate_limited, opened, created_at, started_at, completed_at
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
        return PushNotification(
            id: try row.get("id"), appID: try row.get("app_id"), target: spec.target,
            payload: spec.payload, source: spec.source,
            category: spec.category, pushTime: spec.pushTime,
            notBefore: try row.date("not_before"), expiresAt: try row.date("expires_at"),
            respectPreferences: spec.respectPreferences,
            idempotencyKey: try row.get("idempotency_key"), status: status,
            counts: NotificationCounts(
                targeted: try row.get("targeted"), sent: try row.get("sent"), failed: try row.get("failed"),
                invalid: try row.get("invalid"), skippedPreferences: try row.get("skipped_preferences"),
                skippedExpired: try row.get("skipped_expired"), rateLimited: try row.get("rate_limited"),
                opened: try row.get("opened")),
            createdAt: try row.date("created_at") ?? Date(timeIntervalSince1970: 0),
            startedAt: try row.date("started_at"), completedAt: try row.date("completed_at"),
            requestID: spec.requestID)
    }
}

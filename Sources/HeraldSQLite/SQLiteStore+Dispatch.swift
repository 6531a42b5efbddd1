import Foundation
import GRDB
import HeraldCore

extension SQLiteStore: InstallationRegistry, JobQueue, DispatchLedger {
    // MARK: Notifications

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
            return try self.scheduleJob(db, kind: "notification", reference: notification.id, runAt: runAt)
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
        lease.grant(Job(id: id, kind: "notification", reference: notification.id, attempts: 1))
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
            try db.cachedExecute(sql: "DELETE FROM pending_deliveries WHERE notification_id = ?", arguments: [id])
            return try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM notifications WHERE id = ?"), arguments: [id]
            )
            .map(self.decodeNotification)
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

    // MARK: Jobs

    public func scheduleJob(kind: String, reference: String, runAt: Date) async throws {
        try await durableWrite { db in try self.scheduleJob(db, kind: kind, reference: reference, runAt: runAt) }
    }

    private func scheduleJob(_ db: Database, kind: String, reference: String, runAt: Date) throws {
        let signals = self.signals
        db.afterNextTransaction { _ in signals.signal() }
        try db.cachedExecute(
            sql: """
                INSERT INTO jobs (kind, reference, run_at) VALUES (?, ?, ?)
                ON CONFLICT (kind, reference) DO UPDATE SET run_at = min(run_at, excluded.run_at)
                """,
            arguments: [kind, reference, runAt.timeIntervalSince1970])
    }

    public func jobSignals() -> AsyncStream<Void> { signals.stream() }

    public func claimJob(kinds: [String], owner: String, now: Date, lockedUntil: Date) async throws -> Job? {
        let marks = Self.placeholders(kinds.count)
        let nowValue = now.timeIntervalSince1970
        var arguments: [any DatabaseValueConvertible] = [owner, lockedUntil.timeIntervalSince1970]
        arguments += kinds
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
            ).map { Job(id: $0["id"], kind: $0["kind"], reference: $0["reference"], attempts: $0["attempts"]) }
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

    /// Unlocks jobs whose workers died with an earlier process: one SQLite database serves one
    /// node, so `herald serve` calls this at start.
    /// - Returns: How many jobs were unlocked.
    public func recoverJobs() async throws -> Int {
        // One SQLite database serves one node: a lock that exists before this process claimed
        // anything belongs to a process that is gone.
        try await database.write { db in
            try db.execute(sql: "UPDATE jobs SET locked_by = NULL, locked_until = NULL WHERE locked_by IS NOT NULL")
            return db.changesCount
        }
    }

    // MARK: Fan-out

    public func resolve(
        _ target: NotificationTarget, appID: String, after: String?, limit: Int
    ) async throws -> [DeliveryTarget] {
        guard let query = try resolveQuery(target, appID: appID, after: after, limit: limit) else { return [] }
        return try await database.read { db in try self.fetchTargets(db, query, limit: limit) }
    }

    /// The pages and the preferences in one read transaction (one trip to a reader connection).
    public func resolveFirstPages(_ requests: [FirstPageRequest]) async throws -> FirstPages {
        let queries = try requests.map { try resolveQuery($0.target, appID: $0.appID, after: nil, limit: $0.limit) }
        return try await database.read { db in
            var pages: [[DeliveryTarget]] = []
            var preferring: [String] = []
            for (request, query) in zip(requests, queries) {
                let page = try query.map { try self.fetchTargets(db, $0, limit: request.limit) } ?? []
                if request.withPreferences { preferring += page.map(\.installationID) }
                pages.append(page)
            }
            return FirstPages(pages: pages, preferences: try self.fetchPreferences(db, installationIDs: preferring))
        }
    }

    /// The SQL and arguments of a page of `resolve`; nil when the target can match nothing.
    private func resolveQuery(
        _ target: NotificationTarget, appID: String, after: String?, limit: Int
    ) throws -> (sql: String, arguments: StatementArguments)? {
        guard var (condition, arguments) = try audienceCondition(target, appID: appID) else { return nil }
        if let after {
            condition += " AND id > ?"
            arguments += [after]
        }
        arguments += [limit]
        let sql = """
            SELECT id, platform, service, environment, token_sealed, timezone, bundle_id FROM installations
            WHERE \(condition) ORDER BY id LIMIT ?
            """
        return (sql, arguments)
    }

    private func fetchTargets(
        _ db: Database, _ query: (sql: String, arguments: StatementArguments), limit: Int
    ) throws -> [DeliveryTarget] {
        // Every page of a fan-out runs the same SQL: compile it once per connection.
        let cursor = try Row.fetchCursor(db.cachedStatement(sql: query.sql), arguments: query.arguments)
        var targets: [DeliveryTarget] = []
        targets.reserveCapacity(limit)
        while let row = try cursor.next() { targets.append(try decodeTarget(row)) }
        return targets
    }

    /// A row of `resolve`'s columns, read on GRDB's fast path while the cursor stands on it.
    private func decodeTarget(_ row: Row) throws -> DeliveryTarget {
        func enumeration<Value: RawRepresentable>(_ index: Int) throws -> Value where Value.RawValue == String {
            guard let value = Value(rawValue: row[index] as String) else {
                throw HeraldError.internal("Stored installation has an unknown \(Value.self).")
            }
            return value
        }
        let service: PushService = try enumeration(2)
        return DeliveryTarget(
            installationID: row[0],
            token: try cipher.openToken(Array(row[4] as Data), service: service),
            platform: try enumeration(1), service: service, environment: try enumeration(3), timezone: row[5],
            bundleID: row[6])
    }

    public func count(_ target: NotificationTarget, appID: String) async throws -> [PushService: Int] {
        try await database.read { db in try self.count(target, appID: appID, db) }
    }

    /// A target's installations by service, in the caller's transaction (none for raw tokens).
    /// Whether the target reaches at least one installation.
    func reachesAnyone(_ target: NotificationTarget, appID: String, _ db: Database) throws -> Bool {
        guard let (condition, arguments) = try audienceCondition(target, appID: appID) else { return false }
        let sql = "SELECT 1 FROM installations WHERE \(condition) LIMIT 1"
        // An event's check of its owners' devices runs in the writer: compiled once per list length,
        // not per event (a query's SQL varies with it and is not kept).
        if case .query = target.audience { return try Bool.fetchOne(db, sql: sql, arguments: arguments) == true }
        return try Bool.fetchOne(db.cachedStatement(sql: sql), arguments: arguments) == true
    }

    func count(_ target: NotificationTarget, appID: String, _ db: Database) throws -> [PushService: Int] {
        guard let (condition, arguments) = try audienceCondition(target, appID: appID) else { return [:] }
        // `+service`: grouping by the bare column lets SQLite walk the token index (app, service,
        // token) for its order and so read every installation of the app, whatever the condition.
        let sql = "SELECT +service AS service, count(*) AS n FROM installations WHERE \(condition) GROUP BY +service"
        var counts: [PushService: Int] = [:]
        for row in try Row.fetchAll(db, sql: sql, arguments: arguments) {
            if let service = PushService(rawValue: row["service"]) { counts[service] = row["n"] }
        }
        return counts
    }

    /// The SQL condition selecting a target's installations; nil for raw tokens (no installations).
    private func audienceCondition(
        _ target: NotificationTarget, appID: String
    ) throws -> (String, StatementArguments)? {
        var conditions = ["app_id = ?", "valid = 1"]
        var arguments: StatementArguments = [appID]
        func list(_ column: String, _ values: [String]) {
            conditions.append("\(column) IN (\(Self.placeholders(values.count)))")
            arguments += StatementArguments(values)
        }
        switch target.audience {
        case .tokens: return nil
        case .all: break
        case .installationIDs(let ids): list("id", ids)
        case .userIDs(let ids): list("user_id", ids)
        case .channels(let channels):
            let marks = Self.placeholders(channels.count)
            conditions.append(
                "id IN (SELECT installation_id FROM installation_channels WHERE app_id = ? AND channel IN (\(marks)))")
            arguments += [appID]
            arguments += StatementArguments(channels)
        case .query(let query):
            let compiled = try query.query.sqliteCondition()
            conditions.append("(\(compiled.sql))")
            arguments += compiled.arguments
        }
        if let platforms = target.platforms { list("platform", platforms.map(\.rawValue).sorted()) }
        if let services = target.services { list("service", services.map(\.rawValue).sorted()) }
        return (conditions.joined(separator: " AND "), arguments)
    }

    public func installations(appID: String, ids: [String]) async throws -> [Installation] {
        guard !ids.isEmpty else { return [] }
        let marks = Self.placeholders(ids.count)
        let values = StatementArguments(([appID] + ids).map(\.databaseValue))
        return try await database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM installations WHERE app_id = ? AND id IN (\(marks)) ORDER BY id",
                arguments: values
            ).map(self.decode)
        }
    }

    public func wakeOfflineDeliveries(recipient: String, now: Date) async throws -> Int {
        try await database.write { db in
            let notifications = try String.fetchAll(
                db.cachedStatement(
                    sql: """
                        UPDATE pending_deliveries SET run_at = ? WHERE recipient = ? AND reason = 'offline'
                        RETURNING notification_id
                        """),
                arguments: [now.timeIntervalSince1970, recipient])
            for id in Set(notifications) {
                try self.scheduleJob(db, kind: "notification", reference: id, runAt: now)
            }
            return notifications.count
        }
    }

    public func duePending(notificationID: String, now: Date, limit: Int) async throws -> [PendingDelivery] {
        try await database.read { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT * FROM pending_deliveries WHERE notification_id = ? AND run_at <= ?
                        ORDER BY run_at, attempts LIMIT ?
                        """),
                arguments: [notificationID, now.timeIntervalSince1970, limit]
            ).map { row in
                PendingDelivery(
                    notificationID: row["notification_id"], recipient: row["recipient"],
                    runAt: Date(timeIntervalSince1970: row["run_at"]), attempts: row["attempts"],
                    reason: PendingDelivery.Reason(rawValue: row["reason"]) ?? .retry)
            }
        }
    }

    public func nextPending(notificationID: String) async throws -> Date? {
        try await database.read { db in
            try Double.fetchOne(
                db.cachedStatement(sql: "SELECT min(run_at) FROM pending_deliveries WHERE notification_id = ?"),
                arguments: [notificationID]
            ).map(Date.init(timeIntervalSince1970:))
        }
    }

    public func preferences(installationIDs: [String]) async throws -> [String: Preferences] {
        guard !installationIDs.isEmpty else { return [:] }
        return try await database.read { db in try self.fetchPreferences(db, installationIDs: installationIDs) }
    }

    private func fetchPreferences(_ db: Database, installationIDs: [String]) throws -> [String: Preferences] {
        guard !installationIDs.isEmpty else { return [:] }
        var result: [String: Preferences] = [:]
        for row in try Row.fetchAll(
            db.cachedStatement(
                sql:
                    "SELECT installation_id, body FROM preferences WHERE installation_id IN (\(Self.placeholders(installationIDs.count)))"
            ),
            arguments: StatementArguments(installationIDs.map(\.databaseValue)))
        {
            result[row["installation_id"]] = try Preferences(stored: row["body"] as String)
        }
        return result
    }

    public func incrementBadges(installationIDs: [String], now: Date) async throws -> [String: Int] {
        guard !installationIDs.isEmpty else { return [:] }
        let marks = Self.placeholders(installationIDs.count)
        let values = StatementArguments(installationIDs.map(\.databaseValue))
        // Concurrent pages' increments share a transaction.
        return try await groupCommit.write(durable: false) { db in
            var result: [String: Int] = [:]
            for row in try Row.fetchAll(
                db, sql: "UPDATE installations SET badge = badge + 1 WHERE id IN (\(marks)) RETURNING id, badge",
                arguments: values)
            {
                result[row["id"]] = row["badge"]
            }
            return result
        }
    }

    public func commit(_ page: PageCommit) async throws -> Bool {
        try await groupCommit.write(durable: false) { db in
            guard
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM jobs WHERE id = ? AND locked_by = ?"),
                    arguments: [page.jobID, page.owner])
                    == true
            else { return false }
            if let lockedUntil = page.lockedUntil {
                try db.cachedStatement(sql: "UPDATE jobs SET locked_until = ? WHERE id = ?").execute(
                    arguments: [lockedUntil.timeIntervalSince1970, page.jobID])
            }
            for record in page.ledger {
                try db.cachedExecute(
                    sql: """
                        INSERT INTO deliveries (notification_id, installation_id, token_suffix, service, outcome,
                            provider_id, reason, attempts, at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        record.notificationID, record.installationID, record.tokenSuffix, record.service.rawValue,
                        record.outcome.rawValue, record.providerID, record.reason, record.attempts,
                        record.at.timeIntervalSince1970,
                    ])
            }
            // Deliveries are most events: one statement per chunk of them, not one per device.
            var delivered: [Double: [String]] = [:]
            for (id, event) in page.installationEvents {
                if case .delivered(let at) = event {
                    delivered[at.timeIntervalSince1970, default: []].append(id)
                } else {
                    try self.apply(event, to: id, db)
                }
            }
            for (at, ids) in delivered {
                for start in stride(from: 0, to: ids.count, by: 500) {
                    let chunk = ids[start..<min(ids.count, start + 500)]
                    let marks = Self.placeholders(chunk.count)
                    try db.cachedStatement(
                        sql: """
                            UPDATE installations SET failure_count = 0, last_delivered_at = ?
                            WHERE id IN (\(marks)) AND (\(Self.deliveredChanges))
                            """
                    ).execute(
                        arguments: StatementArguments(
                            [at] + chunk.map { $0 as any DatabaseValueConvertible }
                                + [at - InstallationEvent.deliveredResolution, at]))
                }
            }
            for pending in page.pending {
                try db.cachedExecute(
                    sql: """
                        INSERT INTO pending_deliveries (notification_id, recipient, run_at, attempts, reason)
                        VALUES (?, ?, ?, ?, ?)
                        ON CONFLICT (notification_id, recipient) DO UPDATE SET
                            run_at = excluded.run_at, attempts = excluded.attempts, reason = excluded.reason
                        """,
                    arguments: [
                        pending.notificationID, pending.recipient, pending.runAt.timeIntervalSince1970,
                        pending.attempts, pending.reason.rawValue,
                    ])
            }
            for recipient in page.resolvedPending {
                try db.cachedExecute(
                    sql: "DELETE FROM pending_deliveries WHERE notification_id = ? AND recipient = ?",
                    arguments: [page.notificationID, recipient])
            }
            let counts = page.counts
            try db.cachedStatement(
                sql: """
                    UPDATE notifications SET targeted = targeted + ?, sent = sent + ?, failed = failed + ?,
                        invalid = invalid + ?, skipped_preferences = skipped_preferences + ?,
                        skipped_expired = skipped_expired + ?, rate_limited = rate_limited + ?,
                        cursor = coalesce(?, cursor), status = coalesce(?, status),
                        started_at = coalesce(started_at, ?), completed_at = coalesce(?, completed_at),
                        first_sent_at = coalesce(first_sent_at, ?)
                    WHERE id = ?
                    """
            ).execute(
                arguments: [
                    counts.targeted, counts.sent, counts.failed, counts.invalid, counts.skippedPreferences,
                    counts.skippedExpired, counts.rateLimited, page.cursor, page.status?.rawValue,
                    page.startedAt?.timeIntervalSince1970, page.completedAt?.timeIntervalSince1970,
                    // The page's earliest delivery to an installation (what events' push_sent_at reads).
                    delivered.keys.min(), page.notificationID,
                ])
            if page.finishesJob {
                try db.cachedStatement(sql: "DELETE FROM jobs WHERE id = ?").execute(arguments: [page.jobID])
            }
            return true
        }
    }

    /// A delivery changes the row only when it resets failures or moves `last_delivered_at` by
    /// more than ``InstallationEvent/deliveredResolution`` (or back): arguments `at - resolution`, `at`.
    static let deliveredChanges =
        "failure_count <> 0 OR last_delivered_at IS NULL OR last_delivered_at < ? OR last_delivered_at > ?"

    private func apply(_ event: InstallationEvent, to id: String, _ db: Database) throws {
        switch event {
        case .delivered(let at):
            let time = at.timeIntervalSince1970
            try db.cachedExecute(
                sql: """
                    UPDATE installations SET failure_count = 0, last_delivered_at = ?
                    WHERE id = ? AND (\(Self.deliveredChanges))
                    """,
                arguments: [time, id, time - InstallationEvent.deliveredResolution, time])
        case .invalidated(let reason, let since, let at):
            // APNs: a 410 whose timestamp is older than the installation's last update is stale
            // (the app registered the token again after APNs saw it go).
            try db.cachedExecute(
                sql: """
                    UPDATE installations SET valid = 0, invalidated_at = ?, last_failure_at = ?,
                        last_failure_reason = ?
                    WHERE id = ? AND (? IS NULL OR updated_at <= ?)
                    """,
                arguments: [
                    at.timeIntervalSince1970, at.timeIntervalSince1970, reason, id,
                    since?.timeIntervalSince1970, since?.timeIntervalSince1970,
                ])
            // The ledger row above keeps the answer; the installation itself goes when its
            // registration asked for that (preferences and channels cascade).
            try db.cachedExecute(
                sql: "DELETE FROM installations WHERE id = ? AND valid = 0 AND delete_when_invalid = 1",
                arguments: [id])
        case .failed(let reason, let at, let maxFailures):
            try db.cachedExecute(
                sql: """
                    UPDATE installations SET failure_count = failure_count + 1, last_failure_at = ?,
                        last_failure_reason = ?,
                        valid = CASE WHEN failure_count + 1 >= ? THEN 0 ELSE valid END,
                        invalidated_at = CASE WHEN failure_count + 1 >= ? AND valid = 1 THEN ? ELSE invalidated_at END
                    WHERE id = ?
                    """,
                arguments: [
                    at.timeIntervalSince1970, reason, maxFailures, maxFailures, at.timeIntervalSince1970, id,
                ])
        }
    }

    // MARK: Opens

    public func recordOpen(
        appID: String, notificationID: String, installationID: String, userID: String?, openedAt: Date
    ) async throws -> OpenRecording {
        try await durableWrite { db in
            guard
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM notifications WHERE app_id = ? AND id = ?"),
                    arguments: [appID, notificationID]) == true
            else { return .unknownNotification }
            guard
                let owner = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT user_id FROM installations WHERE app_id = ? AND id = ?"),
                    arguments: [appID, installationID]),
                userID == nil || owner["user_id"] == userID
            else { return .unknownInstallation }
            try db.cachedExecute(
                sql: """
                    INSERT INTO opens (notification_id, installation_id, opened_at) VALUES (?, ?, ?)
                    ON CONFLICT (notification_id, installation_id) DO NOTHING
                    """,
                arguments: [notificationID, installationID, openedAt.timeIntervalSince1970])
            guard db.changesCount == 1 else {
                let first = try Double.fetchOne(
                    db.cachedStatement(
                        sql: "SELECT opened_at FROM opens WHERE notification_id = ? AND installation_id = ?"),
                    arguments: [notificationID, installationID])
                return .repeated(openedAt: first.map(Date.init(timeIntervalSince1970:)) ?? openedAt)
            }
            try db.cachedExecute(
                sql: "UPDATE notifications SET opened = opened + 1 WHERE id = ?", arguments: [notificationID])
            return .recorded(openedAt: openedAt)
        }
    }

    // MARK: Preferences

    public func preferences(appID: String, installationID: String) async throws -> Preferences? {
        try await database.read { db in
            try String.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT p.body FROM preferences p JOIN installations i ON i.id = p.installation_id
                        WHERE i.app_id = ? AND i.id = ?
                        """),
                arguments: [appID, installationID]
            ).map { try Preferences(stored: $0) }
        }
    }

    public func setPreferences(
        appID: String, installationID: String, preferences: Preferences, now: Date
    ) async throws -> Bool {
        let body = preferences.storedText
        return try await durableWrite { db in
            guard
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM installations WHERE app_id = ? AND id = ?"),
                    arguments: [appID, installationID]) == true
            else { return false }
            try db.cachedExecute(
                sql: """
                    INSERT INTO preferences (installation_id, body, updated_at) VALUES (?, ?, ?)
                    ON CONFLICT (installation_id) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at
                    """,
                arguments: [installationID, body, now.timeIntervalSince1970])
            return true
        }
    }

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
        return PushNotification(
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

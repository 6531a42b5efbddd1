import Foundation
import GRDB
import HeraldCore

extension SQLiteStore {
    public func resolve(
        _ target: NotificationTarget, appID: String, after: String?, through: String?, limit: Int
    ) async throws -> [InstallationAddress] {
        guard let query = try resolveQuery(target, appID: appID, after: after, through: through, limit: limit)
        else { return [] }
        return try await database.read { db in try self.fetchTargets(db, query, limit: limit) }
    }

    /// The pages and the preferences in one read transaction (one trip to a reader connection).
    public func resolveFirstPages(_ requests: [FirstPageRequest]) async throws -> FirstPages {
        let queries = try requests.map { try resolveQuery($0.target, appID: $0.appID, after: nil, limit: $0.limit) }
        // A few handed notifications (each of at most a hundred devices by id) read on the calling thread.
        let read: @Sendable (Database) throws -> FirstPages = { db in
            var pages: [[InstallationAddress]] = []
            var preferring: [String] = []
            for (request, query) in zip(requests, queries) {
                let page = try query.map { try self.fetchTargets(db, $0, limit: request.limit) } ?? []
                if request.withPreferences { preferring += page.map(\.installationID) }
                pages.append(page)
            }
            return FirstPages(pages: pages, preferences: try self.fetchPreferences(db, installationIDs: preferring))
        }
        return try await requests.count <= Self.smallFirstPages ? smallRead(read) : database.read(read)
    }

    /// The most first pages read together on the calling thread (``smallRead(_:)``).
    static let smallFirstPages = 4

    public func rangeBoundary(
        _ target: NotificationTarget, appID: String, after: String?, skip: Int
    ) async throws -> String? {
        guard skip > 0 else { return nil }
        var (condition, arguments): (String, StatementArguments) = ("app_id = ?", [appID])
        if let after {
            condition += " AND id > ?"
            arguments += [after]
        }
        // Everyone: the app's id index alone. Another audience: its own condition.
        if case .all = target.audience {
        } else {
            guard let selected = try audienceCondition(target, appID: appID, after: after) else { return nil }
            (condition, arguments) = selected
        }
        arguments += [skip - 1]
        let (sql, values) = ("SELECT id FROM installations WHERE \(condition) ORDER BY id LIMIT 1 OFFSET ?", arguments)
        return try await database.read { db in try String.fetchOne(db.cachedStatement(sql: sql), arguments: values) }
    }

    /// The SQL and arguments of a page of `resolve`; nil when the target can match nothing.
    private func resolveQuery(
        _ target: NotificationTarget, appID: String, after: String?, through: String? = nil, limit: Int
    ) throws -> (sql: String, arguments: StatementArguments)? {
        guard let (condition, bound) = try audienceCondition(target, appID: appID, after: after, through: through)
        else { return nil }
        let arguments = bound + [limit]
        let sql = """
            SELECT id, platform, service, environment, token_sealed, timezone, bundle_id FROM installations
            WHERE \(condition) ORDER BY id LIMIT ?
            """
        return (sql, arguments)
    }

    private func fetchTargets(
        _ db: Database, _ query: (sql: String, arguments: StatementArguments), limit: Int
    ) throws -> [InstallationAddress] {
        // Every page of a fan-out runs the same SQL: compile it once per connection.
        let cursor = try Row.fetchCursor(db.cachedStatement(sql: query.sql), arguments: query.arguments)
        var targets: [InstallationAddress] = []
        targets.reserveCapacity(limit)
        while let row = try cursor.next() { targets.append(try decodeTarget(row)) }
        return targets
    }

    /// A row of `resolve`'s columns, read on GRDB's fast path while the cursor stands on it.
    private func decodeTarget(_ row: Row) throws -> InstallationAddress {
        func enumeration<Value: RawRepresentable>(_ index: Int) throws -> Value where Value.RawValue == String {
            guard let value = Value(rawValue: row[index] as String) else {
                throw HeraldError.internal("Stored installation has an unknown \(Value.self).")
            }
            return value
        }
        let service: PushService = try enumeration(2)
        return InstallationAddress(
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

    /// The SQL condition selecting a target's installations, those with ids after `after` and up to
    /// `through` when given; nil for raw tokens (no installations).
    private func audienceCondition(
        _ target: NotificationTarget, appID: String, after: String? = nil, through: String? = nil
    ) throws -> (String, StatementArguments)? {
        var conditions = ["app_id = ?", "valid = 1"]
        var arguments: StatementArguments = [appID]
        // The id bounds, for a column (`id`, or a channel's `installation_id`).
        func bounds(_ column: String) -> String {
            var sql = ""
            if let after {
                sql += " AND \(column) > ?"
                arguments += [after]
            }
            if let through {
                sql += " AND \(column) <= ?"
                arguments += [through]
            }
            return sql
        }
        conditions[0] += bounds("id")
        func list(_ column: String, _ values: [String]) {
            conditions.append("\(column) IN (\(Self.placeholders(values.count)))")
            arguments += StatementArguments(values)
        }
        switch target.audience {
        case .tokens, .liveActivityChannel: return nil
        case .all: break
        case .installationIDs(let ids): list("id", ids)
        case .userIDs(let ids): list("user_id", ids)
        case .channels(let channels):
            // Bounded inside too: a page from the middle of a large channel reads its members from there.
            let marks = Self.placeholders(channels.count)
            arguments += [appID]
            arguments += StatementArguments(channels)
            let inner = bounds("installation_id")
            conditions.append(
                "id IN (SELECT installation_id FROM installation_channels WHERE app_id = ? AND channel IN (\(marks))\(inner))"
            )
        case .liveActivity(let activity):
            arguments += [appID, activity]
            let inner = bounds("installation_id")
            conditions.append(
                "id IN (SELECT installation_id FROM live_activity_members WHERE app_id = ? AND activity_id = ?\(inner))"
            )
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
        try await write { db in
            let notifications = try String.fetchAll(
                db.cachedStatement(
                    sql: """
                        UPDATE pending_deliveries SET run_at = ? WHERE recipient = ? AND reason = 'offline'
                        RETURNING notification_id
                        """),
                arguments: [now.timeIntervalSince1970, recipient])
            for id in Set(notifications) {
                try self.scheduleJob(db, kind: .notification, reference: id, runAt: now)
            }
            return notifications.count
        }
    }

    public func settleConfirming(
        notificationID: String, recipient: String, as reason: PendingDelivery.Reason, now: Date
    ) async throws -> Bool {
        try await write { db in
            try db.cachedExecute(
                sql: """
                    UPDATE pending_deliveries SET reason = ?, run_at = ?
                    WHERE notification_id = ? AND recipient = ? AND reason = 'confirming'
                    """,
                arguments: [reason.rawValue, now.timeIntervalSince1970, notificationID, recipient])
            guard db.changesCount > 0 else { return false }
            try self.scheduleJob(db, kind: .notification, reference: notificationID, runAt: now)
            return true
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
            // The app's webhook endpoints get this commit's events in this transaction (none: nothing written).
            let webhooks = try self.webhookContext(for: page, db)
            var invalidated: [(id: String, reason: String, at: Date)] = []
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
                } else if let invalidation = try self.apply(event, to: id, db) {
                    invalidated.append((id, invalidation.reason, invalidation.at))
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
            for (locale, sent) in counts.byLocale {
                // A language tag or `default`: letters, digits and hyphens, safe in a JSON path.
                try db.cachedExecute(
                    sql: """
                        UPDATE notifications SET locale_counts = json_set(coalesce(locale_counts, '{}'),
                            '$."' || ? || '"', coalesce(json_extract(locale_counts, '$."' || ? || '"'), 0) + ?)
                        WHERE id = ?
                        """, arguments: [locale, locale, sent, page.notificationID])
            }
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
                    counts.skippedExpired, counts.rateLimited, page.range == nil ? page.cursor : nil,
                    page.status?.rawValue,
                    page.startedAt?.timeIntervalSince1970, page.completedAt?.timeIntervalSince1970,
                    // The page's earliest delivery to an installation (what events' push_sent_at reads).
                    delivered.keys.min(), page.notificationID,
                ])
            if page.finishesJob {
                try db.cachedStatement(sql: "DELETE FROM jobs WHERE id = ?").execute(arguments: [page.jobID])
            }
            if let range = page.range, let cursor = page.cursor {
                try self.moveRange(db, notificationID: page.notificationID, index: range, to: cursor, at: page.at)
            }
            if let webhooks { try self.writeWebhookEvents(page, context: webhooks, invalidated: invalidated, db) }
            return true
        }
    }

    /// A delivery changes the row only when it resets failures or moves `last_delivered_at` by
    /// more than ``InstallationEvent/deliveredResolution`` (or back): arguments `at - resolution`, `at`.
    static let deliveredChanges =
        "failure_count <> 0 OR last_delivered_at IS NULL OR last_delivered_at < ? OR last_delivered_at > ?"

    /// Applies an installation's event; returns the invalidation it made (the reason and time), if it changed the row.
    private func apply(_ event: InstallationEvent, to id: String, _ db: Database) throws -> (reason: String, at: Date)?
    {
        switch event {
        case .delivered(let at):
            let time = at.timeIntervalSince1970
            try db.cachedExecute(
                sql: """
                    UPDATE installations SET failure_count = 0, last_delivered_at = ?
                    WHERE id = ? AND (\(Self.deliveredChanges))
                    """,
                arguments: [time, id, time - InstallationEvent.deliveredResolution, time])
            return nil
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
            let changed = db.changesCount > 0
            // The ledger row above keeps the answer; the installation itself goes when its
            // registration asked for that (preferences and channels cascade).
            try db.cachedExecute(
                sql: "DELETE FROM installations WHERE id = ? AND valid = 0 AND delete_when_invalid = 1",
                arguments: [id])
            return changed ? (reason, at) : nil
        case .failed(let reason, let at, let maxFailures):
            try countFailure(reason: reason, at: at, maxFailures: maxFailures, of: id, where: "1", db)
            return nil
        case .rejected(let reason, let at, let maxFailures, let rule):
            // Rejected, not gone: invalidated by the app's rule, never deleted; an installation registered
            // with delete_when_invalid counts it as a failure whatever the rule.
            if rule == .invalidate {
                try db.cachedExecute(
                    sql: """
                        UPDATE installations SET valid = 0, invalidated_at = ?, last_failure_at = ?,
                            last_failure_reason = ?
                        WHERE id = ? AND delete_when_invalid = 0
                        """,
                    arguments: [at.timeIntervalSince1970, at.timeIntervalSince1970, reason, id])
            }
            let changed = rule == .invalidate && db.changesCount > 0
            try countFailure(
                reason: reason, at: at, maxFailures: maxFailures, of: id,
                where: rule == .invalidate ? "delete_when_invalid = 1" : "1", db)
            return changed ? (reason, at) : nil
        }
    }

    /// One failure against installation `id` (when `condition` holds): `maxFailures` in a row deactivate it.
    private func countFailure(
        reason: String, at: Date, maxFailures: Int, of id: String, where condition: String, _ db: Database
    ) throws {
        try db.cachedExecute(
            sql: """
                UPDATE installations SET failure_count = failure_count + 1, last_failure_at = ?,
                    last_failure_reason = ?,
                    valid = CASE WHEN failure_count + 1 >= ? THEN 0 ELSE valid END,
                    invalidated_at = CASE WHEN failure_count + 1 >= ? AND valid = 1 THEN ? ELSE invalidated_at END
                WHERE id = ? AND \(condition)
                """,
            arguments: [at.timeIntervalSince1970, reason, maxFailures, maxFailures, at.timeIntervalSince1970, id])
    }
}

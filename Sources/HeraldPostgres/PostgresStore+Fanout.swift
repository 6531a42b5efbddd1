import Foundation
import HeraldCore
import PostgresNIO

extension PostgresStore {
    public func resolve(
        _ target: NotificationTarget, appID: String, after: String?, through: String?, limit: Int
    ) async throws -> [InstallationAddress] {
        guard let (condition, bound) = try audienceCondition(target, appID: appID, after: after, through: through)
        else { return [] }
        let values = bound + [limit]
        let sql = """
            SELECT \(Self.targetColumns) FROM installations
            WHERE \(condition) ORDER BY id LIMIT $\(values.count)
            """
        let binds = values
        let rows = try await read { connection in try await connection.run(sql, binds).rows }
        var targets: [InstallationAddress] = []
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

    public func rangeBoundary(
        _ target: NotificationTarget, appID: String, after: String?, skip: Int
    ) async throws -> String? {
        guard skip > 0 else { return nil }
        var (condition, values): (String, [SQLBind]) = ("app_id = $1", [appID])
        if let after {
            values.append(after)
            condition += " AND id > $\(values.count)"
        }
        // Everyone: an index-only scan of the app's ids. Another audience: its own condition.
        if case .all = target.audience {
        } else {
            guard let selected = try audienceCondition(target, appID: appID, after: after) else { return nil }
            (condition, values) = selected
        }
        values.append(skip - 1)
        let sql = "SELECT id FROM installations WHERE \(condition) ORDER BY id LIMIT 1 OFFSET $\(values.count)"
        let binds = values
        return try await read { connection in try await connection.rows(sql, binds) }.first.map {
            try $0.get("id", as: String.self)
        }
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
        var pages = [[InstallationAddress]](repeating: [], count: requests.count)
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
    private func deliveryTarget(_ row: PostgresRandomAccessRow) throws -> InstallationAddress {
        try deliveryTarget(
            id: row.get("id"), platform: row.get("platform"), service: row.get("service"),
            environment: row.get("environment"), sealed: row.bytes("token_sealed"), timezone: row.get("timezone"),
            bundleID: row.get("bundle_id"))
    }

    /// An installation's stored columns as a delivery target, its token opened.
    private func deliveryTarget(
        id: String, platform: String, service: String, environment: String, sealed: [UInt8], timezone: String?,
        bundleID: String?
    ) throws -> InstallationAddress {
        guard let platform = Platform(rawValue: platform), let service = PushService(rawValue: service),
            let environment = PushEnvironment(rawValue: environment)
        else { throw HeraldError.internal("Stored installation has an unknown platform, service or environment.") }
        return InstallationAddress(
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

    /// The SQL condition selecting a target's installations, those with ids after `after` and up to
    /// `through` when given; nil for raw tokens (no installations). Its placeholders start at
    /// `firstParameter`.
    private func audienceCondition(
        _ target: NotificationTarget, appID: String, after: String? = nil, through: String? = nil,
        firstParameter: Int = 1
    ) throws -> (String, [SQLBind])? {
        let offset = firstParameter - 1
        var conditions = ["app_id = $\(firstParameter)", "valid"]
        var values: [SQLBind] = [appID]
        // The id bounds, for a column (`id`, or a channel's `installation_id`): bound once, used twice.
        var bounds: [(String, String)] = []
        if let after {
            values.append(after)
            bounds.append((">", "$\(offset + values.count)"))
        }
        if let through {
            values.append(through)
            bounds.append(("<=", "$\(offset + values.count)"))
        }
        func bounded(_ column: String) -> String { bounds.map { " AND \(column) \($0.0) \($0.1)" }.joined() }
        conditions[0] += bounded("id")
        func list(_ column: String, _ items: [String]) {
            values.append(items)
            conditions.append("\(column) = ANY($\(offset + values.count))")
        }
        switch target.audience {
        case .tokens, .liveActivityChannel: return nil
        case .all: break
        case .installationIDs(let ids): list("id", ids)
        case .userIDs(let ids): list("user_id", ids)
        case .channels(let channels):
            values.append(channels)
            conditions.append(
                """
                id IN (SELECT installation_id FROM installation_channels
                    WHERE app_id = $\(firstParameter) AND channel = ANY($\(offset + values.count))\(bounded("installation_id")))
                """)
        case .liveActivity(let activity):
            values.append(activity)
            conditions.append(
                """
                id IN (SELECT installation_id FROM live_activity_members
                    WHERE app_id = $\(firstParameter) AND activity_id = $\(offset + values.count)\(bounded("installation_id")))
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
                try await self.scheduleJob(connection, kind: .notification, reference: id, runAt: now)
            }
            return notifications.count
        }
    }

    public func settleConfirming(
        notificationID: String, recipient: String, as reason: PendingDelivery.Reason, now: Date
    ) async throws -> Bool {
        try await transaction { connection in
            let rows = try await connection.rows(
                """
                UPDATE pending_deliveries SET reason = $1, run_at = $2
                WHERE notification_id = $3 AND recipient = $4 AND reason = 'confirming'
                RETURNING notification_id
                """, [reason.rawValue, now.timeIntervalSince1970, notificationID, recipient])
            guard !rows.isEmpty else { return false }
            try await self.scheduleJob(connection, kind: .notification, reference: notificationID, runAt: now)
            return true
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
        let finishesRange = page.range != nil && page.cursor == "done"
        // Only a page with a fact a webhook event tells of (a failure, an invalidation, a final status)
        // reads the app's endpoints: one statement more when it has none (PostgresStore+Webhooks).
        let tells = WebhookCommitContext.mayTell(page)
        if otherEvents.isEmpty && page.pending.isEmpty && page.resolvedPending.isEmpty && !finishesRange
            && page.counts.byLocale.isEmpty
        {
            // The common page (deliveries, the ledger and counts): one statement, its own transaction,
            // unless the app has an endpoint to tell: then the transaction below writes it with its events.
            let alone = try await read { connection -> Bool? in
                if tells, try await self.hasWebhookEndpoints(notificationID: page.notificationID, connection) {
                    return nil
                }
                return try await connection.rows(held).first == 1
            }
            if let alone { return alone }
        }
        return try await transaction { connection in
            guard try await connection.rows(held).first == 1 else { return false }
            for (locale, sent) in page.counts.byLocale {
                try await connection.run(
                    """
                    UPDATE notifications SET locale_counts = coalesce(locale_counts, '{}'::jsonb)
                        || jsonb_build_object($2::text, coalesce((locale_counts ->> $2::text)::bigint, 0) + $3)
                    WHERE id = $1
                    """, [page.notificationID, locale, sent])
            }
            // Read after the page's update of the notification (its final event's counts) and before
            // the installations' changes and deletions below (what the events say of them).
            let webhooks = tells ? try await self.webhookContext(for: page, connection) : nil
            var invalidated: [(id: String, reason: String, at: Date)] = []
            for (id, event) in otherEvents {
                if let invalidation = try await self.apply(event, to: id, connection) {
                    invalidated.append((id, invalidation.reason, invalidation.at))
                }
            }
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
            // After the page's update of the notification row, which waits for any other range's
            // final commit: this statement sees every range that finished before.
            if finishesRange { try await self.wakeAfterRanges(page.notificationID, at: page.at ?? Date(), connection) }
            if let webhooks {
                try await self.writeWebhookEvents(page, context: webhooks, invalidated: invalidated, connection)
            }
            return true
        }
    }

    /// Applies an installation's event; returns the invalidation it made (the reason and time), if it changed the row.
    private func apply(
        _ event: InstallationEvent, to id: String, _ connection: PostgresConnection
    ) async throws -> (reason: String, at: Date)? {
        switch event {
        case .delivered(let at):
            // As a page's deliveries are written (CommitHeldPage).
            let time = at.timeIntervalSince1970
            let reset = try await connection.changes(
                "UPDATE installations SET failure_count = 0 WHERE id = $1 AND failure_count <> 0", [id])
            try await connection.run(
                """
                INSERT INTO installation_deliveries AS known (installation_id, delivered_at) VALUES ($1, $2)
                ON CONFLICT (installation_id) DO UPDATE SET delivered_at = excluded.delivered_at
                WHERE known.delivered_at < excluded.delivered_at - $3 OR known.delivered_at > excluded.delivered_at
                    OR $4
                """, [id, time, InstallationEvent.deliveredResolution, reset > 0])
            return nil
        case .invalidated(let reason, let since, let at):
            // APNs: a 410 whose timestamp is older than the installation's last update is stale
            // (the app registered the token again after APNs saw it go).
            let wasValid = try await self.lockValid(id, connection)
            let changed = try await connection.changes(
                """
                UPDATE installations SET valid = FALSE, invalidated_at = $1, last_failure_at = $1,
                    last_failure_reason = $2
                WHERE id = $3 AND ($4::float8 IS NULL OR updated_at <= $4::float8)
                """, [at.timeIntervalSince1970, reason, id, since?.timeIntervalSince1970])
            // The ledger keeps the answer; the installation itself goes when its registration asked
            // for that (preferences and channels cascade).
            try await connection.run(
                "DELETE FROM installations WHERE id = $1 AND NOT valid AND delete_when_invalid", [id])
            return changed > 0 && wasValid ? (reason, at) : nil
        case .failed(let reason, let at, let maxFailures):
            try await countFailure(reason: reason, at: at, maxFailures: maxFailures, of: id, where: "TRUE", connection)
            return nil
        case .rejected(let reason, let at, let maxFailures, let rule):
            // Rejected, not gone: invalidated by the app's rule, never deleted; an installation registered
            // with delete_when_invalid counts it as a failure whatever the rule.
            var changed = 0
            var wasValid = false
            if rule == .invalidate {
                wasValid = try await self.lockValid(id, connection)
                changed = try await connection.changes(
                    """
                    UPDATE installations SET valid = FALSE, invalidated_at = $1, last_failure_at = $1,
                        last_failure_reason = $2
                    WHERE id = $3 AND NOT delete_when_invalid
                    """, [at.timeIntervalSince1970, reason, id])
            }
            try await countFailure(
                reason: reason, at: at, maxFailures: maxFailures, of: id,
                where: rule == .invalidate ? "delete_when_invalid" : "TRUE", connection)
            return changed > 0 && wasValid ? (reason, at) : nil
        }
    }

    /// Whether installation `id` is valid, its row locked until the transaction ends. Two page commits may
    /// invalidate one installation at once (READ COMMITTED): the second waits here for the first and then
    /// reads it invalid, so only the first tells of the invalidation (docs/webhooks.md).
    private func lockValid(_ id: String, _ connection: PostgresConnection) async throws -> Bool {
        try await connection.rows("SELECT valid FROM installations WHERE id = $1 FOR UPDATE", [id]).first?
            .get("valid", as: Bool.self) ?? false
    }

    /// One failure against installation `id` (when `condition` holds): `maxFailures` in a row deactivate it.
    private func countFailure(
        reason: String, at: Date, maxFailures: Int, of id: String, where condition: String,
        _ connection: PostgresConnection
    ) async throws {
        try await connection.run(
            """
            UPDATE installations SET failure_count = failure_count + 1, last_failure_at = $1,
                last_failure_reason = $2,
                valid = CASE WHEN failure_count + 1 >= $3 THEN FALSE ELSE valid END,
                invalidated_at = CASE WHEN failure_count + 1 >= $3 AND valid THEN $1 ELSE invalidated_at END
            WHERE id = $4 AND \(condition)
            """, [at.timeIntervalSince1970, reason, maxFailures, id])
    }
}

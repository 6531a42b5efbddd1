import Foundation
import GRDB
import HeraldCore

extension SQLiteStore: WebhookStore {
    public func createWebhookEndpoint(_ endpoint: WebhookEndpoint) async throws {
        let sealed = try sealSecrets(endpoint.secrets)
        try await durableWrite { db in
            guard
                try Bool.fetchOne(
                    db, sql: "SELECT 1 FROM webhook_endpoints WHERE app_id = ? AND id = ?",
                    arguments: [endpoint.appID, endpoint.id]) == nil
            else { throw HeraldError.webhookExists(endpoint.id) }
            try db.execute(
                sql: """
                    INSERT INTO webhook_endpoints (app_id, id, url, events, description, secrets_sealed, configured,
                        disabled_reason, failing_since, last_success_at, created_at, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: StatementArguments(Self.endpointArguments(endpoint, sealed: sealed)))
        }
    }

    public func webhookEndpoints(appID: String) async throws -> [WebhookEndpoint] {
        try await database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM webhook_endpoints WHERE app_id = ? ORDER BY id", arguments: [appID]
            )
            .map(self.webhookEndpoint)
        }
    }

    public func webhookEndpoint(appID: String, id: String) async throws -> WebhookEndpoint? {
        try await database.read { db in
            try Row.fetchOne(
                db, sql: "SELECT * FROM webhook_endpoints WHERE app_id = ? AND id = ?", arguments: [appID, id]
            ).map(self.webhookEndpoint)
        }
    }

    public func updateWebhookEndpoint(_ endpoint: WebhookEndpoint) async throws -> Bool {
        let sealed = try sealSecrets(endpoint.secrets)
        return try await durableWrite { db in
            try db.execute(
                sql: """
                    UPDATE webhook_endpoints SET url = ?, events = ?, description = ?, secrets_sealed = ?,
                        configured = ?, disabled_reason = ?, failing_since = ?, last_success_at = ?, created_at = ?,
                        updated_at = ?
                    WHERE app_id = ? AND id = ?
                    """,
                arguments: StatementArguments(
                    Array(Self.endpointArguments(endpoint, sealed: sealed).dropFirst(2)) + [
                        endpoint.appID, endpoint.id,
                    ]))
            return db.changesCount > 0
        }
    }

    public func deleteWebhookEndpoint(appID: String, id: String) async throws -> Bool {
        try await durableWrite { db in
            try db.execute(
                sql: "DELETE FROM webhook_deliveries WHERE app_id = ? AND endpoint_id = ?", arguments: [appID, id])
            try db.execute(sql: "DELETE FROM webhook_endpoints WHERE app_id = ? AND id = ?", arguments: [appID, id])
            return db.changesCount > 0
        }
    }

    public func enqueueWebhookEvents(_ events: [WebhookEvent], endpointID: String?) async throws -> Int {
        try await durableWrite { db in
            var written = 0
            for (appID, appEvents) in Dictionary(grouping: events, by: \.appID) {
                var subscriptions = try Self.webhookSubscriptions(appID: appID, db)
                if let endpointID { subscriptions = subscriptions.filter { $0.id == endpointID } }
                written += try Self.insertWebhookEvents(
                    appEvents,
                    endpointID == nil
                        ? subscriptions
                        : subscriptions.map {
                            WebhookSubscription(id: $0.id, events: Set(WebhookEventType.allCases))
                        }, db)
            }
            return written
        }
    }

    public func claimWebhookDeliveries(
        owner: String, now: Date, lockedUntil: Date, limit: Int
    ) async throws
        -> [WebhookDelivery]
    {
        // An idle outbox (the usual case) costs a read, not a write and a sync, per poll.
        let due = try await database.read { db in
            try Bool.fetchOne(
                db,
                sql: """
                    SELECT 1 FROM webhook_deliveries d
                    JOIN webhook_endpoints e ON e.app_id = d.app_id AND e.id = d.endpoint_id
                    WHERE d.state = 'pending' AND d.next_attempt_at <= ?
                        AND (d.locked_until IS NULL OR d.locked_until <= ?) AND e.disabled_reason IS NULL
                    LIMIT 1
                    """,
                arguments: [now.timeIntervalSince1970, now.timeIntervalSince1970]) != nil
        }
        guard due else { return [] }
        // Answered once the log is on disk, and with it every commit before it, the ones that wrote these
        // rows included (docs/webhooks.md, "Delivery").
        return try await durableWrite { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT d.*, e.url, e.secrets_sealed FROM webhook_deliveries d
                    JOIN webhook_endpoints e ON e.app_id = d.app_id AND e.id = d.endpoint_id
                    WHERE d.state = 'pending' AND d.next_attempt_at <= ?
                        AND (d.locked_until IS NULL OR d.locked_until <= ?) AND e.disabled_reason IS NULL
                    ORDER BY d.next_attempt_at, d.id LIMIT ?
                    """,
                arguments: [now.timeIntervalSince1970, now.timeIntervalSince1970, limit])
            for row in rows {
                try db.execute(
                    sql: "UPDATE webhook_deliveries SET locked_by = ?, locked_until = ? WHERE id = ?",
                    arguments: [owner, lockedUntil.timeIntervalSince1970, row["id"] as Int64])
            }
            return try rows.map { row in
                var delivery = try Self.webhookDelivery(row)
                delivery.url = row["url"]
                delivery.secrets = try self.openSecrets(row["secrets_sealed"])
                return delivery
            }
        }
    }

    public func recordWebhookAttempt(_ attempt: WebhookAttempt) async throws -> Bool {
        try await write { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: "SELECT app_id, endpoint_id, attempts FROM webhook_deliveries WHERE id = ? AND locked_by = ?",
                    arguments: [attempt.deliveryID, attempt.owner])
            else { return false }
            let (appID, endpointID): (String, String) = (row["app_id"], row["endpoint_id"])
            let at = attempt.at.timeIntervalSince1970
            let (state, next): (WebhookDelivery.State, Date?) =
                switch attempt.outcome {
                case .delivered: (.delivered, nil)
                case .failed(let next): (next == nil ? .failed : .pending, next)
                case .gone: (.failed, nil)
                }
            try db.execute(
                sql: """
                    UPDATE webhook_deliveries SET state = ?, attempts = attempts + 1, next_attempt_at = ?,
                        locked_by = NULL, locked_until = NULL, last_attempt_at = ?, last_status = ?, last_error = ?
                    WHERE id = ?
                    """,
                arguments: [
                    state.rawValue, next?.timeIntervalSince1970, at, attempt.status, attempt.error, attempt.deliveryID,
                ])
            switch attempt.outcome {
            case .delivered:
                try db.execute(
                    sql: """
                        UPDATE webhook_endpoints SET last_success_at = max(coalesce(last_success_at, 0), ?),
                            failing_since = NULL
                        WHERE app_id = ? AND id = ?
                        """,
                    arguments: [at, appID, endpointID])
            case .failed:
                try db.execute(
                    sql: """
                        UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, ?),
                            disabled_reason = CASE WHEN disabled_reason IS NULL AND ? - coalesce(failing_since, ?) >= ?
                                THEN 'failing' ELSE disabled_reason END
                        WHERE app_id = ? AND id = ?
                        """,
                    arguments: [at, at, at, WebhookEndpoint.failingLimit.timeInterval, appID, endpointID])
            case .gone:
                try db.execute(
                    sql: """
                        UPDATE webhook_endpoints SET disabled_reason = coalesce(disabled_reason, 'gone'),
                            failing_since = coalesce(failing_since, ?)
                        WHERE app_id = ? AND id = ?
                        """,
                    arguments: [at, appID, endpointID])
            }
            return true
        }
    }

    public func webhookDeliveries(appID: String, endpointID: String, limit: Int) async throws -> [WebhookDelivery] {
        try await database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM webhook_deliveries WHERE app_id = ? AND endpoint_id = ? ORDER BY id DESC LIMIT ?
                    """,
                arguments: [appID, endpointID, limit]
            ).map(Self.webhookDelivery)
        }
    }

    public func webhookBacklog(appID: String, endpointID: String) async throws -> Int {
        try await database.read { db in
            try Int.fetchOne(
                db,
                sql:
                    "SELECT count(*) FROM webhook_deliveries WHERE app_id = ? AND endpoint_id = ? AND state = 'pending'",
                arguments: [appID, endpointID]) ?? 0
        }
    }

    // MARK: The page commit's events

    /// What a page commit needs to write its events: the app's subscriptions, and what the events say
    /// of the installations involved, read before the commit changes (or deletes) them. Nil when no
    /// enabled endpoint of the notification's app exists: then the commit writes no event.
    func webhookContext(for page: PageCommit, _ db: Database) throws -> WebhookCommitContext? {
        guard WebhookCommitContext.mayTell(page),
            let appID = try String.fetchOne(
                db.cachedStatement(sql: "SELECT app_id FROM notifications WHERE id = ?"),
                arguments: [page.notificationID])
        else { return nil }
        let subscriptions = try Self.webhookSubscriptions(appID: appID, db)
        guard !subscriptions.isEmpty else { return nil }
        let (installations, validBefore) = try webhookInstallations(
            WebhookCommitContext.installationIDs(of: page), in: db)
        return WebhookCommitContext(
            appID: appID, subscriptions: subscriptions, installations: installations, validBefore: validBefore)
    }

    /// What events say of installations (read before a change deletes or invalidates them), by id, and
    /// which of them are valid: those of `ids`, or, with `ids` nil, those `condition` selects.
    func webhookInstallations(
        _ ids: Set<String>?, where condition: String = "1", arguments: StatementArguments = [], in db: Database
    ) throws -> (installations: [String: WebhookEvent.Installation], valid: Set<String>) {
        var installations: [String: WebhookEvent.Installation] = [:]
        var valid: Set<String> = []
        func read(_ sql: String, _ arguments: StatementArguments) throws {
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT id, app_id, user_id, device_id, platform, service, sns_endpoint_arn, token_sealed, valid
                    FROM installations WHERE \(sql)
                    """, arguments: arguments)
            {
                guard let platform = Platform(rawValue: row["platform"]),
                    let service = PushService(rawValue: row["service"])
                else { continue }
                let token = try cipher.openToken(Array(row["token_sealed"] as Data), service: service)
                installations[row["id"]] = WebhookEvent.Installation(
                    id: row["id"], userID: row["user_id"], deviceID: row["device_id"], platform: platform,
                    service: service, snsEndpointARN: row["sns_endpoint_arn"], token: token.identity)
                if row["valid"] as Bool { valid.insert(row["id"]) }
            }
        }
        if let ids {
            for chunk in Array(ids).chunked(500) {
                try read("id IN (\(Self.placeholders(chunk.count)))", StatementArguments(chunk))
            }
        } else {
            try read(condition, arguments)
        }
        return (installations, valid)
    }

    /// Writes one fact's events in the transaction `db` (a cancellation, an open, a clean-up), for the
    /// enabled endpoints of its app subscribed to its type: none when the app has no such endpoint.
    /// `make` runs only when one wants it.
    func tell(appID: String, _ type: WebhookEventType, _ db: Database, _ make: () throws -> [WebhookEvent]) throws {
        let subscriptions = try Self.webhookSubscriptions(appID: appID, db)
        guard subscriptions.contains(where: { $0.events.contains(type) }) else { return }
        try Self.insertWebhookEvents(try make(), subscriptions, db)
    }

    /// Writes a committed page's events, after its other writes (the notification's counts and status as they now are).
    func writeWebhookEvents(
        _ page: PageCommit, context: WebhookCommitContext, invalidated: [(id: String, reason: String, at: Date)],
        _ db: Database
    ) throws {
        var finished: WebhookEvent?
        if let status = page.status, WebhookEvent.finishedStatuses.contains(status),
            let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM notifications WHERE id = ?"), arguments: [page.notificationID])
        {
            let notification = try decodeNotification(row)
            finished = WebhookEvent.finished(
                appID: context.appID, notificationID: page.notificationID, status: status, counts: notification.counts,
                createdAt: notification.createdAt, completedAt: notification.completedAt ?? page.at ?? Date())
        }
        let events = context.events(for: page, invalidated: invalidated, finished: finished)
        try Self.insertWebhookEvents(events, context.subscriptions, db)
    }

    // MARK: Rows

    static func webhookSubscriptions(appID: String, _ db: Database) throws -> [WebhookSubscription] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: "SELECT id, events FROM webhook_endpoints WHERE app_id = ? AND disabled_reason IS NULL"),
            arguments: [appID]
        ).map { row in WebhookSubscription(id: row["id"], eventsJSON: row["events"]) }
    }

    @discardableResult
    static func insertWebhookEvents(
        _ events: [WebhookEvent], _ subscriptions: [WebhookSubscription], _ db: Database
    )
        throws -> Int
    {
        var written = 0
        for event in events {
            let body = event.body
            for subscription in subscriptions where subscription.events.contains(event.type) {
                try db.cachedExecute(
                    sql: """
                        INSERT INTO webhook_deliveries (app_id, endpoint_id, event_id, event_type, body, created_at,
                            next_attempt_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        event.appID, subscription.id, event.id, event.type.rawValue, Data(body),
                        event.occurredAt.timeIntervalSince1970, event.occurredAt.timeIntervalSince1970,
                    ])
                written += 1
            }
        }
        return written
    }

    private func sealSecrets(_ secrets: [WebhookSecret]) throws -> Data {
        Data(try cipher.seal(Array(try JSONEncoder().encode(secrets))))
    }

    private func openSecrets(_ sealed: Data) throws -> [WebhookSecret] {
        try JSONDecoder().decode([WebhookSecret].self, from: Data(try cipher.open(Array(sealed))))
    }

    private static func endpointArguments(
        _ endpoint: WebhookEndpoint, sealed: Data
    ) -> [(any DatabaseValueConvertible)?] {
        [
            endpoint.appID, endpoint.id, endpoint.url, WebhookSubscription.eventsJSON(endpoint.events),
            endpoint.description,
            sealed, endpoint.configured, endpoint.disabledReason?.rawValue,
            endpoint.failingSince?.timeIntervalSince1970,
            endpoint.lastSuccessAt?.timeIntervalSince1970, endpoint.createdAt.timeIntervalSince1970,
            endpoint.updatedAt.timeIntervalSince1970,
        ]
    }

    private func webhookEndpoint(_ row: Row) throws -> WebhookEndpoint {
        WebhookEndpoint(
            id: row["id"], appID: row["app_id"], url: row["url"],
            events: Array(WebhookSubscription(id: "", eventsJSON: row["events"]).events),
            description: row["description"], secrets: try openSecrets(row["secrets_sealed"]),
            configured: row["configured"],
            disabledReason: (row["disabled_reason"] as String?).flatMap(WebhookEndpoint.DisabledReason.init),
            failingSince: (row["failing_since"] as Double?).map(Date.init(timeIntervalSince1970:)),
            lastSuccessAt: (row["last_success_at"] as Double?).map(Date.init(timeIntervalSince1970:)),
            createdAt: Date(timeIntervalSince1970: row["created_at"]),
            updatedAt: Date(timeIntervalSince1970: row["updated_at"]))
    }

    private static func webhookDelivery(_ row: Row) throws -> WebhookDelivery {
        guard let type = WebhookEventType(rawValue: row["event_type"]),
            let state = WebhookDelivery.State(rawValue: row["state"])
        else { throw HeraldError.internal("An outbox row has an unknown type or state.") }
        return WebhookDelivery(
            id: row["id"], appID: row["app_id"], endpointID: row["endpoint_id"], eventID: row["event_id"],
            eventType: type, body: Array(row["body"] as Data),
            createdAt: Date(timeIntervalSince1970: row["created_at"]), state: state, attempts: row["attempts"],
            nextAttemptAt: (row["next_attempt_at"] as Double?).map(Date.init(timeIntervalSince1970:)),
            lastAttemptAt: (row["last_attempt_at"] as Double?).map(Date.init(timeIntervalSince1970:)),
            lastStatus: row["last_status"], lastError: row["last_error"])
    }
}

extension Array {
    fileprivate func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min(count, $0 + size)] }
    }
}

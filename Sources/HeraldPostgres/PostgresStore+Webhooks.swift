import Foundation
import HeraldCore
import NIOCore
import PostgresNIO

// The webhook endpoints and their outbox, as on SQLite (`SQLiteStore+Webhooks`). Several nodes claim
// due rows at once: each is locked with `FOR UPDATE SKIP LOCKED` and leased to one of them. A
// commit is durable once answered (`synchronous_commit = on`), so a claimed row's fact is already.
extension PostgresStore: WebhookStore {
    public func createWebhookEndpoint(_ endpoint: WebhookEndpoint) async throws {
        let values = try endpointValues(endpoint)
        let created = try await read { connection in
            try await connection.changes(
                """
                INSERT INTO webhook_endpoints (app_id, id, url, events, description, secrets_sealed, configured,
                    disabled_reason, failing_since, last_success_at, created_at, updated_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
                ON CONFLICT (app_id, id) DO NOTHING
                """, values)
        }
        guard created > 0 else { throw HeraldError.webhookExists(endpoint.id) }
    }

    public func webhookEndpoints(appID: String) async throws -> [WebhookEndpoint] {
        try await read { connection in
            try await connection.rows("SELECT * FROM webhook_endpoints WHERE app_id = $1 ORDER BY id", [appID])
        }.map(webhookEndpoint)
    }

    public func webhookEndpoint(appID: String, id: String) async throws -> WebhookEndpoint? {
        try await read { connection in
            try await connection.rows("SELECT * FROM webhook_endpoints WHERE app_id = $1 AND id = $2", [appID, id])
        }.first.map(webhookEndpoint)
    }

    public func updateWebhookEndpoint(_ endpoint: WebhookEndpoint) async throws -> Bool {
        let values = try endpointValues(endpoint)
        return try await read { connection in
            try await connection.changes(
                """
                UPDATE webhook_endpoints SET url = $3, events = $4, description = $5, secrets_sealed = $6,
                    configured = $7, disabled_reason = $8, failing_since = $9, last_success_at = $10,
                    created_at = $11, updated_at = $12
                WHERE app_id = $1 AND id = $2
                """, values) > 0
        }
    }

    public func deleteWebhookEndpoint(appID: String, id: String) async throws -> Bool {
        // Its outbox rows go with it (ON DELETE CASCADE).
        try await read { connection in
            try await connection.changes("DELETE FROM webhook_endpoints WHERE app_id = $1 AND id = $2", [appID, id]) > 0
        }
    }

    public func enqueueWebhookEvents(_ events: [WebhookEvent], endpointID: String?) async throws -> Int {
        guard !events.isEmpty else { return 0 }
        return try await transaction { connection in
            var written = 0
            for (appID, appEvents) in Dictionary(grouping: events, by: \.appID) {
                var subscriptions = try await Self.webhookSubscriptions(appID: appID, connection)
                if let endpointID {
                    // The endpoint asked for gets them whatever it subscribes to (a test event).
                    subscriptions = subscriptions.filter { $0.id == endpointID }.map {
                        WebhookSubscription(id: $0.id, events: Set(WebhookEventType.allCases))
                    }
                }
                written += try await Self.insertWebhookEvents(appEvents, subscriptions, connection)
            }
            return written
        }
    }

    public func claimWebhookDeliveries(
        owner: String, now: Date, lockedUntil: Date, limit: Int
    ) async throws -> [WebhookDelivery] {
        guard limit > 0 else { return [] }
        // One statement: the due rows of enabled endpoints are locked, skipping those another node is
        // claiming, and leased. A row another node leased since this statement's snapshot is checked
        // again once locked (its `locked_until` is then in the future): one node per row and attempt.
        let rows = try await read { connection in
            try await connection.rows(
                """
                WITH due AS (
                    SELECT d.id, e.url, e.secrets_sealed FROM webhook_deliveries d
                    JOIN webhook_endpoints e ON e.app_id = d.app_id AND e.id = d.endpoint_id
                    WHERE d.state = 'pending' AND d.next_attempt_at <= $1
                        AND (d.locked_until IS NULL OR d.locked_until <= $1) AND e.disabled_reason IS NULL
                    ORDER BY d.next_attempt_at, d.id LIMIT $2
                    FOR UPDATE OF d SKIP LOCKED)
                UPDATE webhook_deliveries d SET locked_by = $3, locked_until = $4 FROM due WHERE d.id = due.id
                RETURNING d.*, due.url, due.secrets_sealed
                """, [now.timeIntervalSince1970, limit, owner, lockedUntil.timeIntervalSince1970])
        }
        let deliveries = try rows.map { row in
            var delivery = try Self.webhookDelivery(row)
            delivery.url = try row.get("url")
            delivery.secrets = try openSecrets(try row.bytes("secrets_sealed"))
            return delivery
        }
        // RETURNING keeps no order: oldest due first, as they were chosen.
        return deliveries.sorted { ($0.nextAttemptAt ?? now, $0.id) < ($1.nextAttemptAt ?? now, $1.id) }
    }

    public func recordWebhookAttempt(_ attempt: WebhookAttempt) async throws -> Bool {
        let (state, next): (WebhookDelivery.State, Date?) =
            switch attempt.outcome {
            case .delivered: (.delivered, nil)
            case .failed(let next): (next == nil ? .failed : .pending, next)
            case .gone: (.failed, nil)
            }
        // The endpoint's health, from the row the attempt changed ($3: the attempt's time).
        var values: [SQLBind] = [
            state.rawValue, next?.timeIntervalSince1970, attempt.at.timeIntervalSince1970, attempt.status,
            attempt.error, attempt.deliveryID, attempt.owner,
        ]
        let health: String
        switch attempt.outcome {
        case .delivered:
            health = """
                UPDATE webhook_endpoints e SET last_success_at = greatest(coalesce(e.last_success_at, 0), $3),
                    failing_since = NULL
                FROM attempted WHERE e.app_id = attempted.app_id AND e.id = attempted.endpoint_id
                """
        case .failed:
            values.append(WebhookEndpoint.failingLimit.timeInterval)
            health = """
                UPDATE webhook_endpoints e SET failing_since = coalesce(e.failing_since, $3),
                    disabled_reason = CASE WHEN e.disabled_reason IS NULL AND $3 - coalesce(e.failing_since, $3) >= $8
                        THEN 'failing' ELSE e.disabled_reason END
                FROM attempted WHERE e.app_id = attempted.app_id AND e.id = attempted.endpoint_id
                """
        case .gone:
            health = """
                UPDATE webhook_endpoints e SET disabled_reason = coalesce(e.disabled_reason, 'gone'),
                    failing_since = coalesce(e.failing_since, $3)
                FROM attempted WHERE e.app_id = attempted.app_id AND e.id = attempted.endpoint_id
                """
        }
        let sql = """
            WITH attempted AS (
                UPDATE webhook_deliveries SET state = $1, attempts = attempts + 1, next_attempt_at = $2,
                    locked_by = NULL, locked_until = NULL, last_attempt_at = $3, last_status = $4, last_error = $5
                WHERE id = $6 AND locked_by = $7
                RETURNING app_id, endpoint_id),
            health AS (\(health))
            SELECT count(*) AS n FROM attempted
            """
        let binds = values
        return try await read { connection in
            try await connection.rows(sql, binds).first?.get("n", as: Int64.self) ?? 0
        } > 0
    }

    public func webhookDeliveries(appID: String, endpointID: String, limit: Int) async throws -> [WebhookDelivery] {
        try await read { connection in
            try await connection.rows(
                """
                SELECT * FROM webhook_deliveries WHERE app_id = $1 AND endpoint_id = $2 ORDER BY id DESC LIMIT $3
                """, [appID, endpointID, limit])
        }.map(Self.webhookDelivery)
    }

    public func webhookBacklog(appID: String, endpointID: String) async throws -> Int {
        let rows = try await read { connection in
            try await connection.rows(
                """
                SELECT count(*) AS n FROM webhook_deliveries
                WHERE app_id = $1 AND endpoint_id = $2 AND state = 'pending'
                """, [appID, endpointID])
        }
        return Int(try rows.first?.get("n", as: Int64.self) ?? 0)
    }

    // MARK: The page commit's events

    /// Whether the notification's app has an enabled endpoint (a common page's commit asks before its
    /// one statement: when it has, the page is committed in a transaction with its events).
    func hasWebhookEndpoints(notificationID: String, _ connection: PostgresConnection) async throws -> Bool {
        try await !connection.rows(
            """
            SELECT 1 FROM webhook_endpoints e JOIN notifications n ON n.app_id = e.app_id
            WHERE n.id = $1 AND e.disabled_reason IS NULL LIMIT 1
            """, [notificationID]
        ).isEmpty
    }

    /// What a page commit's events are made of, in its transaction: the app's enabled endpoints, the
    /// notification's row (after the page's update of it, when read after ``CommitHeldPage``) and what
    /// the events say of the installations involved (read before the commit changes or deletes them).
    /// Nil when the notification's app has no enabled endpoint: one statement then, the commit writes
    /// no event.
    func webhookContext(for page: PageCommit, _ connection: PostgresConnection) async throws -> WebhookPageContext? {
        guard
            let row = try await connection.rows(
                """
                WITH hooks AS (
                    SELECT e.id, e.events FROM webhook_endpoints e JOIN notifications n ON n.app_id = e.app_id
                    WHERE n.id = $1 AND e.disabled_reason IS NULL)
                SELECT app_id, targeted, sent, failed, invalid, skipped_preferences, skipped_expired, rate_limited,
                    opened, created_at, completed_at,
                    ARRAY(SELECT id FROM hooks ORDER BY id) AS hook_ids,
                    ARRAY(SELECT events FROM hooks ORDER BY id) AS hook_events
                FROM notifications WHERE id = $1 AND EXISTS (SELECT 1 FROM hooks)
                """, [page.notificationID]
            ).first
        else { return nil }
        let hookIDs = try row.get("hook_ids", as: [String].self)
        let hookEvents = try row.get("hook_events", as: [String].self)
        let subscriptions = zip(hookIDs, hookEvents).map { WebhookSubscription(id: $0, eventsJSON: $1) }
        let notification = WebhookPageContext.Notification(
            counts: try Self.counts(row),
            createdAt: try row.date("created_at") ?? Date(timeIntervalSince1970: 0),
            completedAt: try row.date("completed_at"))
        var context = WebhookCommitContext(
            appID: try row.get("app_id"), subscriptions: subscriptions, installations: [:])
        guard context.wants(.deliveryFailed) || context.wants(.installationInvalidated) else {
            return WebhookPageContext(commit: context, notification: notification)
        }
        let ids = WebhookCommitContext.installationIDs(of: page)
        guard !ids.isEmpty else { return WebhookPageContext(commit: context, notification: notification) }
        for row in try await connection.rows(
            "SELECT \(Self.webhookInstallationColumns), valid FROM installations WHERE id = ANY($1)", [ids.sorted()])
        {
            guard let installation = try webhookInstallation(row) else { continue }
            context.installations[installation.id] = installation
            if try row.get("valid", as: Bool.self) { context.validBefore.insert(installation.id) }
        }
        return WebhookPageContext(commit: context, notification: notification)
    }

    // MARK: A fact's events (a cancellation, an open, a clean-up)

    /// The columns of `installations` an event's facts are read from (``webhookInstallation(_:)``).
    static let webhookInstallationColumns =
        "id, app_id, user_id, device_id, platform, service, sns_endpoint_arn, token_sealed"

    /// What events say of an installation, from a row of ``webhookInstallationColumns`` (nil: a
    /// platform or service this version does not know).
    func webhookInstallation(_ row: PostgresRandomAccessRow) throws -> WebhookEvent.Installation? {
        guard let platform = Platform(rawValue: try row.get("platform")),
            let service = PushService(rawValue: try row.get("service"))
        else { return nil }
        let token = try cipher.openToken(try row.bytes("token_sealed"), service: service)
        return WebhookEvent.Installation(
            id: try row.get("id"), userID: try row.get("user_id"), deviceID: try row.get("device_id"),
            platform: platform, service: service, snsEndpointARN: try row.get("sns_endpoint_arn"),
            token: token.identity)
    }

    /// Two columns, `hook_ids` and `hook_events`, naming the enabled endpoints of the app whose id is
    /// the SQL `appID` and the event types each wants: added to a statement a fact's transaction runs
    /// anyway, they tell it whether it has anything to tell with no statement of its own
    /// (``webhookSubscriptions(_:)`` reads them).
    static func webhookColumns(appID: String) -> String {
        """
        ARRAY(SELECT hook.id FROM webhook_endpoints hook
            WHERE hook.app_id = \(appID) AND hook.disabled_reason IS NULL ORDER BY hook.id) AS hook_ids,
        ARRAY(SELECT hook.events FROM webhook_endpoints hook
            WHERE hook.app_id = \(appID) AND hook.disabled_reason IS NULL ORDER BY hook.id) AS hook_events
        """
    }

    /// The subscriptions ``webhookColumns(appID:)`` read.
    static func webhookSubscriptions(_ row: PostgresRandomAccessRow) throws -> [WebhookSubscription] {
        zip(try row.get("hook_ids", as: [String].self), try row.get("hook_events", as: [String].self)).map {
            WebhookSubscription(id: $0, eventsJSON: $1)
        }
    }

    /// Writes one fact's events in the transaction `connection` for `subscriptions` (its app's, read
    /// in that transaction): none, and no statement, when no endpoint wants `type`; `make` runs only
    /// when one does.
    static func tell(
        _ type: WebhookEventType, _ subscriptions: [WebhookSubscription], _ connection: PostgresConnection,
        _ make: () throws -> [WebhookEvent]
    ) async throws {
        guard subscriptions.contains(where: { $0.events.contains(type) }) else { return }
        try await insertWebhookEvents(try make(), subscriptions, connection)
    }

    /// The enabled endpoints that want events of `type`, by app: every app's (one statement, a clean-up's).
    static func webhookSubscriptions(
        wanting type: WebhookEventType, _ connection: PostgresConnection
    ) async throws -> [String: [WebhookSubscription]] {
        var subscriptions: [String: [WebhookSubscription]] = [:]
        for row in try await connection.rows(
            "SELECT app_id, id, events FROM webhook_endpoints WHERE disabled_reason IS NULL ORDER BY app_id, id")
        {
            let subscription = WebhookSubscription(id: try row.get("id"), eventsJSON: try row.get("events"))
            if subscription.events.contains(type) {
                subscriptions[try row.get("app_id"), default: []].append(subscription)
            }
        }
        return subscriptions
    }

    /// Writes a committed page's events, after its other writes.
    func writeWebhookEvents(
        _ page: PageCommit, context: WebhookPageContext, invalidated: [(id: String, reason: String, at: Date)],
        _ connection: PostgresConnection
    ) async throws {
        var finished: WebhookEvent?
        if let status = page.status, WebhookEvent.finishedStatuses.contains(status) {
            let notification = context.notification
            finished = WebhookEvent.finished(
                appID: context.commit.appID, notificationID: page.notificationID, status: status,
                counts: notification.counts, createdAt: notification.createdAt,
                completedAt: notification.completedAt ?? page.at ?? Date())
        }
        let events = context.commit.events(for: page, invalidated: invalidated, finished: finished)
        try await Self.insertWebhookEvents(events, context.commit.subscriptions, connection)
    }

    // MARK: Rows

    /// An app's enabled endpoints and the event types each wants.
    static func webhookSubscriptions(
        appID: String, _ connection: PostgresConnection
    ) async throws -> [WebhookSubscription] {
        try await connection.rows(
            "SELECT id, events FROM webhook_endpoints WHERE app_id = $1 AND disabled_reason IS NULL ORDER BY id",
            [appID]
        ).map { row in WebhookSubscription(id: try row.get("id"), eventsJSON: try row.get("events")) }
    }

    /// One outbox row per event and endpoint subscribed to its type, in the events' order: one statement.
    @discardableResult
    static func insertWebhookEvents(
        _ events: [WebhookEvent], _ subscriptions: [WebhookSubscription], _ connection: PostgresConnection
    ) async throws -> Int {
        try await insertWebhookEvents(events, connection) { _ in subscriptions }
    }

    /// One outbox row per event and endpoint of its app (`subscriptions`) subscribed to its type: one statement.
    @discardableResult
    static func insertWebhookEvents(
        _ events: [WebhookEvent], _ connection: PostgresConnection,
        subscriptions: (_ appID: String) -> [WebhookSubscription]
    ) async throws -> Int {
        var (apps, endpoints, ids, types, bodies, times):
            ([String], [String], [String], [String], [ByteBuffer], [Double])
        (apps, endpoints, ids, types, bodies, times) = ([], [], [], [], [], [])
        for event in events {
            let body = ByteBuffer(bytes: event.body)
            for subscription in subscriptions(event.appID) where subscription.events.contains(event.type) {
                apps.append(event.appID)
                endpoints.append(subscription.id)
                ids.append(event.id)
                types.append(event.type.rawValue)
                bodies.append(body)
                times.append(event.occurredAt.timeIntervalSince1970)
            }
        }
        guard !apps.isEmpty else { return 0 }
        try await connection.run(
            """
            INSERT INTO webhook_deliveries (app_id, endpoint_id, event_id, event_type, body, created_at, next_attempt_at)
            SELECT event.app_id, event.endpoint_id, event.event_id, event.event_type, event.body, event.at, event.at
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::float8[]) WITH ORDINALITY
                AS event (app_id, endpoint_id, event_id, event_type, body, at, position)
            ORDER BY event.position
            """, [apps, endpoints, ids, types, bodies, times])
        return apps.count
    }

    /// An endpoint's columns in the order of `webhook_endpoints`' insert: `$1` its app, `$2` its id.
    private func endpointValues(_ endpoint: WebhookEndpoint) throws -> [SQLBind] {
        [
            endpoint.appID, endpoint.id, endpoint.url, WebhookSubscription.eventsJSON(endpoint.events),
            endpoint.description, Data(try sealSecrets(endpoint.secrets)), endpoint.configured,
            endpoint.disabledReason?.rawValue, endpoint.failingSince?.timeIntervalSince1970,
            endpoint.lastSuccessAt?.timeIntervalSince1970, endpoint.createdAt.timeIntervalSince1970,
            endpoint.updatedAt.timeIntervalSince1970,
        ]
    }

    /// Secrets at rest: the JSON of `[WebhookSecret]`, sealed with the store's cipher (as on SQLite).
    private func sealSecrets(_ secrets: [WebhookSecret]) throws -> [UInt8] {
        try cipher.seal(Array(try JSONEncoder().encode(secrets)))
    }

    private func openSecrets(_ sealed: [UInt8]) throws -> [WebhookSecret] {
        try JSONDecoder().decode([WebhookSecret].self, from: Data(try cipher.open(sealed)))
    }

    private func webhookEndpoint(_ row: PostgresRandomAccessRow) throws -> WebhookEndpoint {
        WebhookEndpoint(
            id: try row.get("id"), appID: try row.get("app_id"), url: try row.get("url"),
            events: Array(WebhookSubscription(id: "", eventsJSON: try row.get("events")).events),
            description: try row.get("description"), secrets: try openSecrets(try row.bytes("secrets_sealed")),
            configured: try row.get("configured"),
            disabledReason: try row.get("disabled_reason", as: String?.self).flatMap(
                WebhookEndpoint.DisabledReason.init),
            failingSince: try row.date("failing_since"), lastSuccessAt: try row.date("last_success_at"),
            createdAt: try row.date("created_at") ?? Date(timeIntervalSince1970: 0),
            updatedAt: try row.date("updated_at") ?? Date(timeIntervalSince1970: 0))
    }

    private static func webhookDelivery(_ row: PostgresRandomAccessRow) throws -> WebhookDelivery {
        guard let type = WebhookEventType(rawValue: try row.get("event_type")),
            let state = WebhookDelivery.State(rawValue: try row.get("state"))
        else { throw HeraldError.internal("An outbox row has an unknown type or state.") }
        return WebhookDelivery(
            id: try row.get("id"), appID: try row.get("app_id"), endpointID: try row.get("endpoint_id"),
            eventID: try row.get("event_id"), eventType: type, body: try row.bytes("body"),
            createdAt: try row.date("created_at") ?? Date(timeIntervalSince1970: 0), state: state,
            attempts: try row.get("attempts"), nextAttemptAt: try row.date("next_attempt_at"),
            lastAttemptAt: try row.date("last_attempt_at"), lastStatus: try row.get("last_status"),
            lastError: try row.get("last_error"))
    }
}

/// What a page commit's events are made of on PostgreSQL: ``WebhookCommitContext`` and the
/// notification's row as the commit left it (its final event's counts).
struct WebhookPageContext: Sendable {
    struct Notification: Sendable {
        var counts: NotificationCounts
        var createdAt: Date
        var completedAt: Date?
    }

    var commit: WebhookCommitContext
    var notification: Notification
}

import Foundation
import HeraldCore
import PostgresNIO

// The statements every notification runs, prepared once per connection: PostgreSQL parses, analyzes
// and plans an unnamed statement on every execution, which cost more than running these (40 % of the
// server's CPU at 500 sends a second, against 9 % executing them). Each has a fixed text: what
// varies goes in its values, lists as arrays.

/// A new notification and its job leased to this node, in one statement; answers the job's id.
struct InsertLeasedNotification: PostgresPreparedStatement {
    typealias Row = Int64

    static let sql = PostgresStore.insertNotificationSQL(leased: true, alongside: "")

    static let bindingDataTypes: [PostgresDataType] = [
        .text, .text, .text, .bytea, .bool, .text, .float8, .float8, .float8, .text, .float8, .text, .float8,
    ]

    /// The values of ``PostgresStore/insertNotificationSQL(leased:alongside:)``, in its order.
    var bindings: PostgresBindings

    func makeBindings() throws -> PostgresBindings { bindings }

    func decodeRow(_ row: PostgresRow) throws -> Int64 { try row.decode(Int64.self) }
}

/// A page commit's first statement (see ``PostgresStore/commit(_:)``): the job's row locked (a node
/// that lost the lease writes nothing), its lease renewed or the job deleted when the page finishes
/// it, the installations delivered to, the page's ledger, and the notification's counts, cursor and
/// status. Answers 1 when the job was this node's, else 0.
struct CommitHeldPage: PostgresPreparedStatement {
    typealias Row = Int64

    static let sql = """
        WITH job AS (SELECT id FROM jobs WHERE id = $1 AND locked_by = $2 FOR UPDATE),
        renewed AS (
            UPDATE jobs SET locked_until = $3 WHERE id IN (SELECT id FROM job) AND $3 IS NOT NULL AND NOT $4),
        finished AS (DELETE FROM jobs WHERE id IN (SELECT id FROM job) AND $4),
        reset AS (
            -- The few failing installations, through their partial index: no other row is written.
            UPDATE installations SET failure_count = 0
            WHERE id = ANY($5::text[]) AND failure_count <> 0 AND EXISTS (SELECT 1 FROM job)
            RETURNING id),
        delivered AS (
            INSERT INTO installation_deliveries AS known (installation_id, delivered_at)
            SELECT page.id, page.at FROM (
                SELECT DISTINCT ON (page.id) page.id, page.at FROM unnest($5::text[], $6::float8[]) AS page (id, at)
                WHERE EXISTS (SELECT 1 FROM job)
                ORDER BY page.id, page.at DESC) AS page
            -- Rows delivered to within the resolution are left alone (no new row version, no WAL),
            -- unless the delivery reset failures. They are passed over here, before the insert: its
            -- conflict would lock each one, and a row lock is a WAL record (a repeat broadcast's only
            -- write per device). When no row lies between the page's first and last id (a first
            -- broadcast), one look at the index says so and no row is looked up twice.
            WHERE NOT EXISTS (
                    SELECT 1 FROM installation_deliveries
                    WHERE installation_id >= (SELECT min(id COLLATE "C") FROM unnest($5::text[]) AS id)
                        AND installation_id <= (SELECT max(id COLLATE "C") FROM unnest($5::text[]) AS id))
                OR page.id IN (SELECT id FROM reset)
                OR NOT EXISTS (
                    SELECT 1 FROM installation_deliveries AS stored WHERE stored.installation_id = page.id
                        AND stored.delivered_at >= page.at - $7 AND stored.delivered_at <= page.at)
            -- The same rule again for a row another transaction wrote since this statement's snapshot.
            ON CONFLICT (installation_id) DO UPDATE SET delivered_at = excluded.delivered_at
            WHERE known.delivered_at < excluded.delivered_at - $7 OR known.delivered_at > excluded.delivered_at
                OR known.installation_id IN (SELECT id FROM reset)),
        ledger AS (
            INSERT INTO deliveries (notification_id, installation_id, token_suffix, service, outcome, provider_id,
                reason, attempts, at)
            SELECT page.notification_id, nullif(page.installation_id, ''), page.token_suffix, page.service,
                page.outcome, nullif(page.provider_id, ''), nullif(page.reason, ''), page.attempts, page.at
            FROM unnest($8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[],
                $15::int8[], $16::float8[])
                AS page (notification_id, installation_id, token_suffix, service, outcome, provider_id, reason,
                    attempts, at)
            WHERE EXISTS (SELECT 1 FROM job)),
        counted AS (
            UPDATE notifications SET targeted = targeted + $17, sent = sent + $18, failed = failed + $19,
                invalid = invalid + $20, skipped_preferences = skipped_preferences + $21,
                skipped_expired = skipped_expired + $22, rate_limited = rate_limited + $23,
                cursor = coalesce($24, cursor), status = coalesce($25, status),
                started_at = coalesce(started_at, $26), completed_at = coalesce($27, completed_at),
                first_sent_at = coalesce(first_sent_at, $28)
            WHERE id = $29 AND EXISTS (SELECT 1 FROM job)),
        ranged AS (
            UPDATE fanout_ranges SET cursor = $30 WHERE notification_id = $29 AND idx = $31
                AND EXISTS (SELECT 1 FROM job))
        SELECT count(*) FROM job
        """

    static let bindingDataTypes: [PostgresDataType] = [
        .int8, .text, .float8, .bool, .textArray, .float8Array, .float8,
        .textArray, .textArray, .textArray, .textArray, .textArray, .textArray, .textArray, .int8Array, .float8Array,
        .int8, .int8, .int8, .int8, .int8, .int8, .int8, .text, .text, .float8, .float8, .float8, .text,
        .text, .int8,
    ]

    var page: PageCommit
    /// The installations delivered to, with when.
    var delivered: [(id: String, at: Double)]

    func makeBindings() throws -> PostgresBindings {
        let ledger = page.ledger
        let counts = page.counts
        // Arrays hold no NULL here: an empty string stands for one (no id, reason or provider id is empty).
        return try PostgresBindings([
            page.jobID, page.owner, page.lockedUntil?.timeIntervalSince1970, page.finishesJob,
            delivered.map(\.id), delivered.map(\.at), InstallationEvent.deliveredResolution,
            ledger.map(\.notificationID), ledger.map { $0.installationID ?? "" }, ledger.map(\.tokenSuffix),
            ledger.map(\.service.rawValue), ledger.map(\.outcome.rawValue), ledger.map { $0.providerID ?? "" },
            ledger.map { $0.reason ?? "" }, ledger.map { Int64($0.attempts) },
            ledger.map(\.at.timeIntervalSince1970),
            Int64(counts.targeted), Int64(counts.sent), Int64(counts.failed), Int64(counts.invalid),
            Int64(counts.skippedPreferences), Int64(counts.skippedExpired), Int64(counts.rateLimited),
            // A range's cursor is the range's own.
            page.range == nil ? page.cursor : nil, page.status?.rawValue, page.startedAt?.timeIntervalSince1970,
            page.completedAt?.timeIntervalSince1970,
            // The page's earliest delivery to an installation (what events' push_sent_at reads).
            delivered.map(\.at).min(), page.notificationID, page.range == nil ? nil : page.cursor,
            page.range.map(Int64.init),
        ])
    }

    func decodeRow(_ row: PostgresRow) throws -> Int64 { try row.decode(Int64.self) }
}

extension PostgresBindings {
    /// Bindings of the values, NULL for nil.
    init(_ values: [SQLBind]) throws {
        self.init(capacity: values.count)
        for value in values {
            if let value { try append(value) } else { appendNull() }
        }
    }
}

extension PostgresConnection {
    /// Runs a prepared statement (preparing it on this connection the first time) and returns its
    /// rows, with PostgreSQL's errors as ``run(_:_:)`` reports them.
    func rows<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws -> [Statement.Row]
    where Statement.Row: Sendable {
        do {
            guard let deadline = CallDeadline.current else { return try await collect(statement) }
            return try await deadline.wait { try await self.collect(statement) }
        } catch let error as PSQLError {
            throw Self.storeError(error)
        }
    }

    private func collect<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws -> [Statement.Row] {
        var rows: [Statement.Row] = []
        for try await row in try await execute(statement, logger: logger) { rows.append(row) }
        return rows
    }
}

/// The first pages of notifications to user ids or installation ids (what nearly every small
/// notification targets), with the preferences of those that ask: one row a recipient, for each
/// key the first `limit` installations by id. A request's page is the first `limit` of its keys'
/// rows together (``PostgresStore/resolveFirstPages(_:)``).
struct ResolveFirstPagesByKey: PostgresPreparedStatement {
    typealias Row = PostgresRandomAccessRow

    static let sql = """
        SELECT keys.request, page.id, page.platform, page.service, page.environment, page.token_sealed,
            page.timezone, page.bundle_id,
            CASE WHEN keys.preferences THEN (SELECT body FROM preferences WHERE installation_id = page.id) END
                AS preferences
        FROM unnest($1::int8[], $2::text[], $3::text[], $4::bool[], $5::int8[], $6::bool[])
            AS keys (request, app_id, key, by_user, lim, preferences)
        CROSS JOIN LATERAL (
            (SELECT \(PostgresStore.targetColumns) FROM installations
                WHERE keys.by_user AND app_id = keys.app_id AND user_id = keys.key AND valid
                ORDER BY id LIMIT keys.lim)
            UNION ALL
            (SELECT \(PostgresStore.targetColumns) FROM installations
                WHERE NOT keys.by_user AND app_id = keys.app_id AND id = keys.key AND valid)
        ) AS page
        """

    static let bindingDataTypes: [PostgresDataType] = [
        .int8Array, .textArray, .textArray, .boolArray, .int8Array, .boolArray,
    ]

    var bindings: PostgresBindings

    /// The statement for these requests, or nil when one of them is not to user ids or
    /// installation ids alone (no platform or service filter).
    init?(_ requests: [FirstPageRequest]) throws {
        var request: [Int64] = []
        var app: [String] = []
        var key: [String] = []
        var byUser: [Bool] = []
        var limit: [Int64] = []
        var preferences: [Bool] = []
        for (index, first) in requests.enumerated() {
            guard first.target.platforms == nil, first.target.services == nil else { return nil }
            let keys: [String]
            let users: Bool
            switch first.target.audience {
            case .userIDs(let ids): (keys, users) = (ids, true)
            case .installationIDs(let ids): (keys, users) = (ids, false)
            case .tokens: continue
            case .all, .channels, .query, .liveActivity, .liveActivityChannel: return nil
            }
            for each in Set(keys) {
                request.append(Int64(index))
                app.append(first.appID)
                key.append(each)
                byUser.append(users)
                limit.append(Int64(first.limit))
                preferences.append(first.withPreferences)
            }
        }
        bindings = PostgresBindings(capacity: 6)
        bindings.append(request)
        bindings.append(app)
        bindings.append(key)
        bindings.append(byUser)
        bindings.append(limit)
        bindings.append(preferences)
    }

    func makeBindings() throws -> PostgresBindings { bindings }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRandomAccessRow { row.makeRandomAccess() }
}

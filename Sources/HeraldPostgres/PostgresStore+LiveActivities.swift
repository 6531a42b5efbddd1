import Foundation
import HeraldCore
import PostgresNIO

// Live Activities (docs/live-activities.md), as on SQLite (`SQLiteStore+LiveActivities`): activities,
// their members' tokens and revisions, push-to-start tokens and broadcast channels. Tokens are sealed
// like installations' tokens. Several nodes assign revisions and claim sends at once: each locks the
// rows it decides on (the activity's for a revision, the members' for a claim) until it commits.
extension PostgresStore {
    public func createLiveActivity(_ activity: LiveActivity) async throws -> Bool {
        try await read { connection in
            try await connection.changes(
                """
                INSERT INTO live_activities (app_id, id, attributes_type, revision, last_timestamp, created_at,
                    updated_at, dismissal_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (app_id, id) DO NOTHING
                """,
                [
                    activity.appID, activity.id, activity.attributesType, activity.revision,
                    Int(activity.createdAt.timeIntervalSince1970), activity.createdAt.timeIntervalSince1970,
                    activity.updatedAt.timeIntervalSince1970, activity.dismissalAt?.timeIntervalSince1970,
                ]) > 0
        }
    }

    public func liveActivity(appID: String, id: String) async throws -> LiveActivity? {
        let rows = try await read { connection in
            try await connection.rows(
                """
                SELECT a.*, (SELECT count(*) FROM live_activity_members m
                    WHERE m.app_id = a.app_id AND m.activity_id = a.id) AS devices
                FROM live_activities a WHERE a.app_id = $1 AND a.id = $2
                """, [appID, id])
        }
        guard let row = rows.first else { return nil }
        return LiveActivity(
            appID: try row.get("app_id"), id: try row.get("id"), attributesType: try row.get("attributes_type"),
            revision: try row.get("revision"), endedAt: try row.date("ended_at"),
            dismissalAt: try row.date("dismissal_at"), devices: Int(try row.get("devices", as: Int64.self)),
            createdAt: try row.date("created_at") ?? .distantPast,
            updatedAt: try row.date("updated_at") ?? .distantPast)
    }

    public func nextLiveActivityRevision(
        appID: String, id: String, end: Bool, dismissalAt: Date?, wantsHighPriority: Bool, highPriorityPerHour: Int,
        now: Date
    ) async throws -> LiveActivityRevision? {
        try await transaction { connection -> LiveActivityRevision? in
            // The row stays locked until the commit: another node's revision waits for this one and
            // reads the counter, budget and timestamp it wrote. NO KEY UPDATE, as the UPDATE itself
            // takes: members being inserted (their foreign key's KEY SHARE lock) do not wait for it.
            guard
                let row = try await connection.rows(
                    """
                    SELECT revision, ended_at, high_window_start, high_count, last_timestamp FROM live_activities
                    WHERE app_id = $1 AND id = $2 FOR NO KEY UPDATE
                    """, [appID, id]
                ).first
            else { return nil }
            if try row.date("ended_at") != nil {
                throw HeraldError(
                    kind: .conflict, code: "live_activity_ended", message: "The Live Activity '\(id)' has ended.")
            }
            var budget = LiveActivityBudget(
                windowStart: try row.date("high_window_start"), count: try row.get("high_count"))
            let high = wantsHighPriority && budget.take(perHour: highPriorityPerHour, now: now)
            let revision = try row.get("revision", as: Int.self) + 1
            let timestamp = LiveActivityRevision.timestamp(after: try row.get("last_timestamp"), now: now)
            let dismissal = end ? (dismissalAt ?? now.addingTimeInterval(LiveActivity.defaultDismissal)) : nil
            try await connection.run(
                """
                UPDATE live_activities SET revision = $3, high_window_start = $4, high_count = $5, updated_at = $6,
                    ended_at = $7, dismissal_at = $8, last_timestamp = $9
                WHERE app_id = $1 AND id = $2
                """,
                [
                    appID, id, revision, budget.windowStart?.timeIntervalSince1970, budget.count,
                    now.timeIntervalSince1970, end ? now.timeIntervalSince1970 : nil,
                    dismissal?.timeIntervalSince1970, timestamp,
                ])
            return LiveActivityRevision(revision: revision, highPriority: high, timestamp: timestamp)
        }
    }

    public func setPushToStartToken(
        installationID: String, attributesType: String, token: String, service: PushService, now: Date
    ) async throws {
        let sealed = try cipher.seal(.device(token), service: service).sealed
        try await read { connection in
            try await connection.run(
                """
                INSERT INTO push_to_start_tokens (installation_id, attributes_type, token_sealed, token_suffix,
                    updated_at)
                VALUES ($1, $2, $3, $4, $5) ON CONFLICT (installation_id, attributes_type) DO UPDATE SET
                    token_sealed = EXCLUDED.token_sealed, token_suffix = EXCLUDED.token_suffix,
                    updated_at = EXCLUDED.updated_at
                """,
                [installationID, attributesType, Data(sealed), String(token.suffix(8)), now.timeIntervalSince1970])
        }
    }

    public func removePushToStartToken(installationID: String, attributesType: String) async throws -> Bool {
        try await read { connection in
            try await connection.changes(
                "DELETE FROM push_to_start_tokens WHERE installation_id = $1 AND attributes_type = $2",
                [installationID, attributesType]) > 0
        }
    }

    public func setActivityToken(
        appID: String, installationID: String, activityID: String, attributesType: String, token: String?,
        service: PushService, now: Date
    ) async throws {
        let sealed = try token.map { (token) throws(HeraldError) in try cipher.seal(.device(token), service: service) }
        let stamp = now.timeIntervalSince1970
        try await transaction { connection in
            // An activity the app started itself is known from its first token.
            try await connection.run(
                """
                INSERT INTO live_activities (app_id, id, attributes_type, revision, created_at, updated_at)
                VALUES ($1, $2, $3, 1, $4, $4) ON CONFLICT (app_id, id) DO NOTHING
                """, [appID, activityID, attributesType, stamp])
            try await connection.run(
                """
                INSERT INTO live_activity_members (app_id, activity_id, installation_id, token_sealed, token_suffix,
                    updated_at)
                VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (app_id, activity_id, installation_id) DO UPDATE SET
                    token_sealed = EXCLUDED.token_sealed, token_suffix = EXCLUDED.token_suffix,
                    updated_at = EXCLUDED.updated_at
                """,
                [
                    appID, activityID, installationID, sealed.map { Data($0.sealed) },
                    token.map { String($0.suffix(8)) },
                    stamp,
                ])
        }
    }

    public func removeActivityToken(installationID: String, activityID: String) async throws -> Bool {
        try await read { connection in
            try await connection.changes(
                "DELETE FROM live_activity_members WHERE installation_id = $1 AND activity_id = $2",
                [installationID, activityID]) > 0
        }
    }

    public func liveActivityTokens(installationID: String) async throws -> [LiveActivityTokenInfo] {
        let (starts, activities) = try await read { connection in
            (
                try await connection.rows(
                    """
                    SELECT attributes_type, token_suffix, updated_at FROM push_to_start_tokens
                    WHERE installation_id = $1 ORDER BY attributes_type
                    """, [installationID]),
                try await connection.rows(
                    """
                    SELECT m.activity_id, a.attributes_type, m.token_suffix, m.updated_at FROM live_activity_members m
                    JOIN live_activities a ON a.app_id = m.app_id AND a.id = m.activity_id
                    WHERE m.installation_id = $1 AND m.activity_id NOT LIKE '#%' ORDER BY m.activity_id
                    """, [installationID])
            )
        }
        func info(_ row: PostgresRandomAccessRow, activityID: String?) throws -> LiveActivityTokenInfo {
            LiveActivityTokenInfo(
                activityID: activityID, attributesType: try row.get("attributes_type"),
                tokenSuffix: try row.get("token_suffix"), updatedAt: try row.date("updated_at") ?? .distantPast)
        }
        return try starts.map { try info($0, activityID: nil) }
            + activities.map { try info($0, activityID: try $0.get("activity_id")) }
    }

    public func claimLiveActivitySends(
        appID: String, activityID: String, attributesType: String, revision: Int, tokens: LiveActivityClaimTokens,
        installationIDs: [String], services: [String: PushService], now: Date, until: Date
    ) async throws -> [String: LiveActivityClaim] {
        guard !installationIDs.isEmpty else { return [:] }
        // In id order: two nodes claiming for overlapping installations lock their rows in one order.
        let ids = Set(installationIDs).sorted()
        let start = tokens == .pushToStart
        let decisions = try await transaction { connection -> [String: LiveActivitySendDecision] in
            var startTokens: [String: [UInt8]] = [:]
            // A notification's revision sent to a target makes each recipient a member.
            var joining = tokens.joinsAll ? ids : []
            if start {
                for row in try await connection.rows(
                    """
                    SELECT installation_id, token_sealed FROM push_to_start_tokens
                    WHERE attributes_type = $1 AND installation_id = ANY($2)
                    """, [attributesType, ids])
                {
                    startTokens[try row.get("installation_id")] = try row.bytes("token_sealed")
                }
                // The start makes each recipient it goes to a member: an APNs one through its
                // push-to-start token, another through its installation's token.
                joining = ids.filter { startTokens[$0] != nil || tokens.ownToken(services[$0] ?? .apns) }
            }
            if !joining.isEmpty {
                try await connection.run(
                    """
                    INSERT INTO live_activity_members (app_id, activity_id, installation_id, updated_at)
                    SELECT $1, $2, joining.id, $4 FROM unnest($3::text[]) AS joining (id) ORDER BY joining.id
                    ON CONFLICT DO NOTHING
                    """, [appID, activityID, joining, now.timeIntervalSince1970])
            }
            // Locked until the commit: a node claiming another revision for one of them waits, then
            // reads the revision and claim this one wrote.
            var decisions: [String: LiveActivitySendDecision] = [:]
            for row in try await connection.rows(
                """
                SELECT installation_id, token_sealed, sent_revision, sending_until FROM live_activity_members
                WHERE app_id = $1 AND activity_id = $2 AND installation_id = ANY($3)
                ORDER BY installation_id FOR UPDATE
                """, [appID, activityID, ids])
            {
                let id: String = try row.get("installation_id")
                let own = try row.get("token_sealed", as: Data?.self).map(Array.init)
                decisions[id] = .member(
                    revision: revision, sentRevision: try row.get("sent_revision"),
                    sendingUntil: try row.date("sending_until"), now: now,
                    ownToken: tokens.ownToken(services[id] ?? .apns),
                    sealed: start ? startTokens[id] : own)
            }
            let granted = decisions.compactMap { id, decision in decision.sends ? id : nil }.sorted()
            if !granted.isEmpty {
                try await connection.run(
                    """
                    UPDATE live_activity_members SET sent_revision = $3, sending_until = $4
                    WHERE app_id = $1 AND activity_id = $2 AND installation_id = ANY($5)
                    """, [appID, activityID, revision, until.timeIntervalSince1970, granted])
            }
            return decisions
        }
        return try LiveActivitySendDecision.claims(decisions, for: installationIDs, cipher: cipher)
    }

    public func releaseLiveActivitySends(
        appID: String, activityID: String, revision: Int, installationIDs: [String]
    ) async throws {
        guard !installationIDs.isEmpty else { return }
        try await read { connection in
            try await connection.run(
                """
                UPDATE live_activity_members SET sending_until = NULL
                WHERE app_id = $1 AND activity_id = $2 AND sent_revision = $3 AND installation_id = ANY($4)
                """, [appID, activityID, revision, installationIDs])
        }
    }

    public func dropLiveActivityTokens(_ drops: [LiveActivityTokenDrop]) async throws {
        guard !drops.isEmpty else { return }
        let parts = drops.compactMap { drop in drop.activityID.map { (drop.installationID, $0) } }
        let starts = drops.filter { $0.activityID == nil }.map { ($0.installationID, $0.attributesType) }
        try await transaction { connection in
            if !parts.isEmpty {
                try await connection.run(
                    """
                    DELETE FROM live_activity_members m
                    USING unnest($1::text[], $2::text[]) AS refused (installation_id, activity_id)
                    WHERE m.installation_id = refused.installation_id AND m.activity_id = refused.activity_id
                    """, [parts.map(\.0), parts.map(\.1)])
            }
            if !starts.isEmpty {
                try await connection.run(
                    """
                    DELETE FROM push_to_start_tokens t
                    USING unnest($1::text[], $2::text[]) AS refused (installation_id, attributes_type)
                    WHERE t.installation_id = refused.installation_id AND t.attributes_type = refused.attributes_type
                    """, [starts.map(\.0), starts.map(\.1)])
            }
        }
    }

    public func forgetDismissedLiveActivities(before cutoff: Date) async throws -> Int {
        // The members go with their activity (ON DELETE CASCADE); the statement's snapshot still
        // shows them, so it counts them.
        let rows = try await read { connection in
            try await connection.rows(
                """
                WITH gone AS (
                    DELETE FROM live_activities
                    WHERE (ended_at IS NOT NULL OR id LIKE '\(NotificationRevision.counterPrefix)%') AND dismissal_at < $1
                    RETURNING app_id, id)
                SELECT count(*) AS n FROM live_activity_members m
                JOIN gone ON m.app_id = gone.app_id AND m.activity_id = gone.id
                """, [cutoff.timeIntervalSince1970])
        }
        return Int(try rows.first?.get("n", as: Int64.self) ?? 0)
    }

    public func createLiveActivityChannel(_ channel: LiveActivityChannel) async throws -> Bool {
        try await read { connection in
            try await connection.changes(
                """
                INSERT INTO live_activity_channels (app_id, id, apns_channel_id, storage_policy, environment,
                    created_at)
                VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (app_id, id) DO NOTHING
                """,
                [
                    channel.appID, channel.id, channel.apnsChannelID, channel.storagePolicy.rawValue,
                    channel.environment.rawValue, channel.createdAt.timeIntervalSince1970,
                ]) > 0
        }
    }

    public func liveActivityChannels(appID: String) async throws -> [LiveActivityChannel] {
        try await read { connection in
            try await connection.rows(
                "SELECT * FROM live_activity_channels WHERE app_id = $1 ORDER BY created_at, id", [appID])
        }.map(Self.liveActivityChannel)
    }

    public func liveActivityChannel(appID: String, id: String) async throws -> LiveActivityChannel? {
        try await read { connection in
            try await connection.rows(
                "SELECT * FROM live_activity_channels WHERE app_id = $1 AND id = $2", [appID, id])
        }.first.map(Self.liveActivityChannel)
    }

    public func deleteLiveActivityChannel(appID: String, id: String) async throws -> Bool {
        try await transaction { connection in
            let deleted = try await connection.changes(
                "DELETE FROM live_activity_channels WHERE app_id = $1 AND id = $2", [appID, id])
            // The channel's revision counter goes with it.
            _ = try await connection.changes(
                "DELETE FROM live_activities WHERE app_id = $1 AND id = $2", [appID, LiveActivityChannel.counterID(id)])
            return deleted > 0
        }
    }

    private static func liveActivityChannel(_ row: PostgresRandomAccessRow) throws -> LiveActivityChannel {
        guard let policy = LiveActivityChannel.StoragePolicy(rawValue: try row.get("storage_policy")),
            let environment = PushEnvironment(rawValue: try row.get("environment"))
        else { throw HeraldError.internal("Stored Live Activity channel is unreadable.") }
        return LiveActivityChannel(
            appID: try row.get("app_id"), id: try row.get("id"), apnsChannelID: try row.get("apns_channel_id"),
            storagePolicy: policy, environment: environment,
            createdAt: try row.date("created_at") ?? .distantPast)
    }
}

extension PostgresStore: LiveActivityStore {}

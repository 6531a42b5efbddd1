import Foundation
import GRDB
import HeraldCore

// Live Activities (docs/live-activities.md): activities, their members' tokens and revisions,
// push-to-start tokens and broadcast channels. Tokens are sealed like installations' tokens.
extension SQLiteStore {
    public func createLiveActivity(_ activity: LiveActivity) async throws -> Bool {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO live_activities (app_id, id, attributes_type, revision, last_timestamp, created_at,
                        updated_at, dismissal_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                    """,
                arguments: [
                    activity.appID, activity.id, activity.attributesType, activity.revision,
                    Int(activity.createdAt.timeIntervalSince1970),
                    activity.createdAt.timeIntervalSince1970, activity.updatedAt.timeIntervalSince1970,
                    activity.dismissalAt?.timeIntervalSince1970,
                ])
            return db.changesCount > 0
        }
    }

    public func liveActivity(appID: String, id: String) async throws -> LiveActivity? {
        try await database.read { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT a.*, (SELECT count(*) FROM live_activity_members m
                            WHERE m.app_id = a.app_id AND m.activity_id = a.id) AS devices
                        FROM live_activities a WHERE app_id = ? AND id = ?
                        """, arguments: [appID, id])
            else { return nil }
            func date(_ column: String) -> Date? { (row[column] as Double?).map(Date.init(timeIntervalSince1970:)) }
            return LiveActivity(
                appID: row["app_id"], id: row["id"], attributesType: row["attributes_type"], revision: row["revision"],
                endedAt: date("ended_at"), dismissalAt: date("dismissal_at"), devices: row["devices"],
                createdAt: date("created_at") ?? .distantPast, updatedAt: date("updated_at") ?? .distantPast)
        }
    }

    public func nextLiveActivityRevision(
        appID: String, id: String, end: Bool, dismissalAt: Date?, wantsHighPriority: Bool, highPriorityPerHour: Int,
        now: Date
    ) async throws -> LiveActivityRevision? {
        try await write { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT revision, ended_at, high_window_start, high_count, last_timestamp FROM live_activities
                        WHERE app_id = ? AND id = ?
                        """, arguments: [appID, id])
            else { return nil }
            if row["ended_at"] as Double? != nil {
                throw HeraldError(
                    kind: .conflict, code: "live_activity_ended", message: "The Live Activity '\(id)' has ended.")
            }
            var budget = LiveActivityBudget(
                windowStart: (row["high_window_start"] as Double?).map(Date.init(timeIntervalSince1970:)),
                count: row["high_count"])
            let high = wantsHighPriority && budget.take(perHour: highPriorityPerHour, now: now)
            let revision = (row["revision"] as Int) + 1
            let timestamp = LiveActivityRevision.timestamp(after: row["last_timestamp"], now: now)
            let dismissal = end ? (dismissalAt ?? now.addingTimeInterval(LiveActivity.defaultDismissal)) : nil
            try db.execute(
                sql: """
                    UPDATE live_activities SET revision = ?, high_window_start = ?, high_count = ?, updated_at = ?,
                        ended_at = ?, dismissal_at = ?, last_timestamp = ? WHERE app_id = ? AND id = ?
                    """,
                arguments: [
                    revision, budget.windowStart?.timeIntervalSince1970, budget.count, now.timeIntervalSince1970,
                    end ? now.timeIntervalSince1970 : nil, dismissal?.timeIntervalSince1970, timestamp, appID, id,
                ])
            return LiveActivityRevision(revision: revision, highPriority: high, timestamp: timestamp)
        }
    }

    public func setPushToStartToken(
        installationID: String, attributesType: String, token: String, service: PushService, now: Date
    ) async throws {
        let sealed = try cipher.seal(.device(token), service: service).sealed
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO push_to_start_tokens (installation_id, attributes_type, token_sealed, token_suffix, updated_at)
                    VALUES (?, ?, ?, ?, ?) ON CONFLICT (installation_id, attributes_type) DO UPDATE SET
                        token_sealed = excluded.token_sealed, token_suffix = excluded.token_suffix,
                        updated_at = excluded.updated_at
                    """,
                arguments: [
                    installationID, attributesType, Data(sealed), String(token.suffix(8)), now.timeIntervalSince1970,
                ])
        }
    }

    public func removePushToStartToken(installationID: String, attributesType: String) async throws -> Bool {
        try await write { db in
            try db.execute(
                sql: "DELETE FROM push_to_start_tokens WHERE installation_id = ? AND attributes_type = ?",
                arguments: [installationID, attributesType])
            return db.changesCount > 0
        }
    }

    public func setActivityToken(
        appID: String, installationID: String, activityID: String, attributesType: String, token: String?,
        service: PushService, now: Date
    ) async throws {
        let sealed = try token.map { (token) throws(HeraldError) in try cipher.seal(.device(token), service: service) }
        try await write { db in
            let stamp = now.timeIntervalSince1970
            // An activity the app started itself is known from its first token.
            try db.execute(
                sql: """
                    INSERT INTO live_activities (app_id, id, attributes_type, revision, created_at, updated_at)
                    VALUES (?, ?, ?, 1, ?, ?) ON CONFLICT DO NOTHING
                    """, arguments: [appID, activityID, attributesType, stamp, stamp])
            try db.execute(
                sql: """
                    INSERT INTO live_activity_members (app_id, activity_id, installation_id, token_sealed, token_suffix, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (app_id, activity_id, installation_id) DO UPDATE SET
                        token_sealed = excluded.token_sealed, token_suffix = excluded.token_suffix,
                        updated_at = excluded.updated_at
                    """,
                arguments: [
                    appID, activityID, installationID, sealed.map { Data($0.sealed) },
                    token.map { String($0.suffix(8)) },
                    stamp,
                ])
        }
    }

    public func removeActivityToken(installationID: String, activityID: String) async throws -> Bool {
        try await write { db in
            try db.execute(
                sql: "DELETE FROM live_activity_members WHERE installation_id = ? AND activity_id = ?",
                arguments: [installationID, activityID])
            return db.changesCount > 0
        }
    }

    public func liveActivityTokens(installationID: String) async throws -> [LiveActivityTokenInfo] {
        try await database.read { db in
            let starts = try Row.fetchAll(
                db,
                sql: """
                    SELECT attributes_type, token_suffix, updated_at FROM push_to_start_tokens
                    WHERE installation_id = ? ORDER BY attributes_type
                    """, arguments: [installationID]
            ).map { row in
                LiveActivityTokenInfo(
                    activityID: nil, attributesType: row["attributes_type"], tokenSuffix: row["token_suffix"],
                    updatedAt: Date(timeIntervalSince1970: row["updated_at"]))
            }
            let activities = try Row.fetchAll(
                db,
                sql: """
                    SELECT m.activity_id, a.attributes_type, m.token_suffix, m.updated_at FROM live_activity_members m
                    JOIN live_activities a ON a.app_id = m.app_id AND a.id = m.activity_id
                    WHERE m.installation_id = ? AND m.activity_id NOT LIKE '#%' ORDER BY m.activity_id
                    """, arguments: [installationID]
            ).map { row in
                LiveActivityTokenInfo(
                    activityID: row["activity_id"], attributesType: row["attributes_type"],
                    tokenSuffix: row["token_suffix"], updatedAt: Date(timeIntervalSince1970: row["updated_at"]))
            }
            return starts + activities
        }
    }

    public func claimLiveActivitySends(
        appID: String, activityID: String, attributesType: String, revision: Int, tokens: LiveActivityClaimTokens,
        installationIDs: [String], services: [String: PushService], now: Date, until: Date
    ) async throws -> [String: LiveActivityClaim] {
        guard !installationIDs.isEmpty else { return [:] }
        let ids = Set(installationIDs).sorted()
        let start = tokens == .pushToStart
        let marks = Self.placeholders(ids.count)
        let decisions = try await write { db -> [String: LiveActivitySendDecision] in
            var startTokens: [String: Data] = [:]
            // A notification's revision sent to a target makes each recipient a member.
            var joining = tokens.joinsAll ? ids : []
            if start {
                for row in try Row.fetchAll(
                    db,
                    sql: """
                        SELECT installation_id, token_sealed FROM push_to_start_tokens
                        WHERE attributes_type = ? AND installation_id IN (\(marks))
                        """, arguments: StatementArguments([attributesType] + ids))
                {
                    startTokens[row["installation_id"]] = row["token_sealed"]
                }
                // The start makes each recipient it goes to a member: an APNs one through its
                // push-to-start token, another through its installation's token.
                joining = ids.filter { startTokens[$0] != nil || tokens.ownToken(services[$0] ?? .apns) }
            }
            for id in joining {
                try db.cachedExecute(
                    sql: """
                        INSERT INTO live_activity_members (app_id, activity_id, installation_id, updated_at)
                        VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING
                        """, arguments: [appID, activityID, id, now.timeIntervalSince1970])
            }
            var decisions: [String: LiveActivitySendDecision] = [:]
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT installation_id, token_sealed, sent_revision, sending_until FROM live_activity_members
                    WHERE app_id = ? AND activity_id = ? AND installation_id IN (\(marks))
                    """, arguments: StatementArguments([appID, activityID] + ids))
            {
                let id: String = row["installation_id"]
                let sealed = start ? startTokens[id] : row["token_sealed"] as Data?
                decisions[id] = .member(
                    revision: revision, sentRevision: row["sent_revision"],
                    sendingUntil: (row["sending_until"] as Double?).map(Date.init(timeIntervalSince1970:)), now: now,
                    ownToken: tokens.ownToken(services[id] ?? .apns), sealed: sealed.map(Array.init))
            }
            for (id, decision) in decisions where decision.sends {
                try db.cachedExecute(
                    sql: """
                        UPDATE live_activity_members SET sent_revision = ?, sending_until = ?
                        WHERE app_id = ? AND activity_id = ? AND installation_id = ?
                        """, arguments: [revision, until.timeIntervalSince1970, appID, activityID, id])
            }
            return decisions
        }
        return try LiveActivitySendDecision.claims(decisions, for: installationIDs, cipher: cipher)
    }

    public func releaseLiveActivitySends(
        appID: String, activityID: String, revision: Int, installationIDs: [String]
    ) async throws {
        guard !installationIDs.isEmpty else { return }
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE live_activity_members SET sending_until = NULL
                    WHERE app_id = ? AND activity_id = ? AND sent_revision = ?
                        AND installation_id IN (\(Self.placeholders(installationIDs.count)))
                    """, arguments: [appID, activityID, revision] + StatementArguments(installationIDs))
        }
    }

    public func dropLiveActivityTokens(_ drops: [LiveActivityTokenDrop]) async throws {
        guard !drops.isEmpty else { return }
        try await write { db in
            for drop in drops {
                if let activity = drop.activityID {
                    try db.execute(
                        sql: "DELETE FROM live_activity_members WHERE installation_id = ? AND activity_id = ?",
                        arguments: [drop.installationID, activity])
                } else {
                    try db.execute(
                        sql: "DELETE FROM push_to_start_tokens WHERE installation_id = ? AND attributes_type = ?",
                        arguments: [drop.installationID, drop.attributesType])
                }
            }
        }
    }

    public func forgetDismissedLiveActivities(before cutoff: Date) async throws -> Int {
        try await write { db in
            // An updatable notification's counter has its dismissal from the start: it goes when the
            // notification's record does.
            func condition(_ table: String) -> String {
                "(\(table)ended_at IS NOT NULL OR \(table)id LIKE '\(NotificationRevision.counterPrefix)%') "
                    + "AND \(table)dismissal_at < ?"
            }
            let members =
                try Int.fetchOne(
                    db,
                    sql: """
                        SELECT count(*) FROM live_activity_members m JOIN live_activities a
                            ON a.app_id = m.app_id AND a.id = m.activity_id WHERE \(condition("a."))
                        """, arguments: [cutoff.timeIntervalSince1970]) ?? 0
            try db.execute(
                sql: "DELETE FROM live_activities WHERE \(condition(""))", arguments: [cutoff.timeIntervalSince1970])
            return members
        }
    }

    public func createLiveActivityChannel(_ channel: LiveActivityChannel) async throws -> Bool {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO live_activity_channels (app_id, id, apns_channel_id, storage_policy, environment, created_at)
                    VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                    """,
                arguments: [
                    channel.appID, channel.id, channel.apnsChannelID, channel.storagePolicy.rawValue,
                    channel.environment.rawValue, channel.createdAt.timeIntervalSince1970,
                ])
            return db.changesCount > 0
        }
    }

    public func liveActivityChannels(appID: String) async throws -> [LiveActivityChannel] {
        try await database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM live_activity_channels WHERE app_id = ? ORDER BY created_at, id",
                arguments: [appID]
            ).map(Self.decodeChannel)
        }
    }

    public func liveActivityChannel(appID: String, id: String) async throws -> LiveActivityChannel? {
        try await database.read { db in
            try Row.fetchOne(
                db, sql: "SELECT * FROM live_activity_channels WHERE app_id = ? AND id = ?", arguments: [appID, id]
            ).map(Self.decodeChannel)
        }
    }

    public func deleteLiveActivityChannel(appID: String, id: String) async throws -> Bool {
        try await write { db in
            try db.execute(
                sql: "DELETE FROM live_activity_channels WHERE app_id = ? AND id = ?", arguments: [appID, id])
            let deleted = db.changesCount > 0
            try db.execute(
                sql: "DELETE FROM live_activities WHERE app_id = ? AND id = ?",
                arguments: [appID, LiveActivityChannel.counterID(id)])
            return deleted
        }
    }

    private static func decodeChannel(_ row: Row) throws -> LiveActivityChannel {
        guard let policy = LiveActivityChannel.StoragePolicy(rawValue: row["storage_policy"]),
            let environment = PushEnvironment(rawValue: row["environment"])
        else { throw HeraldError.internal("Stored Live Activity channel is unreadable.") }
        return LiveActivityChannel(
            appID: row["app_id"], id: row["id"], apnsChannelID: row["apns_channel_id"], storagePolicy: policy,
            environment: environment, createdAt: Date(timeIntervalSince1970: row["created_at"]))
    }
}

extension SQLiteStore: LiveActivityStore {}

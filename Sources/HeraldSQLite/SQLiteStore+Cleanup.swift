import Foundation
import GRDB
import HeraldCore

extension SQLiteStore {
    public func cleanup(_ plan: CleanupPlan, now: Date) async throws -> CleanupReport {
        let nowValue = now.timeIntervalSince1970
        // Synced before it returns, like every write Herald reports done: the report `herald cleanup` prints, and
        // the provider-side state (SNS endpoints) the engine then removes, follow a clean-up on disk.
        return try await durableWrite { db in
            var report = CleanupReport()
            // The apps with an endpoint that wants to hear of removed installations, read once per run.
            let telling = try String.fetchAll(
                db,
                sql: """
                    SELECT DISTINCT app_id FROM webhook_endpoints
                    WHERE disabled_reason IS NULL AND events LIKE '%"installation.removed"%'
                    """)
            for (policy, scope) in plan.groups {
                let (rules, apps) = (CleanupRules(policy, now: now), Self.condition(scope))
                try self.cleanInstallations(
                    db, rules: rules, apps: apps, telling: telling, now: nowValue, report: &report)
                report.notifications += try Self.cleanNotifications(db, rules: rules, apps: apps)
                // The outbox's history: what was delivered or given up; what is still tried stays.
                try db.execute(
                    sql: """
                        DELETE FROM webhook_deliveries
                        WHERE state <> 'pending' AND coalesce(last_attempt_at, created_at) < ? AND \(apps.sql)
                        """,
                    arguments: [rules.webhookEventsBefore.timeIntervalSince1970] + apps.arguments)
            }
            // Buckets full again, pauses over and sign-outs of sessions expired since hold nothing.
            try db.cachedExecute(sql: "DELETE FROM rate_buckets WHERE full_at < ?", arguments: [nowValue])
            try db.cachedExecute(sql: "DELETE FROM provider_pauses WHERE until < ?", arguments: [nowValue])
            try db.cachedExecute(sql: "DELETE FROM console_revocations WHERE expires_at < ?", arguments: [nowValue])
            return report
        }
    }

    /// The apps of a scope as a condition on `app_id`.
    private static func condition(_ scope: CleanupPlan.Scope) -> (sql: String, arguments: StatementArguments) {
        switch scope {
        case .allBut(let ids) where ids.isEmpty: ("1", [])
        case .allBut(let ids): ("app_id NOT IN (\(databaseQuestionMarks(count: ids.count)))", StatementArguments(ids))
        case .only(let ids): ("app_id IN (\(databaseQuestionMarks(count: ids.count)))", StatementArguments(ids))
        }
    }

    /// A deletion rule as SQL over `installations`.
    private static func condition(_ rule: CleanupRules.Deletion) -> (sql: String, arguments: StatementArguments) {
        switch rule {
        case .invalid(let before):
            ("valid = 0 AND invalidated_at IS NOT NULL AND invalidated_at < ?", [before.timeIntervalSince1970])
        case .failing(let failures, let before):
            (
                """
                failure_count >= ? AND coalesce(last_delivered_at, created_at) < ?
                    AND coalesce(last_failure_at, 0) > 0
                """, [failures, before.timeIntervalSince1970]
            )
        case .unseen(let before): ("max(coalesce(last_seen_at, 0), updated_at) < ?", [before.timeIntervalSince1970])
        case .undelivered(let before): ("coalesce(last_delivered_at, created_at) < ?", [before.timeIntervalSince1970])
        }
    }

    /// Applies a policy's installation rules to the apps of `apps`.
    private func cleanInstallations(
        _ db: Database, rules: CleanupRules, apps: (sql: String, arguments: StatementArguments), telling: [String],
        now: Double, report: inout CleanupReport
    ) throws {
        for rule in rules.deletions {
            let (sql, arguments) = Self.condition(rule)
            let condition = "(\(sql)) AND \(apps.sql)"
            let values = arguments + apps.arguments
            // Installations with provider-side state go back to the engine, which removes it.
            report.removedWithEndpoints += try Row.fetchAll(
                db, sql: "SELECT * FROM installations WHERE sns_endpoint_arn IS NOT NULL AND \(condition)",
                arguments: values
            ).map(self.decode)
            try tellRemoved(
                db, apps: telling, condition: condition, values, reason: CleanupRules.reason(rule), now: now)
            try db.execute(sql: "DELETE FROM installations WHERE \(condition)", arguments: values)
            report[keyPath: rule.count] += db.changesCount
        }
        if let staleBefore = rules.staleBefore {
            // Invalid, not deleted: registering again makes them valid; the invalid rule deletes them
            // later if the app never does.
            try db.execute(
                sql: """
                    UPDATE installations SET valid = 0, invalidated_at = ?, last_failure_reason = 'stale'
                    WHERE valid = 1 AND max(coalesce(last_seen_at, 0), updated_at) < ? AND \(apps.sql)
                    """,
                arguments: [now, staleBefore.timeIntervalSince1970] + apps.arguments)
            report.staleInstallations += db.changesCount
        }
    }

    /// Writes an `installation.removed` event for each installation `condition` is about to delete, of the
    /// `apps` with an enabled endpoint subscribed to it (none: nothing is read).
    private func tellRemoved(
        _ db: Database, apps: [String], condition: String, _ values: StatementArguments, reason: String, now: Double
    ) throws {
        for appID in apps {
            try tell(appID: appID, .installationRemoved, db) {
                let (facts, _) = try webhookInstallations(
                    nil, where: "app_id = ? AND \(condition)", arguments: [appID] + values, in: db)
                return facts.values.sorted { $0.id < $1.id }.map {
                    WebhookEvent.removed(
                        appID: appID, installation: $0, reason: reason, at: Date(timeIntervalSince1970: now))
                }
            }
        }
    }

    /// Deletes the final notifications of the apps of `apps` older than the rules' retention.
    /// - Returns: How many went.
    private static func cleanNotifications(
        _ db: Database, rules: CleanupRules, apps: (sql: String, arguments: StatementArguments)
    ) throws -> Int {
        let statuses = CleanupRules.finalStatuses.map { "'\($0.rawValue)'" }.joined(separator: ", ")
        let old = "status IN (\(statuses)) AND coalesce(completed_at, created_at) < ? AND \(apps.sql)"
        let arguments: StatementArguments = [rules.notificationsBefore.timeIntervalSince1970] + apps.arguments
        // An event outlives its notification: it keeps when a device first accepted it.
        try db.execute(
            sql: """
                UPDATE events SET push_sent_at = (
                    SELECT first_sent_at FROM notifications WHERE notifications.id = events.notification_id)
                WHERE push_sent_at IS NULL AND notification_id IN (SELECT id FROM notifications WHERE \(old))
                """,
            arguments: arguments)
        try db.execute(sql: "DELETE FROM notifications WHERE \(old)", arguments: arguments)
        return db.changesCount
    }
}

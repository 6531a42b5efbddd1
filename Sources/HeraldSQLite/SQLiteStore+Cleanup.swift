import Foundation
import GRDB
import HeraldCore

extension SQLiteStore {
    public func cleanup(_ plan: CleanupPlan, now: Date) async throws -> CleanupReport {
        let nowValue = now.timeIntervalSince1970
        return try await database.write { db in
            var report = CleanupReport()
            for (policy, scope) in plan.groups {
                let apps = Self.condition(scope)
                try self.cleanInstallations(db, policy: policy, apps: apps, now: nowValue, report: &report)
                report.notifications += try Self.cleanNotifications(db, policy: policy, apps: apps, now: nowValue)
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

    /// Applies a policy's installation rules to the apps of `apps`.
    private func cleanInstallations(
        _ db: Database, policy: CleanupPolicy, apps: (sql: String, arguments: StatementArguments), now: Double,
        report: inout CleanupReport
    ) throws {
        var rules: [(condition: String, arguments: StatementArguments, count: WritableKeyPath<CleanupReport, Int>)] = [
            (
                "valid = 0 AND invalidated_at IS NOT NULL AND invalidated_at < ?",
                [now - policy.invalidAfter.timeInterval], \.invalidInstallations
            )
        ]
        if let failingAfter = policy.failingAfter {
            rules.append(
                (
                    """
                    failure_count >= ? AND coalesce(last_delivered_at, created_at) < ?
                        AND coalesce(last_failure_at, 0) > 0
                    """,
                    [policy.failureThreshold, now - failingAfter.timeInterval], \.failingInstallations
                ))
        }
        if let unseenAfter = policy.unseenAfter {
            rules.append(
                (
                    "max(coalesce(last_seen_at, 0), updated_at) < ?", [now - unseenAfter.timeInterval],
                    \.unseenInstallations
                ))
        }
        if let undeliveredAfter = policy.undeliveredAfter {
            rules.append(
                (
                    "coalesce(last_delivered_at, created_at) < ?", [now - undeliveredAfter.timeInterval],
                    \.undeliveredInstallations
                ))
        }
        for rule in rules {
            let condition = "(\(rule.condition)) AND \(apps.sql)"
            let arguments = rule.arguments + apps.arguments
            // Installations with provider-side state go back to the engine, which removes it.
            report.removedWithEndpoints += try Row.fetchAll(
                db, sql: "SELECT * FROM installations WHERE sns_endpoint_arn IS NOT NULL AND \(condition)",
                arguments: arguments
            ).map(self.decode)
            try db.execute(sql: "DELETE FROM installations WHERE \(condition)", arguments: arguments)
            report[keyPath: rule.count] += db.changesCount
        }
        if let staleAfter = policy.staleAfter {
            // Invalid, not deleted: registering again makes them valid; the invalid rule deletes them
            // later if the app never does. Last, so what a rule above deleted is not counted here too.
            try db.execute(
                sql: """
                    UPDATE installations SET valid = 0, invalidated_at = ?, last_failure_reason = 'stale'
                    WHERE valid = 1 AND max(coalesce(last_seen_at, 0), updated_at) < ? AND \(apps.sql)
                    """,
                arguments: [now, now - staleAfter.timeInterval] + apps.arguments)
            report.staleInstallations += db.changesCount
        }
    }

    /// Deletes the final notifications of the apps of `apps` older than the policy's retention.
    /// - Returns: How many went.
    private static func cleanNotifications(
        _ db: Database, policy: CleanupPolicy, apps: (sql: String, arguments: StatementArguments), now: Double
    ) throws -> Int {
        let old = """
            status IN ('done', 'canceled', 'expired', 'failed') AND coalesce(completed_at, created_at) < ?
                AND \(apps.sql)
            """
        let arguments: StatementArguments = [now - policy.notificationRetention.timeInterval] + apps.arguments
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

import Foundation
import HeraldCore
import PostgresNIO

extension PostgresStore {
    public func cleanup(_ plan: CleanupPlan, now: Date) async throws -> CleanupReport {
        let nowValue = now.timeIntervalSince1970
        // Maintenance: a large backlog's deletes may rightly take longer than one call's deadline.
        return try await transaction(unbounded: true) { connection in
            var report = CleanupReport()
            // The endpoints told of the installations deleted: one statement, however many rules and apps.
            let removals = try await Self.webhookSubscriptions(wanting: .installationRemoved, connection)
            for (policy, scope) in plan.groups {
                let rules = CleanupRules(policy, now: now)
                try await self.cleanInstallations(
                    connection, rules: rules, scope: scope, now: now, removals: removals, report: &report)
                report.notifications += try await Self.cleanNotifications(connection, rules: rules, scope: scope)
                // The outbox's history: what was delivered or given up; what is still tried stays.
                let (old, values) = Self.scoped(
                    (
                        "state <> 'pending' AND coalesce(last_attempt_at, created_at) < $1",
                        [rules.webhookEventsBefore.timeIntervalSince1970]
                    ), scope
                )
                try await connection.run("DELETE FROM webhook_deliveries WHERE \(old)", values)
            }
            // Buckets full again, pauses over and sign-outs of sessions expired since hold nothing.
            try await connection.run("DELETE FROM rate_buckets WHERE full_at < $1", [nowValue])
            try await connection.run("DELETE FROM provider_pauses WHERE until < $1", [nowValue])
            try await connection.run("DELETE FROM console_revocations WHERE expires_at < $1", [nowValue])
            return report
        }
    }

    /// `condition` limited to the apps of `scope`, whose ids are bound after `values`.
    private static func scoped(
        _ rule: (condition: String, values: [SQLBind]), _ scope: CleanupPlan.Scope
    ) -> (condition: String, values: [SQLBind]) {
        let (condition, values) = rule
        let next = "$\(values.count + 1)::text[]"
        switch scope {
        case .allBut(let ids) where ids.isEmpty: return (condition, values)
        case .allBut(let ids): return ("(\(condition)) AND app_id <> ALL(\(next))", values + [ids])
        case .only(let ids): return ("(\(condition)) AND app_id = ANY(\(next))", values + [ids])
        }
    }

    /// A deletion rule as SQL over `installations`, its values bound from `$1`.
    private static func condition(_ rule: CleanupRules.Deletion) -> (condition: String, values: [SQLBind]) {
        switch rule {
        case .invalid(let before):
            ("NOT valid AND invalidated_at IS NOT NULL AND invalidated_at < $1", [before.timeIntervalSince1970])
        case .failing(let failures, let before):
            (
                """
                failure_count >= $1 AND coalesce(\(lastDelivered()), created_at) < $2
                    AND coalesce(last_failure_at, 0) > 0
                """, [failures, before.timeIntervalSince1970]
            )
        case .unseen(let before):
            ("greatest(coalesce(last_seen_at, 0), updated_at) < $1", [before.timeIntervalSince1970])
        case .undelivered(let before):
            ("coalesce(\(lastDelivered()), created_at) < $1", [before.timeIntervalSince1970])
        }
    }

    /// Applies a policy's installation rules to the apps of `scope`, telling `removals` (the endpoints
    /// subscribed to `installation.removed`, by app) of the installations each deletes.
    private func cleanInstallations(
        _ connection: PostgresConnection, rules: CleanupRules, scope: CleanupPlan.Scope, now: Date,
        removals: [String: [WebhookSubscription]], report: inout CleanupReport
    ) async throws {
        for rule in rules.deletions {
            let (condition, values) = Self.scoped(Self.condition(rule), scope)
            // Installations with provider-side state go back to the engine, which removes it.
            report.removedWithEndpoints += try await self.fetchInstallations(
                connection, where: "sns_endpoint_arn IS NOT NULL AND \(condition)", values)
            try await self.tellRemoved(
                connection, where: condition, values, reason: CleanupRules.reason(rule), at: now, removals)
            report[keyPath: rule.count] += try await connection.changes(
                "DELETE FROM installations WHERE \(condition)", values)
        }
        if let staleBefore = rules.staleBefore {
            // Invalid, not deleted: registering again makes them valid; the invalid rule deletes them
            // later if the app never does.
            let stale = Self.scoped(
                (
                    "valid AND greatest(coalesce(last_seen_at, 0), updated_at) < $2",
                    [now.timeIntervalSince1970, staleBefore.timeIntervalSince1970]
                ),
                scope)
            report.staleInstallations += try await connection.changes(
                """
                UPDATE installations SET valid = FALSE, invalidated_at = $1, last_failure_reason = 'stale'
                WHERE \(stale.condition)
                """, stale.values)
        }
    }

    /// Writes an `installation.removed` event for each installation `condition` is about to delete, of
    /// the apps of `removals` (none: nothing is read), with what it was before it went.
    private func tellRemoved(
        _ connection: PostgresConnection, where condition: String, _ values: [SQLBind], reason: String, at now: Date,
        _ removals: [String: [WebhookSubscription]]
    ) async throws {
        guard !removals.isEmpty else { return }
        var removed: [(appID: String, installation: WebhookEvent.Installation)] = []
        for row in try await connection.rows(
            """
            SELECT \(Self.webhookInstallationColumns) FROM installations
            WHERE (\(condition)) AND app_id = ANY($\(values.count + 1)::text[])
            """, values + [removals.keys.sorted()])
        {
            if let installation = try self.webhookInstallation(row) {
                removed.append((try row.get("app_id"), installation))
            }
        }
        // By app and id, as SQLite writes them.
        let events = removed.sorted { ($0.appID, $0.installation.id) < ($1.appID, $1.installation.id) }.map {
            WebhookEvent.removed(appID: $0.appID, installation: $0.installation, reason: reason, at: now)
        }
        // In statements of a bounded size: a large clean-up may remove many.
        for start in stride(from: 0, to: events.count, by: Self.removalsPerStatement) {
            let chunk = Array(events[start..<min(start + Self.removalsPerStatement, events.count)])
            try await Self.insertWebhookEvents(chunk, connection) { removals[$0] ?? [] }
        }
    }

    /// How many `installation.removed` events one statement writes at most.
    static let removalsPerStatement = 1000

    /// Deletes the final notifications of the apps of `scope` older than the rules' retention.
    /// - Returns: How many went.
    private static func cleanNotifications(
        _ connection: PostgresConnection, rules: CleanupRules, scope: CleanupPlan.Scope
    ) async throws -> Int {
        let statuses = CleanupRules.finalStatuses.map { "'\($0.rawValue)'" }.joined(separator: ", ")
        let (old, values) = scoped(
            (
                "status IN (\(statuses)) AND coalesce(completed_at, created_at) < $1",
                [rules.notificationsBefore.timeIntervalSince1970]
            ), scope)
        // An event outlives its notification: it keeps when a device first accepted it.
        try await connection.run(
            """
            UPDATE events SET push_sent_at = (
                SELECT first_sent_at FROM notifications WHERE notifications.id = events.notification_id)
            WHERE push_sent_at IS NULL AND notification_id IN (SELECT id FROM notifications WHERE \(old))
            """, values)
        return try await connection.changes("DELETE FROM notifications WHERE \(old)", values)
    }
}

import Foundation
import HeraldCore
import PostgresNIO

extension PostgresStore: LedgerInsights {
    public func deliveries(installationID: String, page: PageRequest) async throws -> [LedgerEntry] {
        var sql = "SELECT * FROM deliveries WHERE installation_id = $1"
        var values: [SQLBind] = [installationID]
        if let after = page.after.flatMap(Int64.init) {
            values.append(after)
            sql += " AND sequence < $\(values.count)"
        }
        values.append(page.limit)
        sql += " ORDER BY sequence DESC LIMIT $\(values.count)"
        let (query, binds) = (sql, values)
        return try await read { connection in try await connection.rows(query, binds) }.map(Self.ledgerEntry)
    }

    public func outcomeSeries(appID: String, since: Date) async throws -> [OutcomeBucket] {
        // notifications_app (app_id, id) bounds the scan: ids sort by creation time.
        let sql = """
            SELECT floor(created_at / 3600)::bigint AS hour, COUNT(*) AS notifications,
                SUM(targeted)::bigint AS targeted, SUM(sent)::bigint AS sent, SUM(failed)::bigint AS failed,
                SUM(invalid)::bigint AS invalid, SUM(skipped_preferences)::bigint AS skipped_preferences,
                SUM(skipped_expired)::bigint AS skipped_expired, SUM(rate_limited)::bigint AS rate_limited
            FROM notifications WHERE app_id = $1 AND id >= $2 AND created_at >= $3
            GROUP BY hour ORDER BY hour
            """
        let binds: [SQLBind] = [appID, Identifier.lowerBound(since), since.timeIntervalSince1970]
        return try await read { connection in try await connection.rows(sql, binds) }.map { row in
            OutcomeBucket(
                hour: Date(timeIntervalSince1970: Double(try row.get("hour", as: Int64.self)) * 3600),
                notifications: try row.get("notifications"),
                counts: NotificationCounts(
                    targeted: try row.get("targeted"), sent: try row.get("sent"), failed: try row.get("failed"),
                    invalid: try row.get("invalid"), skippedPreferences: try row.get("skipped_preferences"),
                    skippedExpired: try row.get("skipped_expired"), rateLimited: try row.get("rate_limited")))
        }
    }

    public func providerFailures(
        appID: String, since: Date, createdSince: Date, limit: Int
    ) async throws -> [ProviderFailureSummary] {
        // The app's recent notifications (notifications_app), then each one's failures
        // (deliveries_notification: notification_id, outcome).
        let sql = """
            SELECT d.service, d.outcome, d.reason, COUNT(*) AS count, MAX(d.at) AS last_at
            FROM notifications n JOIN deliveries d ON d.notification_id = n.id
            WHERE n.app_id = $1 AND n.id >= $2 AND d.outcome IN ('failed', 'invalid') AND d.at >= $3
            GROUP BY d.service, d.outcome, d.reason ORDER BY count DESC, last_at DESC LIMIT $4
            """
        let binds: [SQLBind] = [appID, Identifier.lowerBound(createdSince), since.timeIntervalSince1970, limit]
        return try await read { connection in try await connection.rows(sql, binds) }.map { row in
            ProviderFailureSummary(
                service: PushService(rawValue: try row.get("service")) ?? .apns,
                outcome: DeliveryRecord.Outcome(rawValue: try row.get("outcome")) ?? .failed,
                reason: try row.get("reason"), count: try row.get("count"),
                lastAt: try row.date("last_at") ?? Date(timeIntervalSince1970: 0))
        }
    }
}

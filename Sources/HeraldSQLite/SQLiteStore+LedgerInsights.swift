import Foundation
import GRDB
import HeraldCore

extension SQLiteStore: LedgerInsights {
    public func deliveries(installationID: String, page: PageRequest) async throws -> [LedgerEntry] {
        var sql = "SELECT * FROM deliveries WHERE installation_id = ?"
        var arguments: [any DatabaseValueConvertible] = [installationID]
        if let after = page.after.flatMap(Int64.init) {
            sql += " AND sequence < ?"
            arguments.append(after)
        }
        sql += " ORDER BY sequence DESC LIMIT ?"
        arguments.append(page.limit)
        let (query, values) = (sql, StatementArguments(arguments.map(\.databaseValue)))
        return try await database.read { db in
            try Row.fetchAll(db, sql: query, arguments: values).map(Self.ledgerEntry)
        }
    }

    public func outcomeSeries(appID: String, since: Date) async throws -> [OutcomeBucket] {
        // notifications_app (app_id, id) bounds the scan: ids sort by creation time.
        let sql = """
            SELECT CAST(created_at / 3600 AS INTEGER) AS hour, COUNT(*) AS notifications,
                SUM(targeted) AS targeted, SUM(sent) AS sent, SUM(failed) AS failed, SUM(invalid) AS invalid,
                SUM(skipped_preferences) AS skipped_preferences, SUM(skipped_expired) AS skipped_expired,
                SUM(rate_limited) AS rate_limited
            FROM notifications WHERE app_id = ? AND id >= ? AND created_at >= ?
            GROUP BY hour ORDER BY hour
            """
        let arguments: StatementArguments = [appID, Identifier.lowerBound(since), since.timeIntervalSince1970]
        return try await database.read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                OutcomeBucket(
                    hour: Date(timeIntervalSince1970: Double(row["hour"] as Int64) * 3600),
                    notifications: row["notifications"],
                    counts: NotificationCounts(
                        targeted: row["targeted"], sent: row["sent"], failed: row["failed"], invalid: row["invalid"],
                        skippedPreferences: row["skipped_preferences"], skippedExpired: row["skipped_expired"],
                        rateLimited: row["rate_limited"]))
            }
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
            WHERE n.app_id = ? AND n.id >= ? AND d.outcome IN ('failed', 'invalid') AND d.at >= ?
            GROUP BY d.service, d.outcome, d.reason ORDER BY count DESC, last_at DESC LIMIT ?
            """
        let arguments: StatementArguments = [
            appID, Identifier.lowerBound(createdSince), since.timeIntervalSince1970, limit,
        ]
        return try await database.read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                ProviderFailureSummary(
                    service: PushService(rawValue: row["service"]) ?? .apns,
                    outcome: DeliveryRecord.Outcome(rawValue: row["outcome"]) ?? .failed, reason: row["reason"],
                    count: row["count"], lastAt: Date(timeIntervalSince1970: row["last_at"]))
            }
        }
    }
}

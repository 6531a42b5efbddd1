import Foundation
import GRDB
import HeraldCore

// Replays and backlog limits of the webhook outbox (SQLiteStore+Webhooks has the rest).
extension SQLiteStore {
    public func replayWebhookDeliveries(appID: String, endpointID: String, since: Date, now: Date) async throws -> Int {
        try await durableWrite { db in
            try db.execute(
                sql: """
                    UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_at = ?, locked_by = NULL,
                        locked_until = NULL
                    WHERE app_id = ? AND endpoint_id = ? AND created_at >= ? AND state <> 'pending'
                    """,
                arguments: [now.timeIntervalSince1970, appID, endpointID, since.timeIntervalSince1970])
            return db.changesCount
        }
    }

    public func trimWebhookBacklogs(limit: Int, now: Date) async throws -> [WebhookBacklogTrim] {
        try await write { db in
            let over = try Row.fetchAll(
                db,
                sql: """
                    SELECT app_id, endpoint_id, count(*) AS waiting FROM webhook_deliveries WHERE state = 'pending'
                    GROUP BY app_id, endpoint_id HAVING count(*) > ?
                    """,
                arguments: [limit])
            return try over.map { row in
                let (appID, endpointID, waiting): (String, String, Int) = (
                    row["app_id"], row["endpoint_id"], row["waiting"]
                )
                // The oldest go: the receiver most likely wants what is recent.
                try db.execute(
                    sql: """
                        UPDATE webhook_deliveries SET state = 'dropped', next_attempt_at = NULL, last_attempt_at = ?,
                            last_error = 'dropped: the endpoint''s backlog was over its limit'
                        WHERE id IN (
                            SELECT id FROM webhook_deliveries WHERE app_id = ? AND endpoint_id = ? AND state = 'pending'
                            ORDER BY id LIMIT ?)
                        """,
                    arguments: [now.timeIntervalSince1970, appID, endpointID, waiting - limit])
                return WebhookBacklogTrim(appID: appID, endpointID: endpointID, dropped: db.changesCount)
            }
        }
    }
}

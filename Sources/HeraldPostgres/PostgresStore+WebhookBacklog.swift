import Foundation
import HeraldCore
import PostgresNIO

// Replays and backlog limits of the webhook outbox (PostgresStore+Webhooks has the rest).
extension PostgresStore {
    public func replayWebhookDeliveries(appID: String, endpointID: String, since: Date, now: Date) async throws -> Int {
        try await read { connection in
            try await connection.changes(
                """
                UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_at = $1, locked_by = NULL,
                    locked_until = NULL
                WHERE app_id = $2 AND endpoint_id = $3 AND created_at >= $4 AND state <> 'pending'
                """, [now.timeIntervalSince1970, appID, endpointID, since.timeIntervalSince1970])
        }
    }

    public func trimWebhookBacklogs(limit: Int, now: Date) async throws -> [WebhookBacklogTrim] {
        // One statement: each endpoint over the limit loses its oldest waiting rows.
        try await read { connection in
            try await connection.rows(
                """
                WITH waiting AS (
                    SELECT id, app_id, endpoint_id,
                        count(*) OVER (PARTITION BY app_id, endpoint_id) AS total,
                        row_number() OVER (PARTITION BY app_id, endpoint_id ORDER BY id) AS n
                    FROM webhook_deliveries WHERE state = 'pending'),
                dropped AS (
                    UPDATE webhook_deliveries d SET state = 'dropped', next_attempt_at = NULL, last_attempt_at = $2,
                        last_error = 'dropped: the endpoint''s backlog was over its limit'
                    FROM waiting w WHERE d.id = w.id AND w.total > $1 AND w.n <= w.total - $1
                    RETURNING d.app_id, d.endpoint_id)
                SELECT app_id, endpoint_id, count(*)::bigint AS dropped FROM dropped GROUP BY app_id, endpoint_id
                """, [limit, now.timeIntervalSince1970]
            ).map { row in
                WebhookBacklogTrim(
                    appID: try row.get("app_id"), endpointID: try row.get("endpoint_id"),
                    dropped: Int(try row.get("dropped", as: Int64.self)))
            }
        }
    }
}

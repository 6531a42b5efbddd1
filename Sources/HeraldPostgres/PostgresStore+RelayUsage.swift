import Foundation
import HeraldCore
import PostgresNIO

// The Home Assistant relay's daily counters and retry claims, shared by every node: a claim locks the
// token's row. The methods of `RelayUsageStore`, the protocol its dialect (`HeraldHomeAssistant`) declares;
// this module does not import the dialect, so `HeraldServer` declares the conformance
// (docs/architecture.md, "Adding a dialect").
extension PostgresStore {
    public func claimRelaySend(
        appID: String, service: PushService, token: String, day: String, maximum: Int
    ) async throws -> (granted: Bool, usage: RelayUsage) {
        let key = relayKey(appID: appID, service: service, token: token)
        return try await transaction { connection in
            // Earlier days of the token are over: their rows go as its new day starts.
            try await connection.run(
                "DELETE FROM relay_usage WHERE app_id = $1 AND service = $2 AND token_index = $3 AND day < $4",
                key + [day])
            try await connection.run(
                """
                INSERT INTO relay_usage (app_id, service, token_index, day) VALUES ($1, $2, $3, $4)
                ON CONFLICT DO NOTHING
                """, key + [day])
            let before = try await Self.relayUsage(connection, key, day: day, lock: true)
            let granted = before.accepted < maximum
            let rows = try await connection.rows(
                """
                UPDATE relay_usage SET accepted = accepted + $5, refused = refused + $6
                WHERE app_id = $1 AND service = $2 AND token_index = $3 AND day = $4
                RETURNING accepted, refused, delivered, failed
                """, key + [day, granted ? 1 : 0, granted ? 0 : 1])
            return (granted, try rows.first.map(Self.usage) ?? RelayUsage())
        }
    }

    public func countRelayError(
        appID: String, service: PushService, token: String, day: String, releasingClaim: Bool
    ) async throws -> RelayUsage {
        let key = relayKey(appID: appID, service: service, token: token)
        let rows = try await read { connection in
            try await connection.rows(
                """
                INSERT INTO relay_usage (app_id, service, token_index, day, accepted, refused)
                VALUES ($1, $2, $3, $4, 0, 1)
                ON CONFLICT (app_id, service, token_index, day) DO UPDATE SET
                    accepted = greatest(0, relay_usage.accepted - $5), refused = relay_usage.refused + 1
                RETURNING accepted, refused, delivered, failed
                """, key + [day, releasingClaim ? 1 : 0])
        }
        return try rows.first.map(Self.usage) ?? RelayUsage()
    }

    public func countRelayOutcome(
        appID: String, service: PushService, token: String, day: String, delivered: Int, failed: Int
    ) async throws {
        guard delivered > 0 || failed > 0 else { return }
        let key = relayKey(appID: appID, service: service, token: token)
        try await read { connection in
            _ = try await connection.run(
                """
                UPDATE relay_usage SET delivered = delivered + $5, failed = failed + $6
                WHERE app_id = $1 AND service = $2 AND token_index = $3 AND day = $4
                """, key + [day, delivered, failed])
        }
    }

    public func relayUsage(
        appID: String, service: PushService, token: String, day: String
    ) async throws -> RelayUsage {
        let key = relayKey(appID: appID, service: service, token: token)
        return try await read { connection in try await Self.relayUsage(connection, key, day: day, lock: false) }
    }

    private static func relayUsage(
        _ connection: PostgresConnection, _ key: [SQLBind], day: String, lock: Bool
    ) async throws -> RelayUsage {
        let rows = try await connection.rows(
            """
            SELECT accepted, refused, delivered, failed FROM relay_usage
            WHERE app_id = $1 AND service = $2 AND token_index = $3 AND day = $4\(lock ? " FOR UPDATE" : "")
            """, key + [day])
        return try rows.first.map(usage) ?? RelayUsage()
    }

    private static func usage(_ row: PostgresRandomAccessRow) throws -> RelayUsage {
        RelayUsage(
            accepted: try row.get("accepted"), refused: try row.get("refused"), delivered: try row.get("delivered"),
            failed: try row.get("failed"))
    }

    public func claimRelayRetry(
        appID: String, service: PushService, token: String, invalidatedAt: Date?, interval: TimeInterval, now: Date
    ) async throws -> Bool {
        let key = relayKey(appID: appID, service: service, token: token)
        let next = now.addingTimeInterval(interval).timeIntervalSince1970
        let firstDue = (invalidatedAt ?? .distantPast).addingTimeInterval(interval) <= now
        return try await read { connection in
            // Each statement on its own is atomic: of several nodes, one inserts the first claim or
            // moves a due one.
            if firstDue {
                let inserted = try await connection.changes(
                    """
                    INSERT INTO relay_retries (app_id, service, token_index, next_at) VALUES ($1, $2, $3, $4)
                    ON CONFLICT DO NOTHING
                    """, key + [next])
                if inserted > 0 { return true }
            }
            let moved = try await connection.changes(
                """
                UPDATE relay_retries SET next_at = $4
                WHERE app_id = $1 AND service = $2 AND token_index = $3 AND next_at <= $5
                """, key + [next, now.timeIntervalSince1970])
            return moved > 0
        }
    }

    public func resetRelayRetries(appID: String) async throws {
        try await transaction { connection in
            try await connection.run("DELETE FROM relay_retries WHERE app_id = $1", [appID])
            try await connection.run(
                """
                INSERT INTO relay_retries (app_id, service, token_index, next_at)
                SELECT app_id, service, token_index, 0 FROM installations WHERE app_id = $1 AND NOT valid
                """, [appID])
        }
    }

    public func markRelayAdopted(appID: String, installationID: String) async throws {
        try await read { connection in
            _ = try await connection.run(
                "INSERT INTO relay_adoptions (installation_id, app_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                [installationID, appID])
        }
    }

    public func moveRelayAdopted(
        appID: String, from: PushEnvironment, to: PushEnvironment, now: Date
    ) async throws -> Int {
        try await read { connection in
            try await connection.changes(
                """
                UPDATE installations SET environment = $1, updated_at = $2
                WHERE app_id = $3 AND service = 'apns' AND environment = $4
                    AND id IN (SELECT installation_id FROM relay_adoptions WHERE app_id = $3)
                """, [to.rawValue, now.timeIntervalSince1970, appID, from.rawValue])
        }
    }

    private func relayKey(appID: String, service: PushService, token: String) -> [SQLBind] {
        [appID, service.rawValue, Data(cipher.index(token, service: service))]
    }
}

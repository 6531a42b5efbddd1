import Foundation
import HeraldCore
import PostgresNIO

// The Home Assistant relay's daily counters, shared by every node: a claim locks the token's row.
extension PostgresStore: RelayUsageStore {
    public func claimRelaySend(
        appID: String, service: PushService, token: String, day: String, maximum: Int
    ) async throws -> (granted: Bool, usage: RelayUsage) {
        let key: [SQLBind] = [appID, service.rawValue, Data(cipher.index(token, service: service))]
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
            let granted = before.successful < maximum
            let rows = try await connection.rows(
                """
                UPDATE relay_usage SET successful = successful + $5, errors = errors + $6
                WHERE app_id = $1 AND service = $2 AND token_index = $3 AND day = $4
                RETURNING successful, errors
                """, key + [day, granted ? 1 : 0, granted ? 0 : 1])
            return (granted, try rows.first.map(Self.usage) ?? RelayUsage())
        }
    }

    public func countRelayError(
        appID: String, service: PushService, token: String, day: String, releasingClaim: Bool
    ) async throws -> RelayUsage {
        let key: [SQLBind] = [appID, service.rawValue, Data(cipher.index(token, service: service))]
        let rows = try await read { connection in
            try await connection.rows(
                """
                INSERT INTO relay_usage (app_id, service, token_index, day, successful, errors)
                VALUES ($1, $2, $3, $4, 0, 1)
                ON CONFLICT (app_id, service, token_index, day) DO UPDATE SET
                    successful = greatest(0, relay_usage.successful - $5), errors = relay_usage.errors + 1
                RETURNING successful, errors
                """, key + [day, releasingClaim ? 1 : 0])
        }
        return try rows.first.map(Self.usage) ?? RelayUsage()
    }

    public func relayUsage(
        appID: String, service: PushService, token: String, day: String
    ) async throws -> RelayUsage {
        let key: [SQLBind] = [appID, service.rawValue, Data(cipher.index(token, service: service))]
        return try await read { connection in try await Self.relayUsage(connection, key, day: day, lock: false) }
    }

    private static func relayUsage(
        _ connection: PostgresConnection, _ key: [SQLBind], day: String, lock: Bool
    ) async throws -> RelayUsage {
        let rows = try await connection.rows(
            """
            SELECT successful, errors FROM relay_usage
            WHERE app_id = $1 AND service = $2 AND token_index = $3 AND day = $4\(lock ? " FOR UPDATE" : "")
            """, key + [day])
        return try rows.first.map(usage) ?? RelayUsage()
    }

    private static func usage(_ row: PostgresRandomAccessRow) throws -> RelayUsage {
        RelayUsage(successful: try row.get("successful"), errors: try row.get("errors"))
    }
}

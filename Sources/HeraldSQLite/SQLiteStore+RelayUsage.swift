import Foundation
import GRDB
import HeraldCore

extension SQLiteStore: RelayUsageStore {
    public func claimRelaySend(
        appID: String, service: PushService, token: String, day: String, maximum: Int
    ) async throws -> (granted: Bool, usage: RelayUsage) {
        let key = RelayKey(appID: appID, service: service, index: cipher.index(token, service: service))
        return try await durableWrite { db in
            // Earlier days of the token are over: their rows go as its new day starts.
            try db.execute(
                sql: "DELETE FROM relay_usage WHERE app_id = ? AND service = ? AND token_index = ? AND day < ?",
                arguments: key.arguments + [day])
            let before = try Self.relayUsage(db, key, day: day)
            let granted = before.successful < maximum
            try db.execute(
                sql: """
                    INSERT INTO relay_usage (app_id, service, token_index, day, successful, errors)
                    VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (app_id, service, token_index, day) DO UPDATE SET
                        successful = successful + excluded.successful, errors = errors + excluded.errors
                    """,
                arguments: key.arguments + [day, granted ? 1 : 0, granted ? 0 : 1])
            return (granted, try Self.relayUsage(db, key, day: day))
        }
    }

    public func countRelayError(
        appID: String, service: PushService, token: String, day: String, releasingClaim: Bool
    ) async throws -> RelayUsage {
        let key = RelayKey(appID: appID, service: service, index: cipher.index(token, service: service))
        return try await durableWrite { db in
            try db.execute(
                sql: """
                    INSERT INTO relay_usage (app_id, service, token_index, day, successful, errors)
                    VALUES (?, ?, ?, ?, 0, 1)
                    ON CONFLICT (app_id, service, token_index, day) DO UPDATE SET
                        successful = max(0, successful - ?), errors = errors + 1
                    """,
                arguments: key.arguments + [day, releasingClaim ? 1 : 0])
            return try Self.relayUsage(db, key, day: day)
        }
    }

    public func relayUsage(
        appID: String, service: PushService, token: String, day: String
    ) async throws -> RelayUsage {
        let key = RelayKey(appID: appID, service: service, index: cipher.index(token, service: service))
        return try await database.read { db in try Self.relayUsage(db, key, day: day) }
    }

    private static func relayUsage(_ db: Database, _ key: RelayKey, day: String) throws -> RelayUsage {
        let row = try Row.fetchOne(
            db,
            sql: """
                SELECT successful, errors FROM relay_usage
                WHERE app_id = ? AND service = ? AND token_index = ? AND day = ?
                """,
            arguments: key.arguments + [day])
        guard let row else { return RelayUsage() }
        return RelayUsage(successful: row["successful"], errors: row["errors"])
    }
}

/// A token's counter key: the app, the service and the token's keyed hash.
private struct RelayKey {
    var appID: String
    var service: PushService
    var index: [UInt8]

    var arguments: StatementArguments { [appID, service.rawValue, Data(index)] }
}

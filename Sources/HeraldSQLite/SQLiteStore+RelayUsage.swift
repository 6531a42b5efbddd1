import Foundation
import GRDB
import HeraldCore

// The methods of `RelayUsageStore`, the protocol its dialect (`HeraldHomeAssistant`) declares; this module
// does not import the dialect, so `HeraldServer` declares the conformance (docs/architecture.md, "Adding a
// dialect").
extension SQLiteStore {
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
            let granted = before.accepted < maximum
            try db.execute(
                sql: """
                    INSERT INTO relay_usage (app_id, service, token_index, day, accepted, refused)
                    VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (app_id, service, token_index, day) DO UPDATE SET
                        accepted = accepted + excluded.accepted, refused = refused + excluded.refused
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
                    INSERT INTO relay_usage (app_id, service, token_index, day, accepted, refused)
                    VALUES (?, ?, ?, ?, 0, 1)
                    ON CONFLICT (app_id, service, token_index, day) DO UPDATE SET
                        accepted = max(0, accepted - ?), refused = refused + 1
                    """,
                arguments: key.arguments + [day, releasingClaim ? 1 : 0])
            return try Self.relayUsage(db, key, day: day)
        }
    }

    public func countRelayOutcome(
        appID: String, service: PushService, token: String, day: String, delivered: Int, failed: Int
    ) async throws {
        guard delivered > 0 || failed > 0 else { return }
        let key = RelayKey(appID: appID, service: service, index: cipher.index(token, service: service))
        try await durableWrite { db in
            try db.execute(
                sql: """
                    UPDATE relay_usage SET delivered = delivered + ?, failed = failed + ?
                    WHERE app_id = ? AND service = ? AND token_index = ? AND day = ?
                    """,
                arguments: [delivered, failed] + key.arguments + [day])
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
                SELECT accepted, refused, delivered, failed FROM relay_usage
                WHERE app_id = ? AND service = ? AND token_index = ? AND day = ?
                """,
            arguments: key.arguments + [day])
        guard let row else { return RelayUsage() }
        return RelayUsage(
            accepted: row["accepted"], refused: row["refused"], delivered: row["delivered"], failed: row["failed"])
    }

    public func claimRelayRetry(
        appID: String, service: PushService, token: String, invalidatedAt: Date?, interval: TimeInterval, now: Date
    ) async throws -> Bool {
        let key = RelayKey(appID: appID, service: service, index: cipher.index(token, service: service))
        let next = now.addingTimeInterval(interval).timeIntervalSince1970
        let firstDue = (invalidatedAt ?? .distantPast).addingTimeInterval(interval) <= now
        return try await durableWrite { db in
            if firstDue {
                try db.execute(
                    sql: """
                        INSERT INTO relay_retries (app_id, service, token_index, next_at) VALUES (?, ?, ?, ?)
                        ON CONFLICT DO NOTHING
                        """,
                    arguments: key.arguments + [next])
                if db.changesCount > 0 { return true }
            }
            try db.execute(
                sql: """
                    UPDATE relay_retries SET next_at = ?
                    WHERE app_id = ? AND service = ? AND token_index = ? AND next_at <= ?
                    """,
                arguments: [next] + key.arguments + [now.timeIntervalSince1970])
            return db.changesCount > 0
        }
    }

    public func resetRelayRetries(appID: String) async throws {
        try await durableWrite { db in
            try db.execute(sql: "DELETE FROM relay_retries WHERE app_id = ?", arguments: [appID])
            try db.execute(
                sql: """
                    INSERT INTO relay_retries (app_id, service, token_index, next_at)
                    SELECT app_id, service, token_index, 0 FROM installations WHERE app_id = ? AND valid = 0
                    """,
                arguments: [appID])
        }
    }

    public func markRelayAdopted(appID: String, installationID: String) async throws {
        try await durableWrite { db in
            try db.execute(
                sql: "INSERT INTO relay_adoptions (installation_id, app_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                arguments: [installationID, appID])
        }
    }

    public func moveRelayAdopted(
        appID: String, from: PushEnvironment, to: PushEnvironment, now: Date
    ) async throws -> Int {
        try await durableWrite { db in
            try db.execute(
                sql: """
                    UPDATE installations SET environment = ?, updated_at = ?
                    WHERE app_id = ? AND service = 'apns' AND environment = ?
                        AND id IN (SELECT installation_id FROM relay_adoptions WHERE app_id = ?)
                    """,
                arguments: [to.rawValue, now.timeIntervalSince1970, appID, from.rawValue, appID])
            return db.changesCount
        }
    }
}

/// A token's counter key: the app, the service and the token's keyed hash.
private struct RelayKey {
    var appID: String
    var service: PushService
    var index: [UInt8]

    var arguments: StatementArguments { [appID, service.rawValue, Data(index)] }
}

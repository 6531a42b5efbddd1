import Foundation
import HeraldCore
import NIOCore
import PostgresNIO

extension PostgresStore {
    public func preferences(appID: String, installationID: String) async throws -> Preferences? {
        let rows = try await read { connection in
            try await connection.rows(
                """
                SELECT p.body FROM preferences p JOIN installations i ON i.id = p.installation_id
                WHERE i.app_id = $1 AND i.id = $2
                """, [appID, installationID])
        }
        return try rows.first.map { try Preferences(stored: try $0.get("body", as: String.self)) }
    }

    public func setPreferences(
        appID: String, installationID: String, preferences: Preferences, now: Date
    ) async throws -> Bool {
        try await storePreferences(
            appID: appID, installationID: installationID, preferences: preferences, now: now,
            onConflict: "DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at")
    }

    public func insertPreferences(
        appID: String, installationID: String, preferences: Preferences, now: Date
    ) async throws -> Bool {
        // One statement: a concurrent write (another node's) is never replaced.
        try await storePreferences(
            appID: appID, installationID: installationID, preferences: preferences, now: now,
            onConflict: "DO NOTHING")
    }

    /// Stores preferences for an installation of the app; false when it does not exist (or, with
    /// `DO NOTHING`, has some already).
    private func storePreferences(
        appID: String, installationID: String, preferences: Preferences, now: Date, onConflict: String
    ) async throws -> Bool {
        let body = preferences.storedText
        return try await read { connection in
            try await connection.changes(
                """
                INSERT INTO preferences (installation_id, body, updated_at)
                SELECT id, $1, $2 FROM installations WHERE app_id = $3 AND id = $4
                ON CONFLICT (installation_id) \(onConflict)
                """, [body, now.timeIntervalSince1970, appID, installationID]) > 0
        }
    }
}

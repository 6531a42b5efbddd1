import Foundation
import GRDB
import HeraldCore

extension SQLiteStore {
    public func preferences(appID: String, installationID: String) async throws -> Preferences? {
        try await database.read { db in
            try String.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT p.body FROM preferences p JOIN installations i ON i.id = p.installation_id
                        WHERE i.app_id = ? AND i.id = ?
                        """),
                arguments: [appID, installationID]
            ).map { try Preferences(stored: $0) }
        }
    }

    public func setPreferences(
        appID: String, installationID: String, preferences: Preferences, now: Date
    ) async throws -> Bool {
        let body = preferences.storedText
        return try await durableWrite { db in
            guard
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM installations WHERE app_id = ? AND id = ?"),
                    arguments: [appID, installationID]) == true
            else { return false }
            try db.cachedExecute(
                sql: """
                    INSERT INTO preferences (installation_id, body, updated_at) VALUES (?, ?, ?)
                    ON CONFLICT (installation_id) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at
                    """,
                arguments: [installationID, body, now.timeIntervalSince1970])
            return true
        }
    }

    /// Stores `preferences` unless the installation has some already (ArgusAI's defaults).
    public func insertPreferences(
        appID: String, installationID: String, preferences: Preferences, now: Date
    ) async throws -> Bool {
        let body = preferences.storedText
        return try await durableWrite { db in
            try db.execute(
                sql: """
                    INSERT INTO preferences (installation_id, body, updated_at)
                    SELECT id, ?, ? FROM installations WHERE app_id = ? AND id = ?
                    ON CONFLICT (installation_id) DO NOTHING
                    """,
                arguments: [body, now.timeIntervalSince1970, appID, installationID])
            return db.changesCount > 0
        }
    }
}

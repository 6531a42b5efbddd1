import Foundation
import GRDB
import HeraldCore

// Look-ups and writes the ArgusAI dialect needs: devices by the client's own id, and default
// preferences that never replace ones a user already chose.
extension SQLiteStore {
    public func installations(appID: String, deviceID: String) async throws -> [Installation] {
        try await database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM installations WHERE app_id = ? AND device_id = ? ORDER BY id",
                arguments: [appID, deviceID]
            ).map(self.decode)
        }
    }

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

import Foundation
import GRDB
import HeraldCore

extension SQLiteStore: AppKeyRotation {
    /// Replaces the app's generated keys (sealed like the first ones).
    public func replaceAppKeys(_ keys: AppKeys) async throws {
        let sealed = Data(try cipher.seal(keys.sealedPlaintext))
        try await durableWrite { db in
            try db.execute(
                sql: """
                    INSERT INTO app_keys (app_id, keys_sealed, created_at) VALUES (?, ?, ?)
                    ON CONFLICT (app_id) DO UPDATE SET keys_sealed = excluded.keys_sealed
                    """,
                arguments: [keys.appID, sealed, Date().timeIntervalSince1970])
        }
    }
}

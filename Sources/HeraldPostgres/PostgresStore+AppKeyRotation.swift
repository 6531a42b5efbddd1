import Foundation
import HeraldCore
import PostgresNIO

extension PostgresStore: AppKeyRotation {
    /// Replaces the app's generated keys (sealed like the first ones).
    public func replaceAppKeys(_ keys: AppKeys) async throws {
        let sealed = Data(try cipher.seal(keys.sealedPlaintext))
        _ = try await transaction { connection in
            try await connection.run(
                """
                INSERT INTO app_keys (app_id, keys_sealed, created_at) VALUES ($1, $2, $3)
                ON CONFLICT (app_id) DO UPDATE SET keys_sealed = excluded.keys_sealed
                """, [keys.appID, sealed, Date().timeIntervalSince1970])
        }
    }
}

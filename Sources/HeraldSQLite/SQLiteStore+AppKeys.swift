import Foundation
import GRDB
import HeraldCore

extension SQLiteStore {
    public func appKeys(appID: String) async throws -> AppKeys? {
        let sealed = try await database.read { db in
            try Data.fetchOne(db, sql: "SELECT keys_sealed FROM app_keys WHERE app_id = ?", arguments: [appID])
        }
        return try sealed.map { try decodeKeys(appID: appID, sealed: $0) }
    }

    public func insertAppKeys(_ keys: AppKeys) async throws -> AppKeys {
        let sealed = Data(try cipher.seal(keys.sealedPlaintext))
        let stored = try await durableWrite { db in
            try db.execute(
                sql: "INSERT INTO app_keys (app_id, keys_sealed, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                arguments: [keys.appID, sealed, Date().timeIntervalSince1970])
            return try Data.fetchOne(
                db, sql: "SELECT keys_sealed FROM app_keys WHERE app_id = ?", arguments: [keys.appID])
        }
        guard let stored else { throw HeraldError.internal("App keys were not stored.") }
        return try decodeKeys(appID: keys.appID, sealed: stored)
    }

    private func decodeKeys(appID: String, sealed: Data) throws -> AppKeys {
        try AppKeys(appID: appID, sealed: try cipher.open(Array(sealed)))
    }
}

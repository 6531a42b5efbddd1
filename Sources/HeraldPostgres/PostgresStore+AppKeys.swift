import Foundation
import HeraldCore
import NIOCore
import PostgresNIO

extension PostgresStore {
    public func appKeys(appID: String) async throws -> AppKeys? {
        let rows = try await read { connection in
            try await connection.rows("SELECT keys_sealed FROM app_keys WHERE app_id = $1", [appID])
        }
        return try rows.first.map { try decodeKeys(appID: appID, sealed: try $0.bytes("keys_sealed")) }
    }

    public func insertAppKeys(_ keys: AppKeys) async throws -> AppKeys {
        let sealed = Data(try cipher.seal(keys.sealedPlaintext))
        let rows = try await transaction { connection in
            try await connection.run(
                """
                INSERT INTO app_keys (app_id, keys_sealed, created_at) VALUES ($1, $2, $3)
                ON CONFLICT DO NOTHING
                """, [keys.appID, sealed, Date().timeIntervalSince1970])
            return try await connection.rows("SELECT keys_sealed FROM app_keys WHERE app_id = $1", [keys.appID])
        }
        guard let stored = rows.first else { throw HeraldError.internal("App keys were not stored.") }
        return try decodeKeys(appID: keys.appID, sealed: try stored.bytes("keys_sealed"))
    }

    private func decodeKeys(appID: String, sealed: [UInt8]) throws -> AppKeys {
        try AppKeys(appID: appID, sealed: try cipher.open(sealed))
    }
}

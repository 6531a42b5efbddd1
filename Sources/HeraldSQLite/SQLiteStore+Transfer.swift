import Foundation
import GRDB
import HeraldCore

// `herald export` / `herald import`: installations with their tokens still sealed.
extension SQLiteStore {
    public func exportInstallations(after: ExportCursor?, limit: Int) async throws -> [ExportedInstallation] {
        try await database.read { db in
            let rows =
                if let after {
                    try Row.fetchAll(
                        db,
                        sql: """
                            SELECT i.*, p.body AS preferences_body FROM installations i
                            LEFT JOIN preferences p ON p.installation_id = i.id
                            WHERE (i.app_id, i.id) > (?, ?) ORDER BY i.app_id, i.id LIMIT ?
                            """,
                        arguments: [after.appID, after.id, limit])
                } else {
                    try Row.fetchAll(
                        db,
                        sql: """
                            SELECT i.*, p.body AS preferences_body FROM installations i
                            LEFT JOIN preferences p ON p.installation_id = i.id
                            ORDER BY i.app_id, i.id LIMIT ?
                            """,
                        arguments: [limit])
                }
            var starts: [String: [String: [UInt8]]] = [:]
            let ids = rows.map { $0["id"] as String }
            if !ids.isEmpty {
                for row in try Row.fetchAll(
                    db,
                    sql: """
                        SELECT installation_id, attributes_type, token_sealed FROM push_to_start_tokens
                        WHERE installation_id IN (\(Self.placeholders(ids.count)))
                        """, arguments: StatementArguments(ids))
                {
                    starts[row["installation_id"], default: [:]][row["attributes_type"]] = Array(
                        row["token_sealed"] as Data)
                }
            }
            return try rows.map { row in
                var installation = try self.decode(row)
                installation.token = .device("")
                let sealed = SealedToken(
                    index: Array(row["token_index"] as Data), sealed: Array(row["token_sealed"] as Data))
                let preferences = try (row["preferences_body"] as String?).map { try Preferences(stored: $0) }
                return ExportedInstallation(
                    installation: installation, sealedToken: sealed, preferences: preferences,
                    pushToStartTokens: starts[installation.id] ?? [:])
            }
        }
    }

    public func importInstallations(_ records: [ExportedInstallation]) async throws -> Int {
        // Each sealed token must open under this store's key: a file from another deployment is
        // refused before anything is written.
        var suffixes: [String: [String: String]] = [:]
        for record in records {
            _ = try cipher.openToken(record.sealedToken.sealed, service: record.installation.service)
            for (type, sealed) in record.pushToStartTokens {
                suffixes[record.installation.id, default: [:]][type] = try cipher.openToken(sealed, service: .apns)
                    .suffix
            }
        }
        let now = Date().timeIntervalSince1970
        let opened = suffixes
        return try await durableWrite { db in
            for record in records {
                let installation = record.installation
                // The imported record wins over whatever holds its id, token or device identity.
                // Cached statements: an import restores tens of thousands of records.
                try db.cachedStatement(
                    sql: """
                        DELETE FROM installations WHERE id = ?
                            OR (app_id = ? AND service = ? AND token_index = ?)
                            OR (app_id = ? AND device_id = ? AND service = ?)
                        """
                ).execute(
                    arguments: [
                        installation.id, installation.appID, installation.service.rawValue,
                        Data(record.sealedToken.index), installation.appID, installation.deviceID,
                        installation.service.rawValue,
                    ])
                try self.write(
                    db, installation, tokenIndex: record.sealedToken.index, sealedToken: record.sealedToken.sealed,
                    insert: true)
                if let preferences = record.preferences {
                    try db.cachedStatement(
                        sql: "INSERT INTO preferences (installation_id, body, updated_at) VALUES (?, ?, ?)"
                    ).execute(arguments: [installation.id, preferences.storedText, now])
                }
                for (type, sealed) in record.pushToStartTokens {
                    try db.cachedStatement(
                        sql: """
                            INSERT OR REPLACE INTO push_to_start_tokens
                                (installation_id, attributes_type, token_sealed, token_suffix, updated_at)
                            VALUES (?, ?, ?, ?, ?)
                            """
                    ).execute(
                        arguments: [
                            installation.id, type, Data(sealed), opened[installation.id]?[type] ?? "", now,
                        ])
                }
            }
            return records.count
        }
    }
}

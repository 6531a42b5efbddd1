import Foundation
import HeraldCore
import NIOCore
import PostgresNIO

extension PostgresStore {
    public func exportInstallations(after: ExportCursor?, limit: Int) async throws -> [ExportedInstallation] {
        let rows = try await read(unbounded: true) { connection in
            if let after {
                try await connection.rows(
                    """
                    SELECT \(Self.installationColumns("i")), p.body AS preferences_body FROM installations i
                    LEFT JOIN preferences p ON p.installation_id = i.id
                    WHERE (i.app_id, i.id) > ($1, $2) ORDER BY i.app_id, i.id LIMIT $3
                    """, [after.appID, after.id, limit])
            } else {
                try await connection.rows(
                    """
                    SELECT \(Self.installationColumns("i")), p.body AS preferences_body FROM installations i
                    LEFT JOIN preferences p ON p.installation_id = i.id
                    ORDER BY i.app_id, i.id LIMIT $1
                    """, [limit])
            }
        }
        let ids = try rows.map { try $0.get("id", as: String.self) }
        var starts: [String: [String: [UInt8]]] = [:]
        if !ids.isEmpty {
            let tokens = try await read { connection in
                try await connection.rows(
                    """
                    SELECT installation_id, attributes_type, token_sealed FROM push_to_start_tokens
                    WHERE installation_id = ANY($1)
                    """, [ids])
            }
            for row in tokens {
                starts[try row.get("installation_id"), default: [:]][try row.get("attributes_type")] = try row.bytes(
                    "token_sealed")
            }
        }
        return try rows.map { row in
            var installation = try decodeInstallation(row, openToken: false)
            installation.token = .device("")
            let sealed = SealedToken(index: try row.bytes("token_index"), sealed: try row.bytes("token_sealed"))
            let preferences = try row.get("preferences_body", as: String?.self).map { try Preferences(stored: $0) }
            return ExportedInstallation(
                installation: installation, sealedToken: sealed, preferences: preferences,
                pushToStartTokens: starts[installation.id] ?? [:])
        }
    }

    public func importInstallations(_ records: [ExportedInstallation]) async throws -> Int {
        // Each sealed token must open under this store's key: a file from another deployment is
        // refused before anything is written.
        var starts: (ids: [String], types: [String], sealed: [ByteBuffer], suffixes: [String]) = ([], [], [], [])
        for record in records {
            _ = try cipher.openToken(record.sealedToken.sealed, service: record.installation.service)
        }
        let now = Date().timeIntervalSince1970
        // A later record wins over an earlier one with the same id, token or device identity, as
        // importing them one by one would.
        var kept: [String: Int] = [:]
        var byToken: [String: String] = [:]
        var byDevice: [String: String] = [:]
        for (position, record) in records.enumerated() {
            let installation = record.installation
            let tokenKey = "\(installation.appID)\u{0}\(installation.service.rawValue)\u{0}\(record.sealedToken.index)"
            let deviceKey = installation.deviceID.map {
                "\(installation.appID)\u{0}\(installation.service.rawValue)\u{0}\($0)"
            }
            for clash in [byToken[tokenKey], deviceKey.flatMap { byDevice[$0] }].compactMap({ $0 }) {
                kept[clash] = nil
            }
            kept[installation.id] = position
            byToken[tokenKey] = installation.id
            if let deviceKey { byDevice[deviceKey] = installation.id }
        }
        let survivors = records.enumerated().filter { kept[$0.element.installation.id] == $0.offset }.map(\.element)
        for record in survivors {
            for (type, sealed) in record.pushToStartTokens.sorted(by: { $0.key < $1.key }) {
                starts.ids.append(record.installation.id)
                starts.types.append(type)
                starts.sealed.append(ByteBuffer(bytes: sealed))
                starts.suffixes.append(try cipher.openToken(sealed, service: .apns).suffix)
            }
        }
        let withDevice = survivors.filter { $0.installation.deviceID != nil }
        let preferences = survivors.compactMap { record in record.preferences.map { (record.installation.id, $0) } }
        try await transaction(unbounded: true) { connection in
            // The imported records win over whatever holds their ids, tokens or device identities.
            try await connection.run(
                """
                DELETE FROM installations WHERE id = ANY($1)
                    OR (app_id, service, token_index) IN (SELECT * FROM unnest($2::text[], $3::text[], $4::bytea[]))
                    OR (app_id, service, device_id) IN (SELECT * FROM unnest($5::text[], $6::text[], $7::text[]))
                """,
                [
                    survivors.map(\.installation.id), survivors.map(\.installation.appID),
                    survivors.map(\.installation.service.rawValue),
                    survivors.map { ByteBuffer(bytes: $0.sealedToken.index) }, withDevice.map(\.installation.appID),
                    withDevice.map(\.installation.service.rawValue), withDevice.compactMap(\.installation.deviceID),
                ])
            try await self.insert(survivors.map { ($0.installation, $0.sealedToken) }, connection)
            if !preferences.isEmpty {
                try await connection.run(
                    """
                    INSERT INTO preferences (installation_id, body, updated_at)
                    SELECT id, body, $3 FROM unnest($1::text[], $2::text[]) AS p(id, body)
                    """, [preferences.map(\.0), preferences.map(\.1.storedText), now])
            }
            if !starts.ids.isEmpty {
                try await connection.run(
                    """
                    INSERT INTO push_to_start_tokens (installation_id, attributes_type, token_sealed, token_suffix, updated_at)
                    SELECT id, type, sealed, suffix, $5 FROM unnest($1::text[], $2::text[], $3::bytea[], $4::text[])
                        AS t(id, type, sealed, suffix)
                    ON CONFLICT (installation_id, attributes_type) DO UPDATE SET
                        token_sealed = excluded.token_sealed, token_suffix = excluded.token_suffix,
                        updated_at = excluded.updated_at
                    """, [starts.ids, starts.types, starts.sealed, starts.suffixes, now])
            }
        }
        return records.count
    }
}

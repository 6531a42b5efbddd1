import Foundation
import HeraldCore
import NIOCore
import PostgresNIO

extension PostgresStore: InstallationRegistry {
    // MARK: App keys

    public func appKeys(appID: String) async throws -> AppKeys? {
        let rows = try await read { connection in
            try await connection.rows("SELECT keys_sealed FROM app_keys WHERE app_id = $1", [appID])
        }
        return try rows.first.map { try decodeKeys(appID: appID, sealed: try $0.bytes("keys_sealed")) }
    }

    public func insertAppKeys(_ keys: AppKeys) async throws -> AppKeys {
        let plaintext = JSONValue.object([
            "server_key": .string(keys.serverKey), "client_key": .string(keys.clientKey),
        ]).serialized()
        let sealed = Data(try cipher.seal(plaintext))
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
        let object = try JSONObjectReader(JSONValue.parse(try cipher.open(sealed)))
        return AppKeys(
            appID: appID, serverKey: try object.requiredString("server_key"),
            clientKey: try object.requiredString("client_key"))
    }

    // MARK: Installations

    public func register(
        _ registration: InstallationRegistration, appID: String, now: Date
    ) async throws -> RegistrationResult {
        let sealed = try cipher.seal(registration.token, service: registration.service)
        return try await transaction { connection in
            // Two nodes registering one new device at once find no row to lock: they take turns on
            // its identities instead (token, then device id: always in that order).
            try await connection.run(
                "SELECT pg_advisory_xact_lock(hashtextextended($1, 3))",
                [
                    "\(appID)\u{1F}\(registration.service.rawValue)\u{1F}\(sealed.index.map { String($0, radix: 16) }.joined())"
                ])
            if let deviceID = registration.profile.deviceID {
                try await connection.run(
                    "SELECT pg_advisory_xact_lock(hashtextextended($1, 4))",
                    ["\(appID)\u{1F}\(registration.service.rawValue)\u{1F}\(deviceID)"])
            }
            return try await self.register(registration, sealed: sealed, appID: appID, now: now, connection)
        }
    }

    public func register(
        batch registrations: [InstallationRegistration], appID: String, now: Date
    ) async throws -> [RegistrationResult] {
        let sealed = try registrations.map { try cipher.seal($0.token, service: $0.service) }
        // A concurrent registration of one of the batch's new devices (another node) makes the
        // batch's insert clash: the batch then runs again, and finds that row.
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await register(batch: registrations, sealed: sealed, appID: appID, now: now)
            } catch let error as HeraldError where attempt < 3 && Self.isUniqueViolation(error) {
                continue
            }
        }
    }

    private func register(
        batch registrations: [InstallationRegistration], sealed: [SealedToken], appID: String, now: Date
    ) async throws -> [RegistrationResult] {
        try await transaction { connection in
            // Every row the batch could touch, read (and locked) at once; the batch is then resolved in
            // memory, registration after registration as register(_:) would, and written in bulk.
            let existing = try await self.fetchInstallationsWithIndex(
                connection,
                where: "app_id = $1 AND (token_index = ANY($2) OR device_id = ANY($3)) FOR UPDATE",
                [
                    appID, sealed.map { ByteBuffer(bytes: $0.index) },
                    Array(Set(registrations.compactMap(\.profile.deviceID))),
                ])
            var batch = RegistrationBatch(existing: existing)
            let results = zip(registrations, sealed).map { registration, token in
                batch.register(registration, sealed: token, appID: appID, now: now)
            }
            try await self.write(batch, connection)
            return results
        }
    }

    /// Writes a resolved batch: deletions first, then updates, then new rows in multi-row inserts,
    /// so no unique index sees a token or device identity twice on the way.
    private func write(_ batch: RegistrationBatch, _ connection: PostgresConnection) async throws {
        if !batch.deleted.isEmpty {
            try await connection.run("DELETE FROM installations WHERE id = ANY($1)", [Array(batch.deleted)])
        }
        var inserted: [RegistrationBatch.Row] = []
        for id in batch.order {
            guard let row = batch.rows[id] else { continue }
            if row.stored {
                try await write(
                    connection, row.installation, tokenIndex: row.token.index, sealedToken: row.token.sealed,
                    insert: false)
            } else {
                inserted.append(row)
            }
        }
        try await insert(inserted.map { ($0.installation, $0.token) }, connection)
    }

    private func register(
        _ registration: InstallationRegistration, sealed token: SealedToken, appID: String, now: Date,
        _ connection: PostgresConnection
    ) async throws -> RegistrationResult {
        // Rows read FOR UPDATE: two nodes registering the same device serialize here.
        let byToken = try await fetchOne(
            connection, where: "app_id = $1 AND service = $2 AND token_index = $3 FOR UPDATE",
            [appID, registration.service.rawValue, Data(token.index)])
        var byDevice: Installation?
        if let deviceID = registration.deviceID {
            byDevice = try await fetchOne(
                connection, where: "app_id = $1 AND device_id = $2 AND service = $3 FOR UPDATE",
                [appID, deviceID, registration.service.rawValue])
        }
        var existing: Installation?
        switch (byDevice, byToken) {
        case (let device?, let token?) where device.id != token.id:
            // The token moves to the device that presents it now.
            try await delete(connection, id: token.id)
            existing = device
        case (let device?, _):
            existing = device
        case (nil, let token?):
            if let held = token.deviceID, let presented = registration.deviceID, held != presented {
                try await delete(connection, id: token.id)
            } else {
                existing = token
            }
        case (nil, nil):
            existing = nil
        }
        if var installation = existing {
            installation.merge(registration, now: now)
            try await write(connection, installation, tokenIndex: token.index, sealedToken: token.sealed, insert: false)
            return RegistrationResult(installation: installation, created: false)
        }
        let installation = Installation(registration, id: Identifier.make(now: now), appID: appID, now: now)
        try await write(connection, installation, tokenIndex: token.index, sealedToken: token.sealed, insert: true)
        return RegistrationResult(installation: installation, created: true)
    }

    public func installation(appID: String, id: String) async throws -> Installation? {
        try await read { connection in
            try await self.fetchOne(connection, where: "app_id = $1 AND id = $2", [appID, id])
        }
    }

    public func installations(appID: String, deviceID: String) async throws -> [Installation] {
        try await read { connection in
            try await self.fetchInstallations(
                connection, where: "app_id = $1 AND device_id = $2 ORDER BY id", [appID, deviceID])
        }
    }

    public func update(_ installation: Installation, now: Date) async throws -> Installation? {
        let token = try cipher.seal(installation.token, service: installation.service)
        var updated = installation
        updated.updatedAt = now
        let stored = updated
        return try await transaction { connection in
            guard
                try await self.fetchOne(
                    connection, where: "app_id = $1 AND id = $2 FOR UPDATE", [installation.appID, installation.id])
                    != nil
            else { return nil }
            // The device id is checked before the token moves: the installation that holds the token
            // may be the one holding the device id too, and deleting it first would hide the conflict.
            if let deviceID = installation.deviceID,
                try await self.fetchOne(
                    connection, where: "app_id = $1 AND device_id = $2 AND service = $3 AND id <> $4",
                    [installation.appID, deviceID, installation.service.rawValue, installation.id]) != nil
            {
                throw HeraldError(
                    kind: .conflict, code: "device_id_in_use",
                    message: "Another installation of this service already has this device_id.", field: "device_id")
            }
            if let holder = try await self.fetchOne(
                connection, where: "app_id = $1 AND service = $2 AND token_index = $3 AND id <> $4",
                [installation.appID, installation.service.rawValue, Data(token.index), installation.id])
            {
                try await self.delete(connection, id: holder.id)
            }
            try await self.write(connection, stored, tokenIndex: token.index, sealedToken: token.sealed, insert: false)
            return stored
        }
    }

    public func deleteInstallation(appID: String, id: String) async throws -> Bool {
        try await read { connection in
            try await connection.changes("DELETE FROM installations WHERE app_id = $1 AND id = $2", [appID, id]) > 0
        }
    }

    public func deleteInstallations(appID: String, userID: String) async throws -> InstallationRemoval {
        try await transaction { connection in
            let withEndpoints = try await self.fetchInstallations(
                connection, where: "app_id = $1 AND user_id = $2 AND sns_endpoint_arn IS NOT NULL", [appID, userID])
            // Preferences and channel rows cascade.
            let count = try await connection.changes(
                "DELETE FROM installations WHERE app_id = $1 AND user_id = $2", [appID, userID])
            return InstallationRemoval(count: count, withEndpoints: withEndpoints)
        }
    }

    public func installations(
        appID: String, filter: InstallationFilter, page: PageRequest
    ) async throws -> [Installation] {
        var conditions = ["app_id = $1"]
        var values: [SQLBind] = [appID]
        func add(_ condition: (Int) -> String, _ value: SQLBind) {
            values.append(value)
            conditions.append(condition(values.count))
        }
        if let userID = filter.userID { add({ "user_id = $\($0)" }, userID) }
        if let platform = filter.platform { add({ "platform = $\($0)" }, platform.rawValue) }
        if let service = filter.service { add({ "service = $\($0)" }, service.rawValue) }
        if let valid = filter.valid { add({ "valid = $\($0)" }, valid) }
        if let channel = filter.channel {
            add(
                { "id IN (SELECT installation_id FROM installation_channels WHERE app_id = $1 AND channel = $\($0))" },
                channel)
        }
        if let after = page.after { add({ "id > $\($0)" }, after) }
        values.append(page.limit)
        let condition = "\(conditions.joined(separator: " AND ")) ORDER BY id LIMIT $\(values.count)"
        let binds = values
        return try await read { connection in try await self.fetchInstallations(connection, where: condition, binds) }
    }

    public func installations(appID: String, ids: [String]) async throws -> [Installation] {
        guard !ids.isEmpty else { return [] }
        return try await read { connection in
            try await self.fetchInstallations(
                connection, where: "app_id = $1 AND id = ANY($2) ORDER BY id", [appID, ids])
        }
    }

    // MARK: Preferences

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

    // MARK: Moving between stores

    public func exportInstallations(after: ExportCursor?, limit: Int) async throws -> [ExportedInstallation] {
        let rows = try await read { connection in
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
        return try rows.map { row in
            var installation = try decodeInstallation(row, openToken: false)
            installation.token = .device("")
            let sealed = SealedToken(index: try row.bytes("token_index"), sealed: try row.bytes("token_sealed"))
            let preferences = try row.get("preferences_body", as: String?.self).map { try Preferences(stored: $0) }
            return ExportedInstallation(installation: installation, sealedToken: sealed, preferences: preferences)
        }
    }

    public func importInstallations(_ records: [ExportedInstallation]) async throws -> Int {
        // Each sealed token must open under this store's key: a file from another deployment is
        // refused before anything is written.
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
        let withDevice = survivors.filter { $0.installation.deviceID != nil }
        let preferences = survivors.compactMap { record in record.preferences.map { (record.installation.id, $0) } }
        try await transaction { connection in
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
        }
        return records.count
    }

    // MARK: Rows

    /// The columns an installation is read from, optionally qualified by a table alias.
    static func installationColumns(_ alias: String? = nil) -> String {
        let prefix = alias.map { "\($0)." } ?? ""
        return Self.columnNames.map {
            $0 == "channels" || $0 == "attributes" ? "\(prefix)\($0)::text AS \($0)" : prefix + $0
        }
        .joined(separator: ", ")
    }

    private static let columnNames = [
        "id", "app_id", "user_id", "device_id", "platform", "service", "environment", "token_index", "token_sealed",
        "channels", "locale", "timezone", "badge", "app_version", "os_version", "device_model", "bundle_id",
        "attributes", "sns_endpoint_arn", "valid", "failure_count", "last_failure_at", "last_failure_reason",
        "last_delivered_at", "last_seen_at", "created_at", "updated_at", "invalidated_at", "delete_when_invalid",
    ]

    /// Installations matching a condition (which may end with ORDER BY / LIMIT / FOR UPDATE).
    func fetchInstallations(
        _ connection: PostgresConnection, where condition: String, _ values: [SQLBind]
    ) async throws -> [Installation] {
        try await connection.rows(
            "SELECT \(Self.installationColumns()) FROM installations WHERE \(condition)", values
        ).map { try self.decodeInstallation($0) }
    }

    private func fetchOne(
        _ connection: PostgresConnection, where condition: String, _ values: [SQLBind]
    ) async throws -> Installation? {
        try await fetchInstallations(connection, where: condition, values).first
    }

    private func delete(_ connection: PostgresConnection, id: String) async throws {
        try await connection.run("DELETE FROM installations WHERE id = $1", [id])
    }

    /// The columns `write` sets, in order (the id comes last).
    static let writtenColumns = columnValues(
        Installation(
            id: "", appID: "", userID: nil, deviceID: nil, platform: .ios, service: .apns, environment: .production,
            token: .device(""), channels: [], locale: nil, timezone: nil, badge: 0, appVersion: nil, osVersion: nil,
            deviceModel: nil, bundleID: nil, attributes: [:], createdAt: Date(), updatedAt: Date()),
        tokenIndex: [], sealed: []
    ).map(\.0)

    /// `$n`, cast to jsonb for the JSON columns.
    static func placeholder(_ index: Int, _ column: String) -> String {
        column == "channels" || column == "attributes" ? "$\(index)::jsonb" : "$\(index)"
    }

    /// Every written column of an installation with its value.
    static func columnValues(
        _ installation: Installation, tokenIndex: [UInt8], sealed sealedToken: [UInt8]
    ) -> [(String, SQLBind)] {
        let channels = String(
            decoding: JSONValue.array(installation.channels.map(JSONValue.string)).serialized(), as: UTF8.self)
        let attributes = String(decoding: JSONValue.object(installation.attributes).serialized(), as: UTF8.self)
        return [
            ("app_id", installation.appID),
            ("user_id", installation.userID),
            ("device_id", installation.deviceID),
            ("platform", installation.platform.rawValue),
            ("service", installation.service.rawValue),
            ("environment", installation.environment.rawValue),
            ("token_index", Data(tokenIndex)),
            ("token_sealed", Data(sealedToken)),
            ("channels", channels),
            ("locale", installation.locale),
            ("timezone", installation.timezone),
            ("badge", installation.badge),
            ("app_version", installation.appVersion),
            ("os_version", installation.osVersion),
            ("device_model", installation.deviceModel),
            ("bundle_id", installation.bundleID),
            ("attributes", attributes),
            ("sns_endpoint_arn", installation.snsEndpointARN),
            ("valid", installation.valid),
            ("failure_count", installation.failureCount),
            ("last_failure_at", installation.lastFailureAt?.timeIntervalSince1970),
            ("last_failure_reason", installation.lastFailureReason),
            ("last_delivered_at", installation.lastDeliveredAt?.timeIntervalSince1970),
            ("last_seen_at", installation.lastSeenAt?.timeIntervalSince1970),
            ("created_at", installation.createdAt.timeIntervalSince1970),
            ("updated_at", installation.updatedAt.timeIntervalSince1970),
            ("invalidated_at", installation.invalidatedAt?.timeIntervalSince1970),
            ("delete_when_invalid", installation.deleteWhenInvalid),
        ]
    }

    func write(
        _ connection: PostgresConnection, _ installation: Installation, tokenIndex: [UInt8], sealedToken: [UInt8],
        insert: Bool
    ) async throws {
        let columns = Self.columnValues(installation, tokenIndex: tokenIndex, sealed: sealedToken)
        let values = columns.map(\.1) + [installation.id]
        if insert {
            let names = columns.map(\.0).joined(separator: ", ")
            let marks = columns.enumerated().map { Self.placeholder($0.offset + 1, $0.element.0) }
                .joined(separator: ", ")
            try await connection.run(
                "INSERT INTO installations (\(names), id) VALUES (\(marks), $\(columns.count + 1))", values)
        } else {
            let assignments = columns.enumerated().map {
                "\($0.element.0) = \(Self.placeholder($0.offset + 1, $0.element.0))"
            }
            .joined(separator: ", ")
            try await connection.run("UPDATE installations SET \(assignments) WHERE id = $\(columns.count + 1)", values)
            try await connection.run("DELETE FROM installation_channels WHERE installation_id = $1", [installation.id])
        }
        if !installation.channels.isEmpty {
            try await connection.run(
                """
                INSERT INTO installation_channels (app_id, channel, installation_id)
                SELECT $1, channel, $2 FROM unnest($3::text[]) AS channel ON CONFLICT DO NOTHING
                """, [installation.appID, installation.id, installation.channels])
        }
    }

    /// Inserts new installations (and their channel rows) in multi-row statements.
    func insert(_ rows: [(Installation, SealedToken)], _ connection: PostgresConnection) async throws {
        // PostgreSQL binds at most 65,535 values in one statement.
        let perStatement = 60_000 / (Self.writtenColumns.count + 1)
        for start in stride(from: 0, to: rows.count, by: perStatement) {
            var values: [SQLBind] = []
            var tuples: [String] = []
            for (installation, token) in rows[start..<min(rows.count, start + perStatement)] {
                let columns = Self.columnValues(installation, tokenIndex: token.index, sealed: token.sealed)
                let first = values.count + 1
                let marks = columns.enumerated().map { Self.placeholder(first + $0.offset, $0.element.0) }
                tuples.append("(\(marks.joined(separator: ", ")), $\(first + columns.count))")
                values += columns.map(\.1) + [installation.id]
            }
            let names = Self.writtenColumns.joined(separator: ", ")
            try await connection.run(
                "INSERT INTO installations (\(names), id) VALUES \(tuples.joined(separator: ", "))", values)
        }
        let channels = rows.flatMap { installation, _ in installation.channels.map { (installation, $0) } }
        if !channels.isEmpty {
            try await connection.run(
                """
                INSERT INTO installation_channels (app_id, channel, installation_id)
                SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) ON CONFLICT DO NOTHING
                """, [channels.map(\.0.appID), channels.map(\.1), channels.map(\.0.id)])
        }
    }

    /// Installations with their stored token index and sealed token.
    func fetchInstallationsWithIndex(
        _ connection: PostgresConnection, where condition: String, _ values: [SQLBind]
    ) async throws -> [(Installation, SealedToken)] {
        try await connection.rows(
            "SELECT \(Self.installationColumns()) FROM installations WHERE \(condition)", values
        ).map { row in
            (
                try self.decodeInstallation(row),
                SealedToken(index: try row.bytes("token_index"), sealed: try row.bytes("token_sealed"))
            )
        }
    }

    func decodeInstallation(_ row: PostgresRandomAccessRow, openToken: Bool = true) throws -> Installation {
        func enumeration<Value: RawRepresentable>(_ column: String) throws -> Value where Value.RawValue == String {
            guard let value = Value(rawValue: try row.get(column, as: String.self)) else {
                throw HeraldError.internal("Stored installation has an unknown \(column).")
            }
            return value
        }
        let service: PushService = try enumeration("service")
        let token =
            openToken ? try cipher.openToken(try row.bytes("token_sealed"), service: service) : PushToken.device("")
        let channelsText = try row.get("channels", as: String.self)
        let attributesText = try row.get("attributes", as: String.self)
        let channels = channelsText == "[]" ? JSONValue.array([]) : try JSONValue.parse(Array(channelsText.utf8))
        let attributes =
            attributesText == "{}" ? JSONValue.object([:]) : try JSONValue.parse(Array(attributesText.utf8))
        guard case .array(let channelValues) = channels, case .object(let attributeMembers) = attributes else {
            throw HeraldError.internal("Stored installation has unreadable channels or attributes.")
        }
        return Installation(
            id: try row.get("id"), appID: try row.get("app_id"), userID: try row.get("user_id"),
            deviceID: try row.get("device_id"), platform: try enumeration("platform"), service: service,
            environment: try enumeration("environment"), token: token,
            channels: channelValues.compactMap { if case .string(let name) = $0 { name } else { nil } },
            locale: try row.get("locale"), timezone: try row.get("timezone"), badge: try row.get("badge"),
            appVersion: try row.get("app_version"), osVersion: try row.get("os_version"),
            deviceModel: try row.get("device_model"), bundleID: try row.get("bundle_id"), attributes: attributeMembers,
            snsEndpointARN: try row.get("sns_endpoint_arn"), valid: try row.get("valid"),
            failureCount: try row.get("failure_count"), lastFailureAt: try row.date("last_failure_at"),
            lastFailureReason: try row.get("last_failure_reason"), lastDeliveredAt: try row.date("last_delivered_at"),
            lastSeenAt: try row.date("last_seen_at"),
            createdAt: try row.date("created_at") ?? Date(timeIntervalSince1970: 0),
            updatedAt: try row.date("updated_at") ?? Date(timeIntervalSince1970: 0),
            invalidatedAt: try row.date("invalidated_at"), deleteWhenInvalid: try row.get("delete_when_invalid"))
    }
}

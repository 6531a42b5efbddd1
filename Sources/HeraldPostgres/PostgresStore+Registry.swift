import Foundation
import HeraldCore
import NIOCore
import PostgresNIO

extension PostgresStore: InstallationRegistry {
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
            // Each token looked up by the whole token index (app, service, token): `token_index = ANY`
            // alone skips the service column, and the generic plan then walks every installation of
            // the app for each batch (an import slowed down as the table grew: 915 a second at 200,000).
            let existing = try await self.fetchInstallationsWithIndex(
                connection,
                where: """
                    id IN (
                        SELECT i.id FROM unnest($2::text[], $3::bytea[]) AS u (service, token_index)
                        JOIN installations i
                            ON i.app_id = $1 AND i.service = u.service AND i.token_index = u.token_index
                        UNION ALL
                        SELECT id FROM installations WHERE app_id = $1 AND device_id = ANY($4))
                    FOR UPDATE
                    """,
                [
                    appID, registrations.map(\.service.rawValue), sealed.map { ByteBuffer(bytes: $0.index) },
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
        let (existing, replaced) = registration.match(deviceHolder: byDevice, tokenHolder: byToken)
        if let replaced { try await delete(connection, id: replaced.id) }
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

    public func installation(appID: String, service: PushService, token: String) async throws -> Installation? {
        let index = Data(cipher.index(token, service: service))
        return try await read { connection in
            try await self.fetchInstallations(
                connection, where: "app_id = $1 AND service = $2 AND token_index = $3",
                [appID, service.rawValue, index])
        }.first
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

}

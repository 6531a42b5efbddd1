import Foundation
import GRDB
import HeraldCore

extension SQLiteStore: InstallationRegistry {
    public func register(
        _ registration: InstallationRegistration, appID: String, now: Date
    ) async throws
        -> RegistrationResult
    {
        let sealed = try seal(registration)
        return try await groupCommit.write(durable: true) { db in
            try self.register(registration, sealed: sealed, appID: appID, now: now, db)
        }
    }

    /// Registers many installations in one transaction (the bulk import path), with the same
    /// identity rules as ``register(_:appID:now:)``.
    public func register(
        batch registrations: [InstallationRegistration], appID: String, now: Date
    ) async throws -> [RegistrationResult] {
        let sealed = try registrations.map(seal)
        return try await durableWrite { db in
            try zip(registrations, sealed).map { registration, sealed in
                try self.register(registration, sealed: sealed, appID: appID, now: now, db)
            }
        }
    }

    /// Checkpoints the write-ahead log every `interval`, from a connection of its own, until the
    /// task is cancelled (`herald serve` runs it for as long as it serves).
    ///
    /// A checkpoint copies the log's pages into the database file and syncs both files. Left to
    /// SQLite, the writing connection does it after the commit that fills the log, and every
    /// write waits behind it: a stall of milliseconds in the latency of sends and registrations.
    /// A passive checkpoint from another connection runs beside the writer instead; the writer's
    /// own (see ``walCheckpointPages``) remains for when this one cannot keep up or is not running.
    /// `clock` is what the passes wait on.
    /// - Throws: GRDB's `DatabaseError` when the connection cannot be opened.
    public func checkpointContinuously(
        every interval: Duration = .milliseconds(250), clock: any Clock<Duration> = ContinuousClock()
    ) async throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(1)
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        let connection = try DatabaseQueue(path: path, configuration: configuration)
        while !Task.isCancelled {
            try? await clock.sleep(for: interval)
            // A busy or failed pass changes nothing; the next one, or the writer's own, catches up. A
            // failed sync is the exception: nothing is answered as durable after it (``WALSync``).
            do {
                _ = try await connection.writeWithoutTransaction { db in try db.checkpoint(.passive) }
            } catch {
                walSync.noteFailure(error)
            }
        }
    }

    /// Checkpoints the write-ahead log into the database file and truncates it: an import
    /// leaves hundreds of megabytes of WAL that the next writer would otherwise checkpoint in
    /// the middle of its own work.
    public func finishBulkLoad() async throws {
        do {
            try await database.writeWithoutTransaction { db in
                _ = try db.checkpoint(.truncate)
            }
        } catch {
            walSync.noteFailure(error)
            throw error
        }
    }

    private func seal(_ registration: InstallationRegistration) throws -> SealedToken {
        try cipher.seal(registration.token, service: registration.service)
    }

    private func register(
        _ registration: InstallationRegistration, sealed token: SealedToken, appID: String,
        now: Date, _ db: Database
    ) throws -> RegistrationResult {
        let index = token.index
        let sealed = token.sealed
        let byToken = try self.fetchOne(
            db, where: "app_id = ? AND service = ? AND token_index = ?",
            [appID, registration.service.rawValue, Data(index)])
        let byDevice = try registration.deviceID.flatMap { deviceID in
            try self.fetchOne(
                db, where: "app_id = ? AND device_id = ? AND service = ?",
                [appID, deviceID, registration.service.rawValue])
        }
        let (existing, replaced) = registration.match(deviceHolder: byDevice, tokenHolder: byToken)
        if let replaced { try self.delete(db, id: replaced.id) }
        if var installation = existing {
            installation.merge(registration, now: now)
            try self.write(db, installation, tokenIndex: index, sealedToken: sealed, insert: false)
            return RegistrationResult(installation: installation, created: false)
        }
        let installation = Installation(registration, id: Identifier.make(now: now), appID: appID, now: now)
        try self.write(db, installation, tokenIndex: index, sealedToken: sealed, insert: true)
        return RegistrationResult(installation: installation, created: true)
    }

    public func installation(appID: String, id: String) async throws -> Installation? {
        try await smallRead(oneStatement: true) { db in
            try self.fetchOne(db, where: "app_id = ? AND id = ?", [appID, id])
        }
    }

    public func installation(appID: String, service: PushService, token: String) async throws -> Installation? {
        let index = cipher.index(token, service: service)
        return try await smallRead(oneStatement: true) { db in
            // Cached: a dialect's pushkey or endpoint is looked up this way for each notification.
            try Row.fetchOne(
                db.cachedStatement(
                    sql: "SELECT * FROM installations WHERE app_id = ? AND service = ? AND token_index = ?"),
                arguments: [appID, service.rawValue, Data(index)]
            ).map(self.decode)
        }
    }

    public func update(_ installation: Installation, now: Date) async throws -> Installation? {
        let token = try cipher.seal(installation.token, service: installation.service)
        let (index, sealed) = (token.index, token.sealed)
        let updated = {
            var copy = installation
            copy.updatedAt = now
            return copy
        }()
        return try await durableWrite { db in
            guard try self.fetchOne(db, where: "app_id = ? AND id = ?", [installation.appID, installation.id]) != nil
            else { return nil }
            // The device id is checked before the token moves: the installation that holds the token
            // may be the one holding the device id too, and deleting it first would hide the conflict.
            if let deviceID = installation.deviceID,
                try self.fetchOne(
                    db, where: "app_id = ? AND device_id = ? AND service = ? AND id <> ?",
                    [installation.appID, deviceID, installation.service.rawValue, installation.id]) != nil
            {
                throw HeraldError(
                    kind: .conflict, code: "device_id_in_use",
                    message: "Another installation of this service already has this device_id.", field: "device_id")
            }
            if let holder = try self.fetchOne(
                db, where: "app_id = ? AND service = ? AND token_index = ? AND id <> ?",
                [installation.appID, installation.service.rawValue, Data(index), installation.id])
            {
                try self.delete(db, id: holder.id)
            }
            try self.write(db, updated, tokenIndex: index, sealedToken: sealed, insert: false)
            return updated
        }
    }

    public func deleteInstallation(appID: String, id: String) async throws -> Bool {
        try await durableWrite { db in
            try db.execute(sql: "DELETE FROM installations WHERE app_id = ? AND id = ?", arguments: [appID, id])
            return db.changesCount > 0
        }
    }

    public func deleteInstallations(appID: String, userID: String) async throws -> InstallationRemoval {
        try await durableWrite { db in
            let withEndpoints = try Row.fetchAll(
                db,
                sql: "SELECT * FROM installations WHERE app_id = ? AND user_id = ? AND sns_endpoint_arn IS NOT NULL",
                arguments: [appID, userID]
            ).map(self.decode)
            // Preferences and channel rows cascade.
            try db.execute(
                sql: "DELETE FROM installations WHERE app_id = ? AND user_id = ?", arguments: [appID, userID])
            return InstallationRemoval(count: db.changesCount, withEndpoints: withEndpoints)
        }
    }

    public func installations(
        appID: String, filter: InstallationFilter, page: PageRequest
    ) async throws
        -> [Installation]
    {
        var conditions = ["app_id = ?"]
        var arguments: [any DatabaseValueConvertible] = [appID]
        if let userID = filter.userID {
            conditions.append("user_id = ?")
            arguments.append(userID)
        }
        if let platform = filter.platform {
            conditions.append("platform = ?")
            arguments.append(platform.rawValue)
        }
        if let service = filter.service {
            conditions.append("service = ?")
            arguments.append(service.rawValue)
        }
        if let valid = filter.valid {
            conditions.append("valid = ?")
            arguments.append(valid)
        }
        if let channel = filter.channel {
            conditions.append(
                "id IN (SELECT installation_id FROM installation_channels WHERE app_id = ? AND channel = ?)")
            arguments.append(contentsOf: [appID, channel])
        }
        if let after = page.after {
            conditions.append("id > ?")
            arguments.append(after)
        }
        let sql = "SELECT * FROM installations WHERE \(conditions.joined(separator: " AND ")) ORDER BY id LIMIT ?"
        arguments.append(page.limit)
        let values = arguments.map(\.databaseValue)
        return try await database.read { db in
            try self.fetchInstallations(db, sql: sql, arguments: StatementArguments(values))
        }
    }

    /// The installations with the client's own device id (ArgusAI's devices).
    public func installations(appID: String, deviceID: String) async throws -> [Installation] {
        try await database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM installations WHERE app_id = ? AND device_id = ? ORDER BY id",
                arguments: [appID, deviceID]
            ).map(self.decode)
        }
    }
}

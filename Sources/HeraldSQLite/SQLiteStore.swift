import Foundation
import GRDB
import HeraldCore

/// The embedded store: one SQLite database in WAL mode through a GRDB `DatabasePool` (one writer,
/// concurrent readers). Tokens and generated app keys are sealed with the ``TokenCipher``.
public final class SQLiteStore: Store {
    let database: DatabasePool
    let cipher: TokenCipher
    /// The database file's path (a checkpointing connection opens it too).
    let path: String
    /// Wakes this process's workers after a job is stored or made due (one node: no one else to tell).
    let signals = JobSignalHub()
    /// Registrations from concurrent requests share a transaction (see ``GroupCommit``).
    let groupCommit: GroupCommit
    /// Makes what Herald answers `2xx` for durable without holding the writer (see ``WALSync``).
    let walSync: WALSync

    /// The writer's page cache unless told otherwise: big enough that a page of a broadcast or a
    /// batch of an import finds the index pages it touches, small enough for a lean server.
    public static let defaultWriterCacheKiB = 32 * 1024

    /// The write-ahead log is checkpointed into the database file once it holds this many pages
    /// (SQLite's default is 1,000). Small writes rewrite the same hot index pages commit after
    /// commit; a checkpoint copies each page once however often the log holds it, so a longer
    /// log turns many checkpoints (each two `fdatasync`s, on the writer) into fewer.
    static let walCheckpointPages = 8192

    /// Opens (creating if needed) the database at `path`. Call ``migrate()`` before use.
    /// - Parameters:
    ///   - writerCacheKiB: The writing connection's page cache (`PRAGMA cache_size`); readers keep
    ///     SQLite's default. Bulk imports pass more: random token-index inserts then hit cached
    ///     pages instead of re-reading and re-writing them batch after batch.
    ///   - syncsAccepted: Whether what Herald answers `2xx` for is answered only once it is on disk
    ///     (``WALSync``; `sqlite.synchronous: full`), so a power loss cannot roll it back; false
    ///     answers once it is in the write-ahead log (it survives a process crash, not a power loss).
    /// - Throws: GRDB's `DatabaseError` when the file cannot be opened.
    public init(
        path: String, cipher: TokenCipher, writerCacheKiB: Int = defaultWriterCacheKiB, syncsAccepted: Bool = true
    ) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.foreignKeysEnabled = true
        configuration.prepareDatabase { db in
            db.add(function: InstallationQuery.regexpFunction)
            db.add(function: InstallationQuery.geoDistanceFunction)
            db.add(function: InstallationQuery.geoWithinFunction)
            if !db.configuration.readonly {
                try db.execute(sql: "PRAGMA cache_size = -\(max(2048, writerCacheKiB))")
                try db.execute(sql: "PRAGMA wal_autocheckpoint = \(Self.walCheckpointPages)")
            }
        }
        self.database = try DatabasePool(path: path, configuration: configuration)
        self.cipher = cipher
        self.path = path
        let walSync = WALSync(databasePath: path, enabled: syncsAccepted)
        self.walSync = walSync
        self.groupCommit = GroupCommit(database: database, walSync: walSync)
    }

    /// A write Herald answers `2xx` for: returned once it is on disk (``WALSync``), so a power loss
    /// cannot roll it back.
    /// - Throws: the write's error, or ``WALSyncError`` (the disk cannot be written).
    func durableWrite<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let value = try await database.write(updates)
        try await walSync.sync()
        return value
    }

    public func migrate() async throws {
        try Self.migrator.migrate(database)
    }

    public func ping() async throws {
        _ = try await database.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
    }

    public func probeWrite() async throws {
        try await durableWrite { db in
            try db.execute(
                sql: "CREATE TABLE IF NOT EXISTS herald_write_probe (id INTEGER PRIMARY KEY, at REAL NOT NULL)")
            try db.execute(
                sql: "INSERT OR REPLACE INTO herald_write_probe (id, at) VALUES (1, ?)",
                arguments: [Date().timeIntervalSince1970])
        }
    }

    /// Applies migrations up to and including `target` only (to test upgrades from older versions).
    public func migrate(upTo target: String) throws {
        try Self.migrator.migrate(database, upTo: target)
    }

    /// The identifiers of the migrations applied to the database, in order.
    public func appliedMigrations() async throws -> [String] {
        try await database.read { db in try Self.migrator.appliedMigrations(db) }
    }

    // MARK: App keys

    public func appKeys(appID: String) async throws -> AppKeys? {
        let sealed = try await database.read { db in
            try Data.fetchOne(db, sql: "SELECT keys_sealed FROM app_keys WHERE app_id = ?", arguments: [appID])
        }
        return try sealed.map { try decodeKeys(appID: appID, sealed: $0) }
    }

    public func insertAppKeys(_ keys: AppKeys) async throws -> AppKeys {
        let plaintext = JSONValue.object([
            "server_key": .string(keys.serverKey), "client_key": .string(keys.clientKey),
        ]).serialized()
        let sealed = Data(try cipher.seal(plaintext))
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
        let object = try JSONObjectReader(JSONValue.parse(try cipher.open(Array(sealed))))
        return AppKeys(
            appID: appID, serverKey: try object.requiredString("server_key"),
            clientKey: try object.requiredString("client_key"))
    }

    // MARK: Installations

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
    /// - Throws: GRDB's `DatabaseError` when the connection cannot be opened.
    public func checkpointContinuously(every interval: Duration = .milliseconds(250)) async throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(1)
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        let connection = try DatabaseQueue(path: path, configuration: configuration)
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            // A busy or failed pass changes nothing; the next one, or the writer's own, catches up.
            _ = try? await connection.writeWithoutTransaction { db in try db.checkpoint(.passive) }
        }
    }

    /// Checkpoints the write-ahead log into the database file and truncates it: an import
    /// leaves hundreds of megabytes of WAL that the next writer would otherwise checkpoint in
    /// the middle of its own work.
    public func finishBulkLoad() async throws {
        try await database.writeWithoutTransaction { db in
            _ = try db.checkpoint(.truncate)
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
        var existing: Installation?
        switch (byDevice, byToken) {
        case (let device?, let token?) where device.id != token.id:
            // The token moves to the device that presents it now.
            try self.delete(db, id: token.id)
            existing = device
        case (let device?, _):
            existing = device
        case (nil, let token?):
            if let held = token.deviceID, let presented = registration.deviceID, held != presented {
                try self.delete(db, id: token.id)
            } else {
                existing = token
            }
        case (nil, nil):
            existing = nil
        }
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
        try await database.read { db in try self.fetchOne(db, where: "app_id = ? AND id = ?", [appID, id]) }
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

    // MARK: Rows

    /// Installations decoded while the cursor stands on each row (no intermediate row copies).
    func fetchInstallations(_ db: Database, sql: String, arguments: StatementArguments) throws -> [Installation] {
        let cursor = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        var installations: [Installation] = []
        while let row = try cursor.next() { installations.append(try decode(row)) }
        return installations
    }

    private func fetchOne(
        _ db: Database, where condition: String, _ arguments: StatementArguments
    ) throws
        -> Installation?
    {
        // Cached statements: registration and import run these once per device. The id comes
        // first, from a one-column statement: a registration usually finds no row, and a cursor
        // over `SELECT *` costs a name table of every column even then.
        guard
            let id = try String.fetchOne(
                db.cachedStatement(sql: "SELECT id FROM installations WHERE \(condition)"), arguments: arguments)
        else { return nil }
        return try Row.fetchOne(
            db.cachedStatement(sql: "SELECT * FROM installations WHERE id = ?"), arguments: [id]
        )
        .map(decode)
    }

    private func delete(_ db: Database, id: String) throws {
        try db.execute(sql: "DELETE FROM installations WHERE id = ?", arguments: [id])
    }

    /// The columns ``write(_:_:tokenIndex:sealedToken:insert:)`` sets, in the order of its values.
    private static let writtenColumns = [
        "app_id", "user_id", "device_id", "platform", "service", "environment", "token_index", "token_sealed",
        "channels", "locale", "timezone", "badge", "app_version", "os_version", "device_model", "bundle_id",
        "attributes", "sns_endpoint_arn", "valid", "failure_count", "last_failure_at", "last_failure_reason",
        "last_delivered_at", "last_seen_at", "created_at", "updated_at", "invalidated_at", "delete_when_invalid",
    ]
    private static let insertSQL =
        "INSERT INTO installations (\(writtenColumns.joined(separator: ", ")), id) VALUES (\(placeholders(writtenColumns.count + 1)))"
    private static let updateSQL =
        "UPDATE installations SET \(writtenColumns.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?"

    func write(
        _ db: Database, _ installation: Installation, tokenIndex: [UInt8], sealedToken: [UInt8], insert: Bool
    ) throws {
        let values: [(any DatabaseValueConvertible)?] = [
            installation.appID, installation.userID, installation.deviceID, installation.platform.rawValue,
            installation.service.rawValue, installation.environment.rawValue, Data(tokenIndex), Data(sealedToken),
            String(decoding: JSONValue.array(installation.channels.map(JSONValue.string)).serialized(), as: UTF8.self),
            installation.locale, installation.timezone, installation.badge, installation.appVersion,
            installation.osVersion, installation.deviceModel, installation.bundleID,
            String(decoding: JSONValue.object(installation.attributes).serialized(), as: UTF8.self),
            installation.snsEndpointARN, installation.valid, installation.failureCount,
            installation.lastFailureAt?.timeIntervalSince1970, installation.lastFailureReason,
            installation.lastDeliveredAt?.timeIntervalSince1970, installation.lastSeenAt?.timeIntervalSince1970,
            installation.createdAt.timeIntervalSince1970, installation.updatedAt.timeIntervalSince1970,
            installation.invalidatedAt?.timeIntervalSince1970, installation.deleteWhenInvalid, installation.id,
        ]
        let arguments = StatementArguments(values)
        if insert {
            try db.cachedStatement(sql: Self.insertSQL).execute(arguments: arguments)
        } else {
            try db.cachedStatement(sql: Self.updateSQL).execute(arguments: arguments)
            try db.cachedStatement(sql: "DELETE FROM installation_channels WHERE installation_id = ?")
                .execute(arguments: [installation.id])
        }
        for channel in installation.channels {
            try db.cachedStatement(
                sql: "INSERT INTO installation_channels (app_id, channel, installation_id) VALUES (?, ?, ?)"
            ).execute(arguments: [installation.appID, channel, installation.id])
        }
    }

    /// The columns of `installations` in table order (`SELECT *` returns them so): fan-out decodes
    /// thousands of rows per page, and reading by position skips a name search per column.
    private enum Column: Int {
        case id, appID, userID, deviceID, platform, service, environment, tokenIndex, tokenSealed, channels, locale
        case timezone, badge, appVersion, osVersion, deviceModel, bundleID, attributes, snsEndpointARN, valid
        case failureCount, lastFailureAt, lastFailureReason, lastDeliveredAt, lastSeenAt, createdAt, updatedAt
        case invalidatedAt, deleteWhenInvalid
    }

    /// `?, ?, …`: the bound parameters of an `IN (…)` list or a `VALUES (…)` row.
    static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }

    func decode(_ row: Row) throws -> Installation {
        guard row.count > Column.deleteWhenInvalid.rawValue else {
            throw HeraldError.internal("Installation rows must be read with SELECT *.")
        }
        // `StatementColumnConvertible` selects GRDB's fast path: straight from the SQLite
        // statement while a cursor is on the row, without boxing a `DatabaseValue` per column.
        func value<Value: DatabaseValueConvertible & StatementColumnConvertible>(_ column: Column) -> Value {
            row[column.rawValue]
        }
        func optional<Value: DatabaseValueConvertible & StatementColumnConvertible>(_ column: Column) -> Value? {
            row[column.rawValue]
        }
        func date(_ column: Column) -> Date? { (optional(column) as Double?).map(Date.init(timeIntervalSince1970:)) }
        func enumeration<Value: RawRepresentable>(_ column: Column) throws -> Value where Value.RawValue == String {
            guard let value = Value(rawValue: value(column)) else {
                throw HeraldError.internal("Stored installation has an unknown \(column).")
            }
            return value
        }
        /// Empty collections are most rows': no parser needed for them.
        func json(_ column: Column, empty: JSONValue) throws -> JSONValue {
            let text: String = value(column)
            if text == "[]" || text == "{}" { return empty }
            return try JSONValue.parse(Array(text.utf8))
        }
        let service: PushService = try enumeration(.service)
        let token = try cipher.openToken(Array(value(.tokenSealed) as Data), service: service)
        guard case .array(let channelValues) = try json(.channels, empty: .array([])),
            case .object(let attributeMembers) = try json(.attributes, empty: .object([:]))
        else {
            throw HeraldError.internal("Stored installation has unreadable channels or attributes.")
        }
        return Installation(
            id: value(.id), appID: value(.appID), userID: optional(.userID), deviceID: optional(.deviceID),
            platform: try enumeration(.platform), service: service, environment: try enumeration(.environment),
            token: token,
            channels: channelValues.compactMap { if case .string(let name) = $0 { name } else { nil } },
            locale: optional(.locale), timezone: optional(.timezone), badge: value(.badge),
            appVersion: optional(.appVersion), osVersion: optional(.osVersion), deviceModel: optional(.deviceModel),
            bundleID: optional(.bundleID), attributes: attributeMembers, snsEndpointARN: optional(.snsEndpointARN),
            valid: value(.valid), failureCount: value(.failureCount), lastFailureAt: date(.lastFailureAt),
            lastFailureReason: optional(.lastFailureReason), lastDeliveredAt: date(.lastDeliveredAt),
            lastSeenAt: date(.lastSeenAt), createdAt: date(.createdAt) ?? Date(timeIntervalSince1970: 0),
            updatedAt: date(.updatedAt) ?? Date(timeIntervalSince1970: 0), invalidatedAt: date(.invalidatedAt),
            deleteWhenInvalid: value(.deleteWhenInvalid))
    }
}

extension SQLiteStore: BulkLoading {}

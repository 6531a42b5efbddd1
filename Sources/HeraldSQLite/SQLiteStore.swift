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
    /// Small reads on the calling thread (see ``InlineReaders``).
    let inlineReaders: InlineReaders

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
    ///   - syncInterval: The least time between two syncs by the writer (`sqlite.sync_interval_ms`, see
    ///     ``GroupCommit``); zero (the tests' default) syncs each commit at once.
    /// - Throws: GRDB's `DatabaseError` when the file cannot be opened.
    public init(
        path: String, cipher: TokenCipher, writerCacheKiB: Int = defaultWriterCacheKiB, syncsAccepted: Bool = true,
        syncInterval: Duration = .zero
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
        // Opened after the pool, which sets the database up (WAL mode) if it is new: two, one for
        // each of a small machine's event loops; a third caller goes to the pool.
        self.inlineReaders = try InlineReaders(path: path, configuration: configuration, count: 2)
        self.cipher = cipher
        self.path = path
        let walSync = WALSync(databasePath: path, enabled: syncsAccepted)
        self.walSync = walSync
        self.groupCommit = GroupCommit(database: database, walSync: walSync, syncInterval: syncInterval)
    }

    /// A write Herald answers `2xx` for: returned once it is on disk (``WALSync``), so a power loss
    /// cannot roll it back.
    /// - Throws: the write's error, or ``WALSyncError`` (the disk cannot be written).
    func durableWrite<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let value = try await write(updates)
        try await walSync.sync()
        return value
    }

    /// A write in its own transaction. A sync SQLite makes in it that fails (the log's header, when
    /// the commit starts reusing the log after a checkpoint) fails every later durable write, as a
    /// failed sync of ``WALSync``'s does.
    func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await database.write(updates)
        } catch {
            walSync.noteFailure(error)
            throw error
        }
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

}

extension SQLiteStore: BulkLoading {}

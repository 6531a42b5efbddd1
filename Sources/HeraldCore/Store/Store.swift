import Foundation

/// The lifecycle every store shares. Herald's persistence is split by concern —
/// ``InstallationRegistry``, ``JobQueue``, ``DispatchLedger``, ``NotificationRecords``,
/// ``ClusterState``, ``EventStore`` and each dialect's own records — implemented by the embedded
/// SQLite store and by PostgreSQL with the same meaning. Implementations encrypt tokens at rest with the ``TokenCipher`` they are given.
public protocol Store: Sendable {
    /// Applies every pending migration.
    func migrate() async throws

    /// Answers when the database is reachable.
    func ping() async throws

    /// Writes one row (of a table of its own): answers when the database can be written, and
    /// throws a ``StorageError`` or `storage_unavailable` when the disk is full or the database read-only.
    func probeWrite() async throws
}

/// What the engine needs of a store, and all it uses: the job queue, the ledger, the state nodes
/// share and the registry's changes (``DispatchRegistry``). The SQL stores provide it, and so does
/// the test support's in-memory store, which the engine's unit tests run on.
public typealias EngineStore = JobQueue & DispatchLedger & ClusterState & DispatchRegistry

/// What the engine and the native API's routes share of a store: the engine's store with the
/// lifecycle and the whole registry.
public typealias DispatchStore = Store & InstallationRegistry & EngineStore

/// Everything Herald keeps for itself: the registry and engine's store, the API's reads of
/// notifications, the events, the ledger's insights and the console's sessions. A dialect with
/// records of its own declares their store protocol in its module (`SNSAPIStore`,
/// `RelayUsageStore`, `LeanCloudUserStore`, `PushEndpointStore`) and asks for it by type
/// (`DialectContext.store(_:for:)`).
public typealias HeraldStore =
    DispatchStore & NotificationRecords & EventStore & LedgerInsights & ConsoleSessionStore

/// A store that can tidy up after a bulk load (`herald import`), so the first work after it (a
/// broadcast, say) does not pay for it: SQLite folds the write-ahead log into the database,
/// PostgreSQL vacuums and analyzes what the load wrote.
public protocol BulkLoading: Sendable {
    /// Ends a bulk load.
    func finishBulkLoad() async throws
}

import Foundation
import HeraldCore
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The shared store: one PostgreSQL database that any number of Herald nodes use at once, through a
/// pooled `PostgresClient`. Tokens and generated app keys are sealed with the ``TokenCipher``, as on
/// SQLite. Jobs are claimed with `FOR UPDATE SKIP LOCKED`; new work is announced with
/// `NOTIFY herald_jobs`, which every node's store hears on a connection of its own.
///
/// Nothing reaches the database unless the store's connections run (``run()``, a `Service`):
/// `herald serve` runs them in a task group around its `ServiceGroup`, so that they outlive every
/// service that uses them; a one-shot command or a test calls ``start()``.
public final class PostgresStore: Store, Service, Sendable {
    let client: PostgresClient
    let cipher: TokenCipher
    let logger: Logger
    let configuration: PostgresStoreConfiguration
    let signals = JobSignalHub()
    /// The connections when ``start()`` runs them in the background.
    private let background = Mutex<Task<Void, Never>?>(nil)

    /// The channel that announces new or sooner jobs.
    static let jobChannel = "herald_jobs"

    /// A store for the database at `url` (see ``PostgresStoreConfiguration``); its connections
    /// run once ``run()`` or ``start()`` does. Call ``migrate()`` before use.
    /// - Throws: `HeraldError` when the URL is invalid or its TLS settings cannot be loaded.
    public convenience init(
        url: String, cipher: TokenCipher, logger: Logger = Logger(label: "herald.postgres")
    )
        throws
    {
        try self.init(configuration: PostgresStoreConfiguration(url: url), cipher: cipher, logger: logger)
    }

    /// A store with explicit settings; see ``init(url:cipher:logger:)``.
    public init(configuration: PostgresStoreConfiguration, cipher: TokenCipher, logger: Logger) throws {
        self.client = PostgresClient(configuration: try configuration.clientConfiguration(), backgroundLogger: logger)
        self.cipher = cipher
        self.logger = logger
        self.configuration = configuration
    }

    /// A store for the database at `url` whose connections already run in the background
    /// (``start()``): for a one-shot command or a test; ``close()`` at the end.
    public static func started(
        url: String, cipher: TokenCipher, logger: Logger = Logger(label: "herald.postgres")
    ) throws -> PostgresStore {
        let store = try PostgresStore(url: url, cipher: cipher, logger: logger)
        store.start()
        return store
    }

    deinit {
        background.withLock { $0 }?.cancel()
        signals.finish()
    }

    /// The store's connections as a `Service`: the pool and the connection listening for job
    /// signals, until the task is cancelled or shut down gracefully.
    public func run() async {
        await cancelWhenGracefulShutdown { [client, signals, logger] in
            await Self.runConnections(client: client, signals: signals, logger: logger)
        }
        signals.finish()
    }

    /// Runs the connections in a task of their own, for a caller with no task group to run
    /// ``run()`` in: the one task the store leaves running, until ``close()`` (or its release).
    public func start() {
        let (client, signals, logger) = (client, signals, logger)
        background.withLock { task in
            guard task == nil else { return }
            task = Task { await Self.runConnections(client: client, signals: signals, logger: logger) }
        }
    }

    /// Stops what ``start()`` started: the listener, every job-signal stream and the pool's connections.
    public func close() async {
        signals.finish()
        let task = background.withLock { $0.take() }
        task?.cancel()
        await task?.value
    }

    /// The pool (`PostgresClient.run()` is its whole lifetime, and returns when cancelled) and the
    /// job-signal listener, until cancelled.
    private static func runConnections(client: PostgresClient, signals: JobSignalHub, logger: Logger) async {
        await withDiscardingTaskGroup { group in
            group.addTask { await client.run() }
            group.addTask { await listen(client: client, signals: signals, logger: logger) }
        }
    }

    public func migrate() async throws {
        try await PostgresMigrations.apply(to: self)
    }

    public func ping() async throws {
        _ = try await read { connection in try await connection.rows("SELECT 1") }
    }

    public func probeWrite() async throws {
        try await transaction { connection in
            try await connection.run(
                "CREATE TABLE IF NOT EXISTS herald_write_probe (id integer PRIMARY KEY, at double precision NOT NULL)")
            try await connection.run(
                "INSERT INTO herald_write_probe (id, at) VALUES (1, $1) "
                    + "ON CONFLICT (id) DO UPDATE SET at = EXCLUDED.at",
                [Date().timeIntervalSince1970])
        }
    }

    // MARK: Job signals

    public func jobSignals() -> AsyncStream<Void> {
        signals.stream()
    }

    /// Holds one pooled connection in `LISTEN herald_jobs` and signals every stream on each
    /// notification, reconnecting after a failure (and signalling then, as one may have been missed).
    private static func listen(client: PostgresClient, signals: JobSignalHub, logger: Logger) async {
        await listen(
            on: jobChannel, client: client, logger: logger, name: "Job-signal listener",
            listening: { signals.signal() }, received: { _ in signals.signal() })
    }

    /// Holds one pooled connection in `LISTEN channel` until the task is cancelled, handing each
    /// notification's payload to `received`; after a failure it reconnects (backing off from 100 ms
    /// to 5 s) and runs `listening` again, as it does each time it starts listening.
    static func listen(
        on channel: String, client: PostgresClient, logger: Logger, name: String,
        listening: @escaping @Sendable () -> Void = {}, received: @escaping @Sendable (String) -> Void
    ) async {
        var delay: Duration = .milliseconds(100)
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: channel) { notifications in
                        delay = .milliseconds(100)
                        listening()
                        for try await notification in notifications { received(notification.payload) }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.debug("\(name) lost its connection", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(5))
        }
    }

    // MARK: Connections and transactions

    /// Runs `body` on one pooled connection outside a transaction.
    func read<Result: Sendable>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        try await client.withConnection { connection in try await body(connection) }
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws (its
    /// error is rethrown as it is).
    func transaction<Result: Sendable>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        try await client.withConnection { connection in
            try await connection.run("BEGIN")
            do {
                let result = try await body(connection)
                try await connection.run("COMMIT")
                return result
            } catch {
                try? await connection.run("ROLLBACK")
                throw error
            }
        }
    }
}

extension PostgresStore {
    /// Whether a database error is a unique-constraint violation (SQLSTATE 23505).
    static func isUniqueViolation(_ error: HeraldError) -> Bool {
        error.code == "database_error" && error.message.hasSuffix("(SQLSTATE 23505)")
    }
}

/// A value bound to a statement's `$n`, or NULL.
typealias SQLBind = (any PostgresThrowingDynamicTypeEncodable)?

extension PostgresConnection {
    /// Runs a statement with bound values; the rows it returned and how many it changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLBind] = []) async throws -> PostgresQueryResult {
        let query = PostgresQuery(unsafeSQL: sql, binds: try PostgresBindings(values))
        let future: EventLoopFuture<PostgresQueryResult> = self.query(query, logger: self.logger)
        do {
            return try await future.get()
        } catch let error as PSQLError {
            throw Self.storeError(error)
        }
    }

    /// What a statement's failure is to Herald. PSQLError's description hides everything; the
    /// server's message and SQLSTATE say what went wrong without the statement's values (which may
    /// be secrets).
    static func storeError(_ error: PSQLError) -> any Error {
        guard let message = error.serverInfo?[.message] else { return error }
        let state = error.serverInfo?[.sqlState] ?? "?"
        if state == "2201B" {
            // A `$regex` the query parser accepted (ICU) that PostgreSQL's engine cannot run.
            return HeraldError.invalidValue(
                "where", code: "invalid_query", "The $regex pattern is not one Herald can run here: \(message).")
        }
        switch state {
        case "53100": return HeraldError.storageUnavailable("PostgreSQL's disk is full")
        case "25006": return HeraldError.storageUnavailable("PostgreSQL is read-only")
        case _ where state.hasPrefix("53"): return HeraldError.storageUnavailable("PostgreSQL is out of resources")
        default:
            return HeraldError(
                kind: .internal, code: "database_error", message: "PostgreSQL: \(message) (SQLSTATE \(state))")
        }
    }

    /// The rows of a query, ready for access by column name.
    func rows(_ sql: String, _ values: [SQLBind] = []) async throws -> [PostgresRandomAccessRow] {
        try await run(sql, values).rows.map { $0.makeRandomAccess() }
    }

    /// How many rows a statement changed.
    func changes(_ sql: String, _ values: [SQLBind] = []) async throws -> Int {
        try await run(sql, values).metadata.rows ?? 0
    }

    /// `NOTIFY herald_jobs`: delivered to the listeners when the current transaction commits.
    func notifyJobs() async throws {
        try await run("NOTIFY \(PostgresStore.jobChannel)")
    }
}

extension PostgresRandomAccessRow {
    /// The column's value, decoded.
    func get<Value: PostgresDecodable>(_ column: String, as type: Value.Type = Value.self) throws -> Value {
        try self[column].decode(Value.self, context: .default)
    }

    /// A date stored as seconds since 1970, or nil.
    func date(_ column: String) throws -> Date? {
        try get(column, as: Double?.self).map(Date.init(timeIntervalSince1970:))
    }

    /// A bytea column's bytes.
    func bytes(_ column: String) throws -> [UInt8] {
        Array(try get(column, as: Data.self))
    }
}

/// `$from, $from+1, …`: the placeholders of a list of `count` values.
func placeholders(from start: Int, count: Int) -> String {
    (start..<(start + count)).map { "$\($0)" }.joined(separator: ", ")
}

import Foundation
import HeraldCore
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// The shared store: one PostgreSQL database that any number of Herald nodes use at once, through a
/// pooled `PostgresClient`. Tokens and generated app keys are sealed with the ``TokenCipher``, as on
/// SQLite. Jobs are claimed with `FOR UPDATE SKIP LOCKED`; new work is announced with
/// `NOTIFY herald_jobs`, which every node's store hears on a connection of its own.
public final class PostgresStore: Store, Sendable {
    let client: PostgresClient
    let cipher: TokenCipher
    let logger: Logger
    let configuration: PostgresStoreConfiguration
    let signals = JobSignalHub()
    /// Set by ``close()``: the relay's listeners stop reconnecting.
    let closed = Atomic<Bool>(false)
    private let tasks: [Task<Void, Never>]

    /// The channel that announces new or sooner jobs.
    static let jobChannel = "herald_jobs"

    /// Connects to the database at `url` (see ``PostgresStoreConfiguration``) and starts the
    /// connection pool and the job-signal listener. Call ``migrate()`` before use and ``close()``
    /// at the end.
    /// - Throws: `HeraldError` when the URL is invalid or its TLS settings cannot be loaded.
    public convenience init(
        url: String, cipher: TokenCipher, logger: Logger = Logger(label: "herald.postgres")
    )
        throws
    {
        try self.init(configuration: PostgresStoreConfiguration(url: url), cipher: cipher, logger: logger)
    }

    /// Connects with explicit settings; see ``init(url:cipher:logger:)``.
    public init(configuration: PostgresStoreConfiguration, cipher: TokenCipher, logger: Logger) throws {
        let client = PostgresClient(
            configuration: try configuration.clientConfiguration(), backgroundLogger: logger)
        self.client = client
        self.cipher = cipher
        self.logger = logger
        self.configuration = configuration
        let signals = self.signals
        // The pool runs for the store's life; `close()` cancels it (PostgresClient's run() is the
        // pool's whole lifetime and returns when its task is cancelled).
        let run = Task { await client.run() }
        let listen = Task { await Self.listen(client: client, signals: signals, logger: logger) }
        self.tasks = [run, listen]
    }

    deinit {
        for task in tasks { task.cancel() }
        signals.finish()
    }

    /// Stops listening, ends every job-signal stream and closes the pool's connections.
    public func close() async {
        closed.store(true, ordering: .relaxed)
        signals.finish()
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
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
        var delay: Duration = .milliseconds(100)
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: jobChannel) { notifications in
                        delay = .milliseconds(100)
                        signals.signal()
                        for try await _ in notifications { signals.signal() }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.debug("Job-signal listener lost its connection", metadata: ["error": "\(error)"])
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

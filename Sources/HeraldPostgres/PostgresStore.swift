import Foundation
import HeraldCore
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle
import Synchronization
import _ConnectionPoolModule

/// The shared store: one PostgreSQL database that any number of Herald nodes use at once, through a
/// pooled `PostgresClient`. Tokens and generated app keys are sealed with the ``TokenCipher``, as on
/// SQLite. Jobs are claimed with `FOR UPDATE SKIP LOCKED`; new work is announced with
/// `NOTIFY herald_jobs`, which every node's store hears on a connection of its own.
///
/// Nothing reaches the database unless the store's connections run (``run()``, a `Service`; each
/// call waits until they do): `herald serve` runs them first in its `ServiceGroup`, so that they
/// outlive every service that uses them; a one-shot command or a test calls ``start()``.
public final class PostgresStore: Store, Service, Sendable {
    let client: PostgresClient
    let cipher: TokenCipher
    let logger: Logger
    let configuration: PostgresStoreConfiguration
    let signals = JobSignalHub()
    /// Opens when the pool runs; leases wait for it.
    let poolStarted = PoolStarted()
    /// What the calls' deadlines and the listener's reconnection back-off are timed by.
    let clock: any Clock<Duration>
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

    /// A store with explicit settings; see ``init(url:cipher:logger:)``. `clock` times the calls'
    /// deadlines and the job-signal listener's reconnections.
    public init(
        configuration: PostgresStoreConfiguration, cipher: TokenCipher, logger: Logger,
        clock: any Clock<Duration> = ContinuousClock()
    ) throws {
        self.client = PostgresClient(configuration: try configuration.clientConfiguration(), backgroundLogger: logger)
        self.cipher = cipher
        self.logger = logger
        self.configuration = configuration
        self.clock = clock
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
        await cancelWhenGracefulShutdown { [client, signals, logger, clock, poolStarted] in
            await Self.runConnections(
                client: client, poolStarted: poolStarted, signals: signals, logger: logger, clock: clock)
        }
        signals.finish()
    }

    /// Runs the connections in a task of their own, for a caller with no task group to run
    /// ``run()`` in: the one task the store leaves running, until ``close()`` (or its release).
    public func start() {
        let (client, poolStarted, signals, logger, clock) = (client, poolStarted, signals, logger, clock)
        background.withLock { task in
            guard task == nil else { return }
            task = Task {
                await Self.runConnections(
                    client: client, poolStarted: poolStarted, signals: signals, logger: logger, clock: clock)
            }
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
    /// job-signal listener, until cancelled. `poolStarted` opens as the pool starts to run.
    private static func runConnections(
        client: PostgresClient, poolStarted: PoolStarted, signals: JobSignalHub, logger: Logger,
        clock: any Clock<Duration>
    ) async {
        await withDiscardingTaskGroup { group in
            group.addTask {
                // Just before: `run()` marks the pool running before it first suspends.
                poolStarted.open()
                await client.run()
            }
            group.addTask {
                await listen(client: client, poolStarted: poolStarted, signals: signals, logger: logger, clock: clock)
            }
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
    private static func listen(
        client: PostgresClient, poolStarted: PoolStarted, signals: JobSignalHub, logger: Logger,
        clock: any Clock<Duration>
    ) async {
        await listen(
            on: jobChannel, client: client, poolStarted: poolStarted, logger: logger, clock: clock,
            name: "Job-signal listener",
            listening: { signals.signal() }, received: { _ in signals.signal() })
    }

    /// Once the pool runs, holds one pooled connection in `LISTEN channel` until the task is cancelled,
    /// handing each notification's payload to `received`; after a failure it reconnects (backing off
    /// from 100 ms to 5 s, on `clock`) and runs `listening` again, as it does each time it starts listening.
    static func listen(
        on channel: String, client: PostgresClient, poolStarted: PoolStarted, logger: Logger,
        clock: any Clock<Duration>, name: String,
        listening: @escaping @Sendable () -> Void = {}, received: @escaping @Sendable (String) -> Void
    ) async {
        guard (try? await poolStarted.wait()) != nil else { return }
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
            try? await clock.sleep(for: delay)
            delay = min(delay * 2, .seconds(5))
        }
    }

    // MARK: Connections and transactions

    /// Runs `body` on one pooled connection outside a transaction, within the call's deadline
    /// (``bounded(unbounded:_:)``) unless it is maintenance that may rightly take long (`unbounded`:
    /// migrations, imports, exports, the clean-up, `VACUUM`).
    func read<Result: Sendable>(
        unbounded: Bool = false, _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await bounded(unbounded: unbounded) { connection in try await body(connection) }
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws (its
    /// error is rethrown as it is); within the call's deadline unless `unbounded`, as ``read(unbounded:_:)``.
    func transaction<Result: Sendable>(
        unbounded: Bool = false, _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await bounded(unbounded: unbounded) { connection in
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

    /// Runs `body` on a pooled connection within ``PostgresStoreConfiguration/callTimeout``
    /// (`postgres.call_timeout_ms`), unless `unbounded`. The deadline covers the wait for a
    /// connection and the statements. Past it, a call still waiting for a connection gives up its
    /// place in the pool's queue (the lease runs in a child task, which the deadline cancels); a call
    /// on a connection has the statement it waits for abandoned (``CallDeadline``) and the connection
    /// closed (the pool replaces it). Either way the call throws `storage_unavailable` (the API's
    /// `503`, a job released to be retried). Why a statement may never answer: docs/reliability.md,
    /// "PostgreSQL ending Herald's sessions".
    private func bounded<Result: Sendable>(
        unbounded: Bool, _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        guard let limit = unbounded ? nil : configuration.callTimeout else {
            return try await onConnection(deadline: nil, body)
        }
        let deadline = CallDeadline(limit: limit)
        return try await withoutActuallyEscaping(body) { body in
            // `withDeadline` awaits the operation before it returns: `body` does not outlive this call.
            let call = CallBody(run: body)
            return try await withDeadline(limit, clock: clock) {
                try await self.onConnection(deadline: deadline, call.run)
            } onDeadline: {
                guard deadline.expire() else { throw deadline.error }
            }
        }
    }

    /// Leases a connection and runs `body` on it, within `deadline` once leased (see ``bounded(unbounded:_:)``).
    private func onConnection<Result: Sendable>(
        deadline: CallDeadline?, _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        do {
            try await poolStarted.wait()
            return try await client.withConnection { connection in
                guard !connection.isClosed else {
                    throw HeraldError.storageUnavailable("the connection to PostgreSQL was lost")
                }
                guard let deadline else { return try await body(connection) }
                guard deadline.leased(connection) else { throw deadline.error }
                defer { deadline.returned() }
                return try await CallDeadline.$current.withValue(deadline) { try await body(connection) }
            }
        } catch {
            guard let deadline, deadline.expired else { throw PostgresConnection.storeError(error) }
            logger.warning(
                "a PostgreSQL call passed its deadline",
                metadata: [
                    "herald.deadline_ms": "\(deadline.limit.milliseconds)",
                    "herald.waited_for": deadline.wasLeased
                        ? "PostgreSQL (its connection was closed)" : "a pooled connection",
                ])
            throw deadline.error
        }
    }
}

/// A store call's body, handed to the child task that leases its connection; the task group that
/// runs it awaits it before the call returns.
private struct CallBody<Result>: @unchecked Sendable {
    let run: (PostgresConnection) async throws -> Result
}

/// The deadline of the store call running in this task (``PostgresStore/bounded(unbounded:_:)``): once
/// it expires, the statement the call waits for is abandoned with `storage_unavailable`, whether or not
/// its promise is ever completed, and the call's connection is closed.
final class CallDeadline: Sendable {
    /// The deadline of the call this task is in; nil outside a bounded call.
    @TaskLocal static var current: CallDeadline?

    private struct State {
        var expired = false
        /// The call's connection, once it has one: the wait for one is over.
        var connection: PostgresConnection?
        /// The call's body returned: its connection goes back to the pool as it is.
        var returned = false
        /// Fails what the call waits for now.
        var abandon: Abandon?
    }

    /// Fails what the call waits for.
    typealias Abandon = @Sendable (any Error) -> Void

    private let state = Mutex(State())
    let error: HeraldError
    /// How long the call may take.
    let limit: Duration

    init(limit: Duration) {
        self.limit = limit
        error = .storageUnavailable("PostgreSQL did not answer within \(limit.milliseconds) ms", .unknown)
    }

    var expired: Bool { state.withLock { $0.expired } }

    /// Whether the call got its connection.
    var wasLeased: Bool { state.withLock { $0.connection != nil } }

    /// The call got `connection`; false when the deadline passed while it waited.
    func leased(_ connection: PostgresConnection) -> Bool {
        state.withLock { state in
            guard !state.expired else { return false }
            state.connection = connection
            return true
        }
    }

    /// The call's body returned (the deadline no longer closes its connection).
    func returned() {
        state.withLock { $0.returned = true }
    }

    /// The deadline passed: what the call waits for fails now, and anything it waits for later at
    /// once; its connection, if it has one, is closed. Whether it had one (false: the call still waits
    /// for a connection, a wait its caller cancels).
    @discardableResult
    func expire() -> Bool {
        let expiry = state.withLock { state -> (leased: Bool, close: PostgresConnection?, abandon: Abandon?) in
            // The body returned: its connection goes back to the pool as it is.
            guard !state.returned else { return (true, nil, nil) }
            state.expired = true
            return (state.connection != nil, state.connection, state.abandon.take())
        }
        expiry.abandon?(error)
        if let connection = expiry.close {
            let _: EventLoopFuture<Void> = connection.close()
        }
        return expiry.leased
    }

    /// `future`'s value, or this deadline's error once it expires.
    func wait<Value: Sendable>(for future: EventLoopFuture<Value>) async throws -> Value {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            let once = ResumeOnce(continuation)
            guard start(abandon: { once.resume(with: .failure($0)) }) else {
                once.resume(with: .failure(error))
                return
            }
            future.whenComplete { result in
                self.finish()
                once.resume(with: result.mapError { $0 })
            }
        }
    }

    /// `operation`'s result, or this deadline's error once it expires (the operation, which may never
    /// end, is then left to itself: for PostgresNIO's async calls, which cannot be abandoned otherwise).
    func wait<Value: Sendable>(for operation: @escaping @Sendable () async throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            let once = ResumeOnce(continuation)
            guard start(abandon: { once.resume(with: .failure($0)) }) else {
                once.resume(with: .failure(error))
                return
            }
            Task {
                let result: Swift.Result<Value, any Error>
                do {
                    result = .success(try await operation())
                } catch {
                    result = .failure(error)
                }
                self.finish()
                once.resume(with: result)
            }
        }
    }

    private func start(abandon: @escaping Abandon) -> Bool {
        state.withLock { state in
            guard !state.expired else { return false }
            state.abandon = abandon
            return true
        }
    }

    private func finish() {
        state.withLock { $0.abandon = nil }
    }
}

extension Duration {
    /// The whole nanoseconds of the duration.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// The whole milliseconds of the duration.
    var milliseconds: Int64 { nanoseconds / 1_000_000 }
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
            guard let deadline = CallDeadline.current else { return try await future.get() }
            return try await deadline.wait(for: future)
        } catch let error as PSQLError {
            throw Self.storeError(error)
        }
    }

    /// What a statement's or a connection's failure is to Herald. PSQLError's description hides
    /// everything; the server's message and SQLSTATE say what went wrong without the statement's
    /// values (which may be secrets). A lost connection, a session the server ended (SQLSTATE class
    /// 57: `pg_terminate_backend`, a shutdown) or one it cannot open (class 08, the pool's failures)
    /// is `storage_unavailable`: the database is not there for now; what a lost or ended session
    /// was committing may have been kept or not (the answer says so), what a refused one asked was not.
    static func storeError(_ error: any Error) -> any Error {
        if error is ConnectionPoolError {
            return HeraldError.storageUnavailable("PostgreSQL cannot be reached")
        }
        guard let error = error as? PSQLError else { return error }
        switch error.code {
        case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown, .poolClosed:
            return HeraldError.storageUnavailable("the connection to PostgreSQL was lost", .unknown)
        default: break
        }
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
        case _ where state.hasPrefix("57") || state.hasPrefix("08"):
            return HeraldError.storageUnavailable("PostgreSQL ended the session (SQLSTATE \(state))", .unknown)
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

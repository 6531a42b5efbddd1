import ArgumentParser
import Configuration
import Foundation
import HeraldAPI
import HeraldCore
import HeraldEngine
import HeraldPostgres
import HeraldSQLite
import HeraldServer
import HeraldWebhooks
import Logging
import NIOPosix
import ServiceLifecycle
import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

/// `herald serve`: runs the gateway until SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the Herald server (the default verb).",
        discussion: """
            With no configuration, Herald keeps its data in ./herald.sqlite, generates the default app's \
            API keys on the first run and prints them once. SIGTERM or SIGINT drains in-flight work and \
            exits.

            Examples:
              herald serve
              herald serve --config /etc/herald/herald.yaml --host 0.0.0.0 --port 8080
              HERALD_DATABASE='postgres://herald@db/herald' HERALD_SECRET_KEY=… herald serve
            """)

    @OptionGroup var common: CommonOptions

    @Option(help: "Address to listen on (default 127.0.0.1).")
    var host: String?

    @Option(help: "Port to listen on (default 8080; 0 picks a free port).")
    var port: Int?

    func run() async throws {
        MallocArenas.limit(environment: ProcessInfo.processInfo.environment)
        var overrides: [AbsoluteConfigKey: ConfigValue] = [:]
        typealias Declared = HeraldConfiguration.Settings
        if let host { overrides[AbsoluteConfigKey(Declared.host.components)] = .init(.string(host), isSecret: false) }
        if let port { overrides[AbsoluteConfigKey(Declared.port.components)] = .init(.int(port), isSecret: false) }
        let configuration = try await common.load(extra: overrides)
        let logger = bootstrapLogging(level: configuration.logLevel, format: configuration.logFormat)
        let metrics = MetricsExport()
        metrics.bootstrap()
        // One SQLite database serves one node: a second `herald serve` on it would take the first's
        // jobs as a dead process's (below). The lock goes with this process, however it ends.
        let nodeLock = try Self.lockSingleNode(configuration.database)
        defer { if let nodeLock { close(nodeLock) } }
        let store = try common.makeStore(configuration, logger: logger, boundedCalls: true)
        try await Self.runNode(on: store, logger: logger) { [overrides] in
            try await CommonOptions.prepare(store)
            try await serve(store, configuration: configuration, overrides: overrides, metrics: metrics, logger: logger)
        }
        logger.info("herald stopped")
    }

    /// Serves until SIGTERM or SIGINT: the API, the workers, the reloader and the checkpointer as
    /// services of a `ServiceGroup`, which stops them in reverse order.
    private func serve(
        _ store: any HeraldStore, configuration: HeraldConfiguration, overrides: [AbsoluteConfigKey: ConfigValue],
        metrics: MetricsExport, logger: Logger
    ) async throws {
        // So a job locked before this process started belongs to a process that is gone. (A shared
        // PostgreSQL database lets such leases expire instead.)
        if let store = store as? SQLiteStore {
            let recovered = try await store.recoverJobs()
            if recovered > 0 {
                logger.notice("resumed jobs of a previous run", metadata: ["herald.jobs": "\(recovered)"])
            }
        }
        let apps = try await AppDirectory(
            configuration: configuration, store: store,
            announce: { keys in
                say(
                    """
                    Herald generated API keys for app '\(keys.appID)'. They are shown this once; \
                    `herald keys show` prints them again.
                    server key: \(keys.serverKey)
                    client key: \(keys.clientKey)
                    publish key: \(keys.publishKey ?? "-")
                    Send one as `Authorization: Bearer <key>`: the hsk_ key has full access (keep it on your \
                    backend), the hck_ key may only register devices (safe to ship in apps), the hpk_ key may only \
                    publish through the ntfy and Gotify APIs (for tools such as Apprise).
                    """)
            })
        if let webhooks = store as? any WebhookStore {
            try await ConfiguredWebhooks.apply(
                configuration.configuredWebhooks, appIDs: apps.appIDs, store: webhooks, now: Date(), logger: logger)
        }
        if let templates = store as? any TemplateStore {
            try await ConfiguredTemplates.apply(
                configuration.configuredTemplates, appIDs: apps.appIDs, store: templates, now: Date(), logger: logger)
        }
        let dispatcher = Dispatcher(
            store: store, transports: try TransportFactory.make(configuration.providers),
            configuration: configuration.engine, logger: logger)
        // The console signs its sessions with a key derived from the master key, so they hold on every node.
        let consoleSecret = try SecretKeyLoader.cipher(for: configuration, logger: logger)
            .derivedKey(info: "herald console session")
        // The requests and the workers run on the event loops when the store works on threads of its own (SQLite);
        // on PostgreSQL, whose connections are on the same loops, they cost more there than on Swift's global
        // executor (docs/performance.md, "Capacities, the event path and PostgreSQL").
        let onLoops = store is SQLiteStore
        let application = try HeraldApplication.make(
            configuration: configuration, store: store, apps: apps, dispatcher: dispatcher, metrics: metrics,
            consoleSecret: consoleSecret, requestsOnConnectionLoop: onLoops, logger: logger
        ) { port in
            logger.info("herald listening", metadata: ["host": "\(configuration.host)", "port": "\(port)"])
            say("Herald is listening on http://\(configuration.host):\(port)")
        }
        let reloader = ConfigurationReloader(
            configuration: configuration, file: common.configFile, store: store, apps: apps, dispatcher: dispatcher,
            logger: logger, load: { [common, overrides] in try await common.load(extra: overrides) })
        var services: [any Service] = [
            application,
            DispatchWorker(
                dispatcher: dispatcher,
                executors: onLoops ? EventLoopTaskExecutor.all(of: MultiThreadedEventLoopGroup.singleton) : []),
            reloader,
        ]
        if let store = store as? SQLiteStore { services.append(SQLiteCheckpointing(store: store)) }
        // Every node delivers the webhook outbox (docs/webhooks.md).
        if let webhooks = store as? any WebhookStore {
            services.append(
                WebhookDeliverer(
                    store: webhooks, sender: WebhookSender(policy: configuration.webhooks),
                    configuration: .init(
                        lease: configuration.webhookLease, maxBacklog: configuration.webhookMaxBacklog),
                    logger: logger))
        }
        // Nested in ``runNode(on:logger:_:)``'s group, whose graceful shutdown (SIGTERM, SIGINT) is its own.
        let group = ServiceGroup(configuration: .init(services: services, logger: logger))
        try await group.run()
        await dispatcher.shutdown()
    }

    /// Runs the node, `body` (its start-up work on the store, then its services in a group nested in
    /// this one), as a service of the one `ServiceGroup` that SIGTERM and SIGINT shut down gracefully;
    /// beside a PostgreSQL store's connections (``PostgresStore/run()``), which the group starts first
    /// and stops last, once the node's services have drained: nothing of the store runs once `serve`
    /// returns. The store's calls wait until its pool runs.
    static func runNode(
        on store: any HeraldStore, logger: Logger, _ body: @escaping @Sendable () async throws -> Void
    ) async throws {
        let connections: [any Service] = (store as? PostgresStore).map { [$0] } ?? []
        let group = ServiceGroup(
            configuration: .init(
                services: connections + [HeraldNode(body: body)], gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        try await group.run()
    }

    /// Takes the SQLite database's node lock (`<path>.serve.lock`, `flock`), or fails when another
    /// `herald serve` holds it. PostgreSQL (several nodes) and in-memory databases take none.
    /// - Returns: The lock's file descriptor, kept open while the server runs.
    static func lockSingleNode(_ database: DatabaseLocation) throws -> Int32? {
        guard case .sqlite(let path) = database, path != ":memory:" else { return nil }
        let descriptor = open(path + ".serve.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ValidationError("Cannot create \(path).serve.lock.") }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw ValidationError(
                "Another herald serve is using \(path): a SQLite database serves one node "
                    + "(several nodes share a PostgreSQL database).")
        }
        return descriptor
    }
}

/// The node's start-up work and its services, as one service after the PostgreSQL store's connections
/// (``Serve/runNode(on:logger:_:)``).
struct HeraldNode: Service {
    let body: @Sendable () async throws -> Void

    func run() async throws {
        try await body()
    }
}

/// Checkpoints the SQLite write-ahead log beside the writer while the server runs (see
/// ``SQLiteStore/checkpointContinuously(every:clock:)``).
struct SQLiteCheckpointing: Service {
    let store: SQLiteStore

    func run() async throws {
        try await cancelWhenGracefulShutdown { try await store.checkpointContinuously() }
    }
}

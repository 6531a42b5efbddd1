import ArgumentParser
import Configuration
import Foundation
import HeraldCore
import HeraldEngine
import HeraldPostgres
import HeraldSQLite
import HeraldServer
import Logging
import ServiceLifecycle
import UnixSignals

/// `herald serve`: runs the gateway until SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the Herald server (the default verb).")

    @OptionGroup var common: CommonOptions

    @Option(help: "Address to listen on (default 127.0.0.1).")
    var host: String?

    @Option(help: "Port to listen on (default 8080; 0 picks a free port).")
    var port: Int?

    func run() async throws {
        var overrides: [AbsoluteConfigKey: ConfigValue] = [:]
        if let host { overrides["server.host"] = .init(.string(host), isSecret: false) }
        if let port { overrides["server.port"] = .init(.int(port), isSecret: false) }
        let configuration = try await common.load(extra: overrides)
        let logger = bootstrapLogging(level: configuration.logLevel)
        let store = try await common.openStore(configuration, logger: logger)
        // One SQLite database serves one node: a job locked before this process started belongs to a
        // process that is gone. (A shared PostgreSQL database lets such leases expire instead.)
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
                    Send one as `Authorization: Bearer <key>`: the hsk_ key has full access (keep it on your \
                    backend), the hck_ key may only register devices (safe to ship in apps).
                    """)
            })
        let dispatcher = Dispatcher(
            store: store, transports: try TransportFactory.make(configuration.providers),
            configuration: configuration.engine, logger: logger)
        let application = HeraldApplication.make(
            configuration: configuration, store: store, apps: apps, dispatcher: dispatcher, logger: logger
        ) { port in
            logger.info("herald listening", metadata: ["host": "\(configuration.host)", "port": "\(port)"])
            say("Herald is listening on http://\(configuration.host):\(port)")
        }
        let group = ServiceGroup(
            configuration: .init(
                services: [application, DispatchWorker(dispatcher: dispatcher)],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        await dispatcher.shutdown()
        // PostgreSQL: the pool and the listening connection close cleanly (SQLite closes with the process).
        if let store = store as? PostgresStore { await store.close() }
        logger.info("herald stopped")
    }
}

import ArgumentParser
import Configuration
import Foundation
import HeraldAPI
import HeraldCore
import HeraldPostgres
import HeraldSQLite
import HeraldServer
import Logging

/// Flags every verb shares; each overrides the configuration file and environment.
struct CommonOptions: ParsableArguments {
    @Option(help: "Configuration file, JSON or YAML (default: $HERALD_CONFIG).")
    var config: String?

    @Option(
        help: """
            Database URL: sqlite:///absolute/path, sqlite://relative/path (default ./herald.sqlite) or \
            postgres://user:password@host:port/database?sslmode=disable|prefer|require|verify-ca|verify-full.
            """)
    var database: String?

    /// The configuration file in use, if any.
    var configFile: String? { config ?? ProcessInfo.processInfo.environment["HERALD_CONFIG"] }

    /// The configuration these flags, the environment and the file make together.
    func load(extra: [AbsoluteConfigKey: ConfigValue] = [:]) async throws -> HeraldConfiguration {
        var overrides = extra
        if let database {
            overrides[AbsoluteConfigKey(HeraldConfiguration.Settings.database.components)] = .init(
                .string(database), isSecret: false)
        }
        return try await HeraldConfiguration.load(
            file: configFile, overrides: overrides)
    }

    /// Opens and migrates the configured store; a PostgreSQL store's connections run in the
    /// background (``PostgresStore/start()``) until the command ends.
    func openStore(
        _ configuration: HeraldConfiguration, logger: Logger,
        writerCacheKiB: Int = SQLiteStore.defaultWriterCacheKiB
    ) async throws -> any HeraldStore {
        let store = try makeStore(configuration, logger: logger, writerCacheKiB: writerCacheKiB)
        guard let postgres = store as? PostgresStore else {
            try await Self.prepare(store)
            return store
        }
        postgres.start()
        do {
            try await Self.prepare(store)
        } catch {
            await postgres.close()
            throw error
        }
        return store
    }

    /// The configured store, not migrated yet (a PostgreSQL store's connections not running yet).
    /// - Parameter boundedCalls: Whether each PostgreSQL call has `postgres.call_timeout_ms` (what
    ///   `serve` answers requests and works jobs with); the commands an operator runs wait as long
    ///   as their calls take (an import's batch of 10,000 registrations can take longer).
    func makeStore(
        _ configuration: HeraldConfiguration, logger: Logger,
        writerCacheKiB: Int = SQLiteStore.defaultWriterCacheKiB, boundedCalls: Bool = false
    ) throws -> any HeraldStore {
        if case .postgres = configuration.database, configuration.secretKey == nil,
            configuration.secretKeyFile == nil
        {
            // Every node must seal and open tokens with one key: a temporary one would lose them.
            throw HeraldError(
                kind: .badRequest, code: "invalid_configuration",
                message: "A PostgreSQL database needs secret_key or secret_key_file, the same on every node.",
                field: "secret_key")
        }
        let cipher = try SecretKeyLoader.cipher(for: configuration, logger: logger)
        switch configuration.database {
        case .postgres(let url):
            var settings = try PostgresStoreConfiguration(url: url)
            settings.callTimeout = boundedCalls ? configuration.postgresCallTimeout : nil
            return try PostgresStore(configuration: settings, cipher: cipher, logger: logger)
        case .sqlite(let path):
            return try SQLiteStore(
                path: path, cipher: cipher, writerCacheKiB: writerCacheKiB,
                syncsAccepted: configuration.sqliteSyncsAccepted, syncInterval: configuration.sqliteSyncInterval)
        }
    }

    /// Migrates a store and checks that it shares this process's master key.
    static func prepare(_ store: any HeraldStore) async throws {
        try await store.migrate()
        try await checkMasterKey(store)
    }

    /// The record that proves a database and this process share the master key: written sealed the
    /// first time, opened every time after. A node (or a verb) with another key stops here, before
    /// it writes a token no other node could read.
    static let keyCheckAppID = "herald.key-check"

    /// Fails when the store's tokens were sealed under another master key.
    static func checkMasterKey(_ store: any InstallationRegistry) async throws {
        do {
            _ = try await store.insertAppKeys(
                AppKeys(appID: keyCheckAppID, serverKey: "key-check", clientKey: "key-check"))
        } catch let error as HeraldError where error.code == "secret_key_mismatch" {
            throw ValidationError(
                "This database's secrets were sealed with another master key (secret_key / secret_key_file): "
                    + "every node and verb using it needs the same key.")
        }
    }
}

/// Sets up swift-log once: lines on standard error at the configured level, as text or JSON.
func bootstrapLogging(level: Logger.Level, format: LogFormat = .text) -> Logger {
    LoggingSystem.bootstrap { label in HeraldLogHandler(label: label, format: format, level: level) }
    var logger = Logger(label: "herald")
    logger.logLevel = level
    return logger
}

/// Writes a line to standard output at once (unbuffered, so a supervising process sees it).
func say(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

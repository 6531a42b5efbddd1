import Configuration
import Foundation
import HeraldAPI
import HeraldCore
import HeraldEngine
import HeraldWebhooks
import Logging

/// Everything `herald serve` reads at start-up.
///
/// Sources, highest priority first: command-line flags, `HERALD_*` environment variables (the key
/// upper-cased, dots and dashes as underscores, prefixed with `HERALD_`), the optional JSON or YAML
/// config file, and the defaults below.
public struct HeraldConfiguration: Sendable {
    /// Listening address.
    public var host: String
    /// Listening port.
    public var port: Int
    /// Where the data lives.
    public var database: DatabaseLocation
    /// The master key for secrets at rest (base64, 32 bytes), when given in configuration.
    public var secretKey: String?
    /// Where the generated master key is kept when `secret_key` is not set.
    public var secretKeyFile: String?
    /// Minimum log level.
    public var logLevel: Logger.Level
    /// How log lines are written.
    public var logFormat: LogFormat
    /// Whether `/metrics` is served.
    public var metricsEnabled: Bool
    /// The bearer token `/metrics` asks for; nil leaves it open (bind it to a private address).
    public var metricsToken: String?
    /// Whether an SQLite database answers what Herald accepts only once it is on disk
    /// (`sqlite.synchronous: full`) or once it is in the write-ahead log (`normal`).
    public var sqliteSyncsAccepted: Bool
    /// The least time between two syncs of SQLite's write-ahead log by its writer (`sqlite.sync_interval_ms`).
    public var sqliteSyncInterval: Duration
    /// How long one PostgreSQL store call may take before it fails as `storage_unavailable`
    /// (`postgres.call_timeout_ms`).
    public var postgresCallTimeout: Duration
    /// Largest request body accepted, in bytes.
    public var maxBodyBytes: Int
    /// The HTTP server's read timeouts and header limits.
    public var http: HTTPLimits
    /// Configured apps; empty means the one generated app, `default`.
    public var apps: [AppConfiguration]
    /// Registrations a minute through a client key (per client address) or a user token (per user),
    /// by app id (`app.<id>.registrations_per_minute`); an app not listed, or 0, has no limit.
    public var registrationsPerMinute: [String: Int]
    /// User-token settings for the generated `default` app (used only when `apps` is empty).
    public var defaultAppUserTokens: UserTokenConfiguration
    /// Push providers per app id.
    public var providers: [String: ProviderConfiguration]
    /// The dispatch engine's settings.
    public var engine: EngineConfiguration
    /// ArgusAI dialect settings per app id (an app without an entry uses the defaults).
    /// Every dialect's per-app settings.
    public var dialects: DialectSettings
    /// The web console's settings.
    public var console: ConsoleConfiguration
    /// Where webhook requests may go (`webhooks.allow_http`, `webhooks.allow_networks`).
    public var webhooks: WebhookNetworkPolicy
    /// The most events one webhook endpoint may have waiting (`webhooks.max_backlog`).
    public var webhookMaxBacklog: Int = 100_000
    /// How long a node holds the webhook events it claimed (`webhooks.lease_seconds`).
    public var webhookLease: Duration = .seconds(300)
    /// The webhook endpoints of every app kept in the configuration (`app.<id>.webhooks`).
    public var configuredWebhooks: [ConfiguredWebhook] = []
    /// The templates kept in the configuration (`app.<id>.templates`), of every app.
    public var configuredTemplates: [ConfiguredTemplate] = []

    /// Creates a configuration; every parameter has the documented default.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, database: DatabaseLocation = .sqlite(path: "./herald.sqlite"),
        secretKey: String? = nil, secretKeyFile: String? = nil, logLevel: Logger.Level = .info,
        logFormat: LogFormat = .text, metricsEnabled: Bool = true, metricsToken: String? = nil,
        sqliteSyncsAccepted: Bool = true, sqliteSyncInterval: Duration = .milliseconds(2),
        postgresCallTimeout: Duration = .seconds(10),
        maxBodyBytes: Int = 64 * 1024, http: HTTPLimits = .init(),
        apps: [AppConfiguration] = [],
        registrationsPerMinute: [String: Int] = [:],
        defaultAppUserTokens: UserTokenConfiguration = .init(), providers: [String: ProviderConfiguration] = [:],
        engine: EngineConfiguration = .init(), dialects: DialectSettings = .init(),
        console: ConsoleConfiguration = .init(), webhooks: WebhookNetworkPolicy = .init()
    ) {
        self.host = host
        self.port = port
        self.database = database
        self.secretKey = secretKey
        self.secretKeyFile = secretKeyFile
        self.logLevel = logLevel
        self.logFormat = logFormat
        self.metricsEnabled = metricsEnabled
        self.metricsToken = metricsToken
        self.sqliteSyncsAccepted = sqliteSyncsAccepted
        self.sqliteSyncInterval = sqliteSyncInterval
        self.postgresCallTimeout = postgresCallTimeout
        self.maxBodyBytes = maxBodyBytes
        self.http = http
        self.apps = apps
        self.registrationsPerMinute = registrationsPerMinute
        self.defaultAppUserTokens = defaultAppUserTokens
        self.providers = providers
        self.engine = engine
        self.dialects = dialects
        self.console = console
        self.webhooks = webhooks
    }

    /// Reads the configuration: the settings ``Settings`` declares and those of every part
    /// (``HTTPLimits``, ``AppConfiguration``, ``ProviderConfiguration``, the engine, the dialects,
    /// the console); ``SettingsCatalog`` lists them all, and `docs/configuration.md` is made from it.
    /// - Throws: `HeraldError` with code `invalid_configuration` naming the key at fault.
    public init(reader: ConfigReader) throws {
        host = try reader.value(Settings.host)
        port = try reader.value(Settings.port)
        database = try DatabaseLocation(url: reader.value(Settings.database))
        sqliteSyncsAccepted = try reader.value(Settings.sqliteSynchronous) == "full"
        sqliteSyncInterval = .milliseconds(try reader.value(Settings.sqliteSyncInterval))
        postgresCallTimeout = .milliseconds(try reader.value(Settings.postgresCallTimeout))
        secretKey = try reader.value(Settings.secretKey)
        secretKeyFile = try reader.value(Settings.secretKeyFile)
        logLevel = try reader.value(Settings.logLevel)
        logFormat = try reader.value(Settings.logFormat)
        metricsEnabled = try reader.value(Settings.metricsEnabled)
        metricsToken = try reader.value(Settings.metricsToken)
        maxBodyBytes = try reader.value(Settings.maxBodyBytes)
        http = try HTTPLimits(reader: reader)
        var allowed: [IPNetwork] = []
        for entry in reader.value(Settings.webhooksAllowNetworks) {
            do {
                allowed.append(try IPNetwork(entry))
            } catch {
                throw HeraldError.invalidConfiguration(Settings.webhooksAllowNetworks.key, "lists \(error.message)")
            }
        }
        webhooks = WebhookNetworkPolicy(allowHTTP: try reader.value(Settings.webhooksAllowHTTP), allowNetworks: allowed)
        webhookMaxBacklog = try reader.value(Settings.webhooksMaxBacklog)
        webhookLease = .seconds(try reader.value(Settings.webhooksLeaseSeconds))
        let ids = reader.value(Settings.apps)
        var apps: [AppConfiguration] = []
        for id in ids {
            guard AppConfiguration.isValidID(id), !apps.contains(where: { $0.id == id }) else {
                throw HeraldError.invalidConfiguration(
                    Settings.apps.key, "'\(id)' is not a unique app id of [a-z0-9_-]{1,64}")
            }
            apps.append(try AppConfiguration(id: id, reader: reader))
        }
        self.apps = apps
        defaultAppUserTokens = try UserTokenConfiguration(appID: AppConfiguration.defaultID, reader: reader)
        defaultAppUserTokens.introspection = try IntrospectionConfiguration(
            appID: AppConfiguration.defaultID, reader: reader)
        let appIDs = ids.isEmpty ? [AppConfiguration.defaultID] : ids
        var registrationsPerMinute: [String: Int] = [:]
        for id in appIDs {
            let limit = try reader.value(Settings.registrationsPerMinute, app: id)
            if limit > 0 { registrationsPerMinute[id] = limit }
        }
        self.registrationsPerMinute = registrationsPerMinute
        configuredWebhooks = try appIDs.flatMap { try ConfiguredWebhook.read(appID: $0, reader: reader) }
        configuredTemplates = try appIDs.flatMap { try ConfiguredTemplate.read(appID: $0, reader: reader) }
        for endpoint in configuredWebhooks {
            do {
                _ = try webhooks.check(url: endpoint.url)
            } catch {
                throw HeraldError.invalidConfiguration(
                    AppConfiguration.WebhookSettings.url.named(endpoint.id).key(app: endpoint.appID), error.message)
            }
        }
        var providers: [String: ProviderConfiguration] = [:]
        for id in appIDs {
            providers[id] = try ProviderConfiguration(appID: id, reader: reader)
        }
        self.providers = providers
        engine = try EngineConfiguration(reader: reader, deliveryLog: providers.mapValues(\.deliveryLog))
        engine.rejectedTokens = providers.mapValues(\.rejectedTokens).filter { $0.value != .invalidate }
        engine.liveActivityHighPriorityPerHour = providers.mapValues(\.liveActivityHighPriorityPerHour)
        dialects = try DialectSettings(reader: reader, appIDs: appIDs, dialects: HeraldApplication.dialects)
        engine.cleanupPolicies = try Self.lifecyclePolicies(
            reader: reader, appIDs: appIDs, base: engine.cleanupPolicy, dialects: dialects)
        console = try ConsoleConfiguration(reader: reader)
    }

    /// The file the generated master key is kept in.
    public var resolvedSecretKeyFile: String? {
        if let secretKeyFile { return secretKeyFile }
        if case .sqlite(let path) = database, path != ":memory:" { return path + ".key" }
        return nil
    }
}

extension HeraldConfiguration {
    /// The server-wide settings ``HeraldConfiguration/init(reader:)`` reads itself.
    public enum Settings {
        public static let host = Setting<String>(
            "server.host", .text, default: "127.0.0.1", "The address Herald listens on.")
        public static let port = Setting<Int>(
            "server.port", 0...65535, default: 8080, "The port Herald listens on (`0`: any free port).")
        public static let database = Setting<String>(
            "database", .other("URL or path"), default: "./herald.sqlite",
            """
            Where the data lives: `sqlite:///absolute/path`, `sqlite://relative/path`, a plain path, or \
            `postgres://user:password@host:port/database?sslmode=disable|prefer|require|verify-ca|verify-full\
            &sslrootcert=/path/ca.pem&pool_size=20` (`pool_size`: the most pooled connections of one node, 1 to 500, \
            default 20). Several nodes may share one PostgreSQL database; it needs `secret_key` or `secret_key_file`, \
            the same on every node.
            """)
        public static let sqliteSynchronous = Setting<String>(
            "sqlite.synchronous", .choice(["full", "normal"]), default: "full",
            """
            SQLite: `full` answers what Herald accepts (registrations, sends, events, changes) only once it is on \
            disk, so a power loss or kernel crash cannot roll it back; `normal` answers once it is in the \
            write-ahead log (it survives a `kill -9` or a crash of Herald, not a power loss).
            """)
        public static let sqliteSyncInterval = Setting<Int>(
            "sqlite.sync_interval_ms", 0...100, unit: "milliseconds", default: 2,
            """
            SQLite with `synchronous: full`: the least time between two syncs of the write-ahead log by the writer. \
            What Herald accepts less than this after the last sync waits for the rest of it, and is then committed \
            and synced with whatever came meanwhile: under load one sync serves several writes (each sync costs CPU \
            and a trip to the disk), at the price of at most this much more before the answer. Writes further apart \
            wait for nothing. `0` syncs each commit at once.
            """)
        public static let postgresCallTimeout = Setting<Int>(
            "postgres.call_timeout_ms", 100...600_000, unit: "milliseconds", default: 10_000,
            """
            PostgreSQL: how long one store call of `herald serve` (a statement, or a transaction) may take, the wait \
            for a pooled connection included. Past it a call still waiting for a connection leaves the pool's queue, \
            and a call on a connection has that connection closed (the pool opens another); the call fails: the API \
            answers `503 storage_unavailable`, a job is released and retried. A session the server ended \
            (`pg_terminate_backend`, a fail-over, a proxy restart) can otherwise leave a statement waiting for an \
            answer that never comes, and a server restarting or a pool whose connections are all busy a call \
            waiting for a connection. Maintenance is not bounded: migrations, the clean-up job, and the commands an \
            operator runs (`import`, `export`, `cleanup`, `keys`, `migrate`).
            """)
        public static let secretKey = Setting<String?>(
            "secret_key", .other("base64, 32 bytes"), secret: true,
            defaultText: "none: generated and kept in `secret_key_file`",
            "The master key for tokens and keys at rest (`openssl rand -base64 32`).")
        public static let secretKeyFile = Setting<String?>(
            "secret_key_file", .path, defaultText: "database path + `.key`",
            """
            Where the generated master key is kept when `secret_key` is not set (written mode 600). An in-memory \
            SQLite database or PostgreSQL has no default: without either setting, PostgreSQL refuses to start \
            and in-memory SQLite uses a temporary key.
            """)
        public static let logLevel = Setting<Logger.Level>(
            "log.level", choices: Logger.Level.allCases, default: .info, "The lowest level of log lines written.")
        public static let logFormat = Setting<LogFormat>(
            "log.format", choices: [.text, .json], default: .text,
            """
            How log lines are written to standard error: `text` for people, `json` one JSON object per line \
            (`ts`, `level`, `logger`, `msg`, `request_id`, metadata).
            """)
        public static let metricsEnabled = Setting<Bool>(
            "metrics.enabled", default: true, "Whether Prometheus metrics are served at `GET /metrics`.")
        public static let metricsToken = Setting<String?>(
            "metrics.token", .string(minimumLength: 16), secret: true, defaultText: "none (`/metrics` is open)",
            """
            When set, `/metrics` needs `Authorization: Bearer <token>`; unset, it is open (bind Herald to a private \
            address or set one).
            """)
        public static let webhooksAllowHTTP = Setting<Bool>(
            "webhooks.allow_http", default: false,
            """
            Whether webhook endpoints may have `http` URLs. Off, only `https` is accepted: an event's signature proves \
            who sent it, not that nobody read it on the way.
            """)
        public static let webhooksMaxBacklog = Setting<Int>(
            "webhooks.max_backlog", 1...100_000_000, unit: "events", default: 100_000,
            """
            The most events one webhook endpoint may have waiting (a receiver down for days while broadcasts go \
            out). Past it the oldest are dropped, with a warning and `herald_webhook_events_dropped_total`: the \
            outbox cannot fill the disk for a receiver that is gone.
            """)
        public static let webhooksLeaseSeconds = Setting<Int>(
            "webhooks.lease_seconds", 30...3600, unit: "seconds", default: 300,
            """
            How long a node holds the webhook events it claimed: a node that dies mid-delivery leaves them to \
            another once this has passed. A node does not start an attempt that could outlast its hold (each \
            takes at most 25 s: 5 to resolve the name, 5 to connect, 15 for the answer), so no two nodes attempt \
            one event at once.
            """)
        public static let webhooksAllowNetworks = Setting<[String]>(
            "webhooks.allow_networks", .stringArray, defaultText: "none",
            """
            Networks (addresses or CIDR blocks, IPv4 or IPv6: `["10.1.0.0/16", "fd00:1::/64"]`) webhook requests may \
            reach although they are private, loopback, link-local, unique-local, shared or otherwise local. \
            Unlisted, an endpoint whose URL leads there (by its literal address or by any address its name \
            resolves to) is refused, so the API cannot be used to reach services inside Herald's network \
            (docs/webhooks.md, "Safety").
            """)
        public static let maxBodyBytes = Setting<Int>(
            "http.max_body_bytes", 1024...Int.max, unit: "bytes", default: 64 * 1024,
            "Larger request bodies are refused with `413`.")
        public static let apps = Setting<[String]>(
            "apps", .stringArray, defaultText: "empty: one generated app, `default`",
            """
            The app ids (`[a-z0-9_-]{1,64}`, each once). Empty means one generated app, `default`, whose API keys are \
            generated on the first run and printed once.
            """)
        public static let registrationsPerMinute = Setting<Int>(
            "app.<id>.registrations_per_minute", 0...100_000, default: 0, defaultText: "`0` (no limit)",
            """
            Registrations a minute through the client key or a LeanCloud app key (per client address) and through \
            a user token (per user, native and AOVIS routes alike); past it `429 rate_limited` with `Retry-After`. \
            Kept in the database: every node counts the same. Server keys and SNS API keys are not limited \
            (ArgusAI's route has its own `argus.register_rate_limit`).
            """)
    }
}

/// Where Herald's database is.
public enum DatabaseLocation: Sendable, Equatable {
    /// An embedded SQLite file.
    case sqlite(path: String)
    /// A PostgreSQL database that several nodes may share:
    /// `postgres://user:password@host:port/database?sslmode=…&sslrootcert=…`.
    case postgres(url: String)

    /// Parses `sqlite:///absolute/path`, `sqlite://relative/path`, `sqlite:path` or a plain file
    /// path, or a `postgres://` / `postgresql://` URL.
    /// - Throws: `HeraldError` with code `invalid_configuration` for other schemes.
    public init(url: String) throws(HeraldError) {
        if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
            self = .postgres(url: url)
            return
        }
        if url.hasPrefix("sqlite://") {
            self = .sqlite(path: String(url.dropFirst("sqlite://".count)))
        } else if url.hasPrefix("sqlite:") {
            self = .sqlite(path: String(url.dropFirst("sqlite:".count)))
        } else if url.contains("://") {
            throw HeraldError.invalidConfiguration("database", "has an unsupported scheme (sqlite or postgres)")
        } else {
            self = .sqlite(path: url)
        }
        if case .sqlite(let path) = self, path.isEmpty {
            throw HeraldError.invalidConfiguration("database", "has no file path")
        }
    }
}

extension HeraldConfiguration: CustomStringConvertible, CustomReflectable {
    /// Where Herald listens and what it serves, without a key or secret: safe to log.
    public var description: String {
        "HeraldConfiguration(host: \(host), port: \(port), apps: \(apps.map(\.id)))"
    }

    /// Hides the secrets from `dump` and debuggers' default rendering too.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}

extension AppConfiguration: CustomStringConvertible, CustomReflectable {
    /// The app's id only: everything else of it is keys and secrets.
    public var description: String { "AppConfiguration(id: \(id))" }

    public var customMirror: Mirror { Mirror(self, children: ["id": id]) }
}

import Configuration
import Foundation
import HeraldCore
import HeraldEngine
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

    /// Creates a configuration; every parameter has the documented default.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, database: DatabaseLocation = .sqlite(path: "./herald.sqlite"),
        secretKey: String? = nil, secretKeyFile: String? = nil, logLevel: Logger.Level = .info,
        logFormat: LogFormat = .text, metricsEnabled: Bool = true, metricsToken: String? = nil,
        sqliteSyncsAccepted: Bool = true, maxBodyBytes: Int = 64 * 1024, http: HTTPLimits = .init(),
        apps: [AppConfiguration] = [],
        registrationsPerMinute: [String: Int] = [:],
        defaultAppUserTokens: UserTokenConfiguration = .init(), providers: [String: ProviderConfiguration] = [:],
        engine: EngineConfiguration = .init(), dialects: DialectSettings = .init(),
        console: ConsoleConfiguration = .init()
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
        self.maxBodyBytes = maxBodyBytes
        self.http = http
        self.apps = apps
        self.registrationsPerMinute = registrationsPerMinute
        self.defaultAppUserTokens = defaultAppUserTokens
        self.providers = providers
        self.engine = engine
        self.dialects = dialects
        self.console = console
    }

    /// Reads the configuration.
    ///
    /// Keys (type, default):
    /// - `server.host` (string, `127.0.0.1`), `server.port` (int, `8080`)
    /// - `database` (URL: `sqlite:///absolute/path`, `sqlite://relative/path`, a plain path, or
    ///   `postgres://user:password@host:port/database?sslmode=…`; `./herald.sqlite`)
    /// - `secret_key` (base64 of 32 bytes, secret; none: generated and kept in `secret_key_file`)
    /// - `secret_key_file` (path; the database path with `.key` appended)
    /// - `log.level` (`trace debug info notice warning error critical`; `info`)
    /// - `log.format` (`text` or `json`: one JSON object per line; `text`)
    /// - `metrics.enabled` (bool, `true`), `metrics.token` (string, secret; none: `/metrics` is open)
    /// - `sqlite.synchronous` (`full` or `normal`, `full`): answer an accepted write once it is on
    ///   disk, or once it is in SQLite's write-ahead log
    /// - `http.max_body_bytes` (int, `65536`); the other `http.*` keys: see ``HTTPLimits/init(reader:)``.
    /// - `apps` (string array of app ids; empty: one generated app, `default`)
    /// - `app.<id>.server_key`, `app.<id>.client_key` (strings, secret; required for each listed app)
    /// - `app.<id>.registrations_per_minute` (int 0–100000, `0`: no limit): registrations through the
    ///   client key per client address, and through a user token per user
    /// - `app.<id>.jwt.*`: see ``UserTokenConfiguration/init(reader:)``.
    /// - `app.<id>.apns.*`, `app.<id>.fcm.*`, `app.<id>.delivery_log`: see ``ProviderConfiguration/init(appID:reader:)``.
    /// - `engine.*`: see ``HeraldEngine/EngineConfiguration/init(reader:deliveryLog:)``.
    /// - `app.<id>.lifecycle.*`: the app's own clean-up rules, the keys of `engine.cleanup.*` but
    ///   `interval_hours`, each defaulting to the engine's (LeanCloud's lifecycle for an app with
    ///   `leancloud` configured): see ``lifecyclePolicies(reader:appIDs:base:dialects:)``.
    /// - `app.<id>.<dialect>.*`: each dialect's settings (``Dialect/settings(appID:reader:)``):
    ///   `argus` (``ArgusAIConfiguration/init(appID:reader:)``), `aovis` (``AOVISConfiguration/init(appID:reader:)``).
    /// - `console.*`: see ``ConsoleConfiguration/init(reader:)``.
    /// - Throws: `HeraldError` with code `invalid_configuration` naming the key at fault.
    public init(reader: ConfigReader) throws {
        host = reader.string(forKey: "server.host", default: "127.0.0.1")
        port = try Self.integer(reader, "server.port", default: 8080)
        guard (0...65535).contains(port) else { throw Self.invalid("server.port", "must be 0 to 65535") }
        database = try DatabaseLocation(url: reader.string(forKey: "database", default: "./herald.sqlite"))
        switch reader.string(forKey: "sqlite.synchronous", default: "full") {
        case "full": sqliteSyncsAccepted = true
        case "normal": sqliteSyncsAccepted = false
        default: throw Self.invalid("sqlite.synchronous", "must be full or normal")
        }
        secretKey = reader.string(forKey: "secret_key", isSecret: true)
        secretKeyFile = reader.string(forKey: "secret_key_file")
        let level = reader.string(forKey: "log.level", default: "info")
        guard let logLevel = Logger.Level(rawValue: level) else {
            throw Self.invalid("log.level", "must be one of trace, debug, info, notice, warning, error, critical")
        }
        self.logLevel = logLevel
        let format = reader.string(forKey: "log.format", default: "text")
        guard let logFormat = LogFormat(rawValue: format) else {
            throw Self.invalid("log.format", "must be text or json")
        }
        self.logFormat = logFormat
        metricsEnabled = try Self.boolean(reader, "metrics.enabled", default: true)
        metricsToken = reader.string(forKey: "metrics.token", isSecret: true)
        if let metricsToken, metricsToken.count < 16 {
            throw Self.invalid("metrics.token", "must be at least 16 characters")
        }
        maxBodyBytes = try Self.integer(reader, "http.max_body_bytes", default: 64 * 1024)
        guard maxBodyBytes >= 1024 else { throw Self.invalid("http.max_body_bytes", "must be at least 1024") }
        http = try HTTPLimits(reader: reader)
        let ids = reader.stringArray(forKey: "apps", default: [])
        var apps: [AppConfiguration] = []
        for id in ids {
            guard AppConfiguration.isValidID(id), !apps.contains(where: { $0.id == id }) else {
                throw Self.invalid("apps", "'\(id)' is not a unique app id of [a-z0-9_-]{1,64}")
            }
            apps.append(try AppConfiguration(id: id, reader: reader.scoped(to: ConfigKey(["app", id]))))
        }
        self.apps = apps
        defaultAppUserTokens = try UserTokenConfiguration(
            reader: reader.scoped(to: ConfigKey(["app", AppConfiguration.defaultID, "jwt"])))
        defaultAppUserTokens.introspection = try IntrospectionConfiguration(
            reader: reader.scoped(to: ConfigKey(["app", AppConfiguration.defaultID, "introspection"])),
            key: "app.\(AppConfiguration.defaultID).introspection")
        let appIDs = ids.isEmpty ? [AppConfiguration.defaultID] : ids
        var registrationsPerMinute: [String: Int] = [:]
        for id in appIDs {
            let key = "app.\(id).registrations_per_minute"
            let limit = try Self.integer(reader, key, default: 0)
            guard (0...100_000).contains(limit) else { throw Self.invalid(key, "must be 0 to 100000") }
            if limit > 0 { registrationsPerMinute[id] = limit }
        }
        self.registrationsPerMinute = registrationsPerMinute
        var providers: [String: ProviderConfiguration] = [:]
        for id in appIDs {
            providers[id] = try ProviderConfiguration(appID: id, reader: reader.scoped(to: ConfigKey(["app", id])))
        }
        self.providers = providers
        engine = try EngineConfiguration(reader: reader, deliveryLog: providers.mapValues(\.deliveryLog))
        dialects = try DialectSettings(reader: reader, appIDs: appIDs)
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

    /// An integer setting; a value that is present but not an integer is an error, not the default.
    /// `key` names the setting in errors when `name` is relative to a scoped reader.
    static func integer(_ reader: ConfigReader, _ name: String, default value: Int, key: String? = nil) throws -> Int {
        if let number = reader.int(forKey: ConfigKey(name)) { return number }
        if let text = reader.string(forKey: ConfigKey(name)) {
            // Environment variables arrive as strings.
            guard let number = Int(text) else { throw invalid(key ?? name, "must be an integer") }
            return number
        }
        return value
    }

    /// A boolean setting (`true`/`false`, or `1`/`0`/`yes`/`no` as environment strings); a value
    /// that is present but none of those is an error, not the default.
    static func boolean(_ reader: ConfigReader, _ name: String, default value: Bool, key: String? = nil) throws -> Bool
    {
        if let flag = reader.bool(forKey: ConfigKey(name)) { return flag }
        guard let text = reader.string(forKey: ConfigKey(name)) else { return value }
        switch text.lowercased() {
        case "true", "1", "yes": return true
        case "false", "0", "no": return false
        default: throw invalid(key ?? name, "must be true or false")
        }
    }

    static func invalid(_ key: String, _ problem: String) -> HeraldError {
        HeraldError(
            kind: .badRequest, code: "invalid_configuration", message: "Configuration key '\(key)' \(problem).",
            field: key)
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
            throw HeraldConfiguration.invalid("database", "has an unsupported scheme (sqlite or postgres)")
        } else {
            self = .sqlite(path: url)
        }
        if case .sqlite(let path) = self, path.isEmpty {
            throw HeraldConfiguration.invalid("database", "has no file path")
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

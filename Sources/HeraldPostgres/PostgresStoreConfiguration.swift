import Foundation
import HeraldCore
import NIOSSL
import PostgresNIO

/// Where and how the PostgreSQL store connects, read from a libpq-style URL:
/// `postgres://user:password@host:port/database?sslmode=disable|prefer|require|verify-ca|verify-full&sslrootcert=PATH&pool_size=N`
/// (`pool_size`, Herald's own: the most pooled connections of one node, 1 to 500, default 20).
public struct PostgresStoreConfiguration: Sendable, Equatable {
    /// How the connection is encrypted, with libpq's meanings.
    public enum SSLMode: String, Sendable, Equatable {
        /// Plain TCP.
        case disable
        /// TLS when the server offers it, unverified; plain otherwise (libpq's default).
        case prefer
        /// TLS, the server's certificate not verified.
        case require
        /// TLS, the certificate verified against the trust roots, not the host name.
        case verifyCA = "verify-ca"
        /// TLS, the certificate and the host name verified.
        case verifyFull = "verify-full"
    }

    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    public var sslMode: SSLMode
    /// A PEM file of trust roots (`sslrootcert`); nil: the system's.
    public var sslRootCertificate: String?
    /// The most pooled connections this node opens.
    public var maximumConnections: Int
    /// How long one store call (a statement, or a whole transaction) may take before its connection is
    /// closed and the call fails as `storage_unavailable` (`postgres.call_timeout_ms`); nil: as
    /// long as it takes (the commands an operator runs, such as `herald import`).
    public var callTimeout: Duration? = .seconds(10)

    /// Reads a `postgres://` (or `postgresql://`) URL.
    /// - Throws: `HeraldError` (`invalid_database_url`) when the URL is not one.
    public init(url text: String, maximumConnections: Int = 20) throws {
        guard let components = URLComponents(string: text),
            let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql"
        else {
            throw Self.invalid("The database URL must start with postgres:// or postgresql://.")
        }
        guard let host = components.host, !host.isEmpty else {
            throw Self.invalid("The database URL has no host.")
        }
        self.host = host
        self.port = components.port ?? 5432
        self.username = components.user.flatMap { $0.removingPercentEncoding } ?? "postgres"
        self.password = components.password.flatMap { $0.removingPercentEncoding }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        self.database = path.isEmpty ? self.username : (path.removingPercentEncoding ?? path)
        var mode = SSLMode.prefer
        var root: String?
        var poolSize = maximumConnections
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let value = item.value, let parsed = SSLMode(rawValue: value) else {
                    throw Self.invalid("sslmode must be disable, prefer, require, verify-ca or verify-full.")
                }
                mode = parsed
            case "sslrootcert":
                root = item.value
            case "pool_size":
                guard let value = item.value.flatMap(Int.init), (1...500).contains(value) else {
                    throw Self.invalid("pool_size must be an integer from 1 to 500.")
                }
                poolSize = value
            default:
                throw Self.invalid("The database URL has an unknown parameter \(item.name).")
            }
        }
        self.sslMode = mode
        self.sslRootCertificate = root
        self.maximumConnections = poolSize
    }

    /// Whether `text` names a PostgreSQL database rather than a file.
    public static func isPostgresURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// The URL with the password masked, for logs and errors.
    public var redacted: String {
        let credentials = password == nil ? username : "\(username):***"
        return "postgres://\(credentials)@\(host):\(port)/\(database)?sslmode=\(sslMode.rawValue)"
    }

    /// The client's settings.
    func clientConfiguration() throws -> PostgresClient.Configuration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let root = sslRootCertificate {
            tls.trustRoots = .file(root)
        }
        let mode: PostgresClient.Configuration.TLS
        switch sslMode {
        case .disable:
            mode = .disable
        case .prefer:
            tls.certificateVerification = .none
            mode = .prefer(tls)
        case .require:
            tls.certificateVerification = .none
            mode = .require(tls)
        case .verifyCA:
            tls.certificateVerification = .noHostnameVerification
            mode = .require(tls)
        case .verifyFull:
            tls.certificateVerification = .fullVerification
            mode = .require(tls)
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: mode)
        configuration.options.maximumConnections = maximumConnections
        // Herald's prepared statements (PreparedStatements.swift) are planned once per connection:
        // with custom plans PostgreSQL would plan them on every execution, as unnamed ones, and
        // planning costs more than running them.
        configuration.options.additionalStartupParameters = [("plan_cache_mode", "force_generic_plan")]
        return configuration
    }

    private static func invalid(_ message: String) -> HeraldError {
        HeraldError(kind: .badRequest, code: "invalid_database_url", message: message, field: "database")
    }
}

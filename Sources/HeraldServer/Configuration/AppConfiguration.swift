import Configuration
import Foundation
import HeraldCore

/// One app served by Herald: its id, API keys and how its users' tokens are verified.
public struct AppConfiguration: Sendable {
    /// The app used when none is configured.
    public static let defaultID = "default"

    public var id: String
    /// Full-access key; nil for the generated default app until its keys are loaded.
    public var serverKey: String
    /// Registration-only key.
    public var clientKey: String
    /// How this app's user JWTs are verified.
    public var userTokens: UserTokenConfiguration

    /// Creates an app configuration.
    public init(id: String, serverKey: String, clientKey: String, userTokens: UserTokenConfiguration = .init()) {
        self.id = id
        self.serverKey = serverKey
        self.clientKey = clientKey
        self.userTokens = userTokens
    }

    /// Reads `server_key`, `client_key` and `jwt.*` under `app.<id>`.
    /// - Throws: `HeraldError` with code `invalid_configuration` when a key is missing or too short.
    public init(id: String, reader: ConfigReader) throws {
        self.id = id
        func key(_ name: String) throws -> String {
            guard let value = reader.string(forKey: ConfigKey(name), isSecret: true), value.count >= 16 else {
                throw HeraldConfiguration.invalid("app.\(id).\(name)", "is required and must be at least 16 characters")
            }
            return value
        }
        serverKey = try key("server_key")
        clientKey = try key("client_key")
        guard serverKey != clientKey else {
            throw HeraldConfiguration.invalid("app.\(id).client_key", "must differ from the server key")
        }
        userTokens = try UserTokenConfiguration(reader: reader.scoped(to: "jwt"))
        userTokens.introspection = try IntrospectionConfiguration(
            reader: reader.scoped(to: "introspection"), key: "app.\(id).introspection")
    }

    /// Whether `id` is `[a-z0-9_-]{1,64}`.
    public static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && id.count <= 64
            && id.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "-"
            }
    }
}

/// How an app's own auth system signs its users' JWTs.
public struct UserTokenConfiguration: Sendable {
    /// HS256 shared secret.
    public var hs256Secret: String?
    /// Paths of PEM files with RS256 or ES256 public keys.
    public var publicKeyFiles: [String]
    /// Path of a JWKS file.
    public var jwksFile: String?
    /// Required `iss`, when set.
    public var issuer: String?
    /// Required `aud` member, when set.
    public var audience: String?
    /// Clock skew tolerated on `exp` and `nbf`, in seconds.
    public var leewaySeconds: Int
    /// The app's auth service, for opaque session tokens (RFC 7662); nil when the app issues JWTs only.
    public var introspection: IntrospectionConfiguration?

    /// Whether any JWT verification key is configured.
    public var isEnabled: Bool { hs256Secret != nil || !publicKeyFiles.isEmpty || jwksFile != nil }

    /// Creates a configuration; with no key, user tokens are not accepted.
    public init(
        hs256Secret: String? = nil, publicKeyFiles: [String] = [], jwksFile: String? = nil, issuer: String? = nil,
        audience: String? = nil, leewaySeconds: Int = 60, introspection: IntrospectionConfiguration? = nil
    ) {
        self.hs256Secret = hs256Secret
        self.publicKeyFiles = publicKeyFiles
        self.jwksFile = jwksFile
        self.issuer = issuer
        self.audience = audience
        self.leewaySeconds = leewaySeconds
        self.introspection = introspection
    }

    /// Reads, under `app.<id>.jwt`: `hs256_secret` (string of at least 32 bytes, secret), `public_key_files` (string
    /// array of PEM paths, RS256 or ES256), `jwks_file` (path), `issuer`, `audience` (strings),
    /// `leeway_seconds` (int, `60`). All optional; none set means user tokens are refused.
    /// - Throws: `HeraldError` when the leeway is negative.
    public init(reader: ConfigReader) throws {
        hs256Secret = reader.string(forKey: "hs256_secret", isSecret: true)
        // RFC 7518 §3.2: an HS256 key must be at least as long as the hash output.
        if let secret = hs256Secret, secret.utf8.count < 32 {
            throw HeraldConfiguration.invalid("jwt.hs256_secret", "must be at least 32 bytes (RFC 7518 §3.2)")
        }
        publicKeyFiles = reader.stringArray(forKey: "public_key_files", default: [])
        jwksFile = reader.string(forKey: "jwks_file")
        issuer = reader.string(forKey: "issuer")
        audience = reader.string(forKey: "audience")
        leewaySeconds = try HeraldConfiguration.integer(reader, "leeway_seconds", default: 60)
        guard leewaySeconds >= 0, leewaySeconds <= 3600 else {
            throw HeraldConfiguration.invalid("jwt.leeway_seconds", "must be 0 to 3600")
        }
    }
}

extension IntrospectionConfiguration {
    /// Reads, under `app.<id>.introspection`: `url` (the RFC 7662 endpoint, http or https),
    /// `client_id` and `client_secret` (secret) for HTTP Basic, `cache_seconds` (int, `60`, 0 to 3600),
    /// `negative_cache_seconds` (int, `10`, 0 to 3600), `timeout_ms` (int, `2000`, 100 to 60000).
    /// - Returns: nil when no `url` is set (the app has no introspection).
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    init?(reader: ConfigReader, key prefix: String) throws {
        guard let url = reader.string(forKey: "url") else { return nil }
        guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""),
            parsed.host?.isEmpty == false
        else { throw HeraldConfiguration.invalid("\(prefix).url", "must be an http or https URL") }
        func integer(_ name: String, _ value: Int, _ range: ClosedRange<Int>) throws -> Int {
            let number = try HeraldConfiguration.integer(reader, name, default: value, key: "\(prefix).\(name)")
            guard range.contains(number) else {
                throw HeraldConfiguration.invalid(
                    "\(prefix).\(name)", "must be \(range.lowerBound) to \(range.upperBound)")
            }
            return number
        }
        let clientID = reader.string(forKey: "client_id")
        let clientSecret = reader.string(forKey: "client_secret", isSecret: true)
        guard (clientID == nil) == (clientSecret == nil) else {
            throw HeraldConfiguration.invalid("\(prefix).client_secret", "and client_id are set together")
        }
        self.init(
            url: url, clientID: clientID, clientSecret: clientSecret,
            cacheSeconds: TimeInterval(try integer("cache_seconds", 60, 0...3600)),
            negativeCacheSeconds: TimeInterval(try integer("negative_cache_seconds", 10, 0...3600)),
            timeoutMilliseconds: try integer("timeout_ms", 2000, 100...60_000))
    }
}

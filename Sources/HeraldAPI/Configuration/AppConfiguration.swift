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
    /// Keys that may only publish (ntfy, Gotify).
    public var publishKeys: [PublishKey] = []

    /// Creates an app configuration.
    public init(id: String, serverKey: String, clientKey: String, userTokens: UserTokenConfiguration = .init()) {
        self.id = id
        self.serverKey = serverKey
        self.clientKey = clientKey
        self.userTokens = userTokens
    }

    /// Reads app `id`'s ``Settings`` and its `app.<id>.jwt.*` and `app.<id>.introspection.*` settings.
    /// - Throws: `HeraldError` with code `invalid_configuration` when a key is missing or too short.
    public init(id: String, reader: ConfigReader) throws {
        self.id = id
        serverKey = try reader.value(Settings.serverKey, app: id)
        clientKey = try reader.value(Settings.clientKey, app: id)
        guard serverKey != clientKey else {
            throw HeraldError.invalidConfiguration(Settings.clientKey.key(app: id), "must differ from the server key")
        }
        userTokens = try UserTokenConfiguration(appID: id, reader: reader)
        userTokens.introspection = try IntrospectionConfiguration(appID: id, reader: reader)
        for entry in reader.value(Settings.publishKeys, app: id) {
            guard let key = PublishKey(entry: entry) else {
                throw HeraldError.invalidConfiguration(
                    Settings.publishKeys.key(app: id),
                    "has an entry that is not KEY or KEY=TARGET (a key of 12+ characters without spaces; a target all, "
                        + "channel:NAME or user:ID)")
            }
            guard ![serverKey, clientKey].contains(key.key) else {
                throw HeraldError.invalidConfiguration(
                    Settings.publishKeys.key(app: id), "reuses the server or client key")
            }
            publishKeys.append(key)
        }
    }

    /// Whether `id` is `[a-z0-9_-]{1,64}`.
    public static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && id.count <= 64
            && id.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "-"
            }
    }
}

extension AppConfiguration {
    /// An app's API keys.
    public enum Settings {
        public static let serverKey = Setting<String>.required(
            "app.<id>.server_key", .string(minimumLength: 16), secret: true, defaultText: "required per listed app",
            "The app's server key: full access to the app.")
        public static let clientKey = Setting<String>.required(
            "app.<id>.client_key", .string(minimumLength: 16), secret: true, defaultText: "required per listed app",
            "The app's client key, different from the server key: it may only register, update and delete installations."
        )
        public static let publishKeys = Setting<[String]>(
            "app.<id>.publish_keys", .stringArray, secret: true,
            """
            Publish-only keys, for the ntfy and Gotify publish APIs (Apprise and the tools that publish to ntfy or \
            Gotify): each `KEY` (any channel of the app, the ntfy topic) or `KEY=TARGET` bound to `all`, \
            `channel:NAME` or `user:ID` (a Gotify application token's target); a key is 12+ characters without \
            spaces (`hpk_` and 32+ random characters is Herald's form; an existing Gotify token works too).
            """)
        /// Every setting above, in the reference's order.
        public static let all: [any DeclaredSetting] = [serverKey, clientKey, publishKeys]
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

    /// Reads app `appID`'s ``Settings`` (`app.<id>.jwt.*`); none of the keys set means user tokens are refused.
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    public init(appID: String, reader: ConfigReader) throws {
        hs256Secret = try reader.value(Settings.hs256Secret, app: appID)
        // RFC 7518 §3.2: an HS256 key must be at least as long as the hash output.
        if let secret = hs256Secret, secret.utf8.count < 32 {
            throw HeraldError.invalidConfiguration(
                "app.\(appID).jwt.hs256_secret", "must be at least 32 bytes (RFC 7518 §3.2)")
        }
        publicKeyFiles = reader.value(Settings.publicKeyFiles, app: appID)
        jwksFile = try reader.value(Settings.jwksFile, app: appID)
        issuer = try reader.value(Settings.issuer, app: appID)
        audience = try reader.value(Settings.audience, app: appID)
        leewaySeconds = try reader.value(Settings.leewaySeconds, app: appID)
    }

    /// An app's user-token settings; the `app.default.jwt.*` keys configure the generated `default` app.
    public enum Settings {
        public static let hs256Secret = Setting<String?>(
            "app.<id>.jwt.hs256_secret", .other("string ≥ 32 bytes"), secret: true,
            "The HS256 secret of the app's user tokens.")
        public static let publicKeyFiles = Setting<[String]>(
            "app.<id>.jwt.public_key_files", .pathArray, "PEM public keys (RS256 or ES256) of the app's user tokens.")
        public static let jwksFile = Setting<String?>(
            "app.<id>.jwt.jwks_file", .path, "A JWKS file with the app's token keys (matched by `kid`).")
        public static let issuer = Setting<String?>(
            "app.<id>.jwt.issuer", .text, "The `iss` user tokens must have, when set.")
        public static let audience = Setting<String?>(
            "app.<id>.jwt.audience", .text, "A value user tokens' `aud` must contain, when set.")
        public static let leewaySeconds = Setting<Int>(
            "app.<id>.jwt.leeway_seconds", 0...3600, unit: "seconds", default: 60,
            "The clock skew allowed on `exp` and `nbf`.")
        /// Every setting above, in the reference's order.
        public static let all: [any DeclaredSetting] = [
            hs256Secret, publicKeyFiles, jwksFile, issuer, audience, leewaySeconds,
        ]
    }
}

extension IntrospectionConfiguration {
    /// Reads app `appID`'s ``Settings`` (`app.<id>.introspection.*`).
    /// - Returns: nil when no `url` is set (the app has no introspection).
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    package init?(appID: String, reader: ConfigReader) throws {
        guard let url = try reader.value(Settings.url, app: appID) else { return nil }
        guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""),
            parsed.host?.isEmpty == false
        else { throw HeraldError.invalidConfiguration(Settings.url.key(app: appID), "must be an http or https URL") }
        let clientID = try reader.value(Settings.clientID, app: appID)
        let clientSecret = try reader.value(Settings.clientSecret, app: appID)
        guard (clientID == nil) == (clientSecret == nil) else {
            throw HeraldError.invalidConfiguration(
                Settings.clientSecret.key(app: appID), "and client_id are set together")
        }
        self.init(
            url: url, clientID: clientID, clientSecret: clientSecret,
            cacheSeconds: TimeInterval(try reader.value(Settings.cacheSeconds, app: appID)),
            negativeCacheSeconds: TimeInterval(try reader.value(Settings.negativeCacheSeconds, app: appID)),
            timeoutMilliseconds: try reader.value(Settings.timeoutMilliseconds, app: appID))
    }

    /// An app's session introspection settings (RFC 7662).
    public enum Settings {
        public static let url = Setting<String?>(
            "app.<id>.introspection.url", .url(schemes: ["http", "https"]),
            """
            The app's OAuth 2.0 token introspection endpoint (RFC 7662), for opaque session tokens: a bearer token \
            that is neither an API key nor a JWT signed by an app's key is posted there \
            (`token=…&token_type_hint=access_token`) when its app is known (named by `X-Herald-App`, or the only \
            app that introspects). None: the app's users present JWTs only.
            """)
        public static let clientID = Setting<String?>(
            "app.<id>.introspection.client_id", .text,
            "Herald's client id at the endpoint (HTTP Basic); set together with `client_secret`.")
        public static let clientSecret = Setting<String?>(
            "app.<id>.introspection.client_secret", .text, secret: true,
            "Herald's client secret at the endpoint (HTTP Basic); set together with `client_id`.")
        public static let cacheSeconds = Setting<Int>(
            "app.<id>.introspection.cache_seconds", 0...3600, unit: "seconds", default: 60,
            "How long an active answer is trusted: a revoked session works at most this long.")
        public static let negativeCacheSeconds = Setting<Int>(
            "app.<id>.introspection.negative_cache_seconds", 0...3600, unit: "seconds", default: 10,
            "How long an inactive answer is remembered.")
        public static let timeoutMilliseconds = Setting<Int>(
            "app.<id>.introspection.timeout_ms", 100...60_000, unit: "milliseconds", default: 2000,
            "How long Herald waits for the endpoint; past it the request is refused `401 invalid_session`.")
        /// Every setting above, in the reference's order.
        public static let all: [any DeclaredSetting] = [
            url, clientID, clientSecret, cacheSeconds, negativeCacheSeconds, timeoutMilliseconds,
        ]
    }
}

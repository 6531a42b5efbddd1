import Configuration
import HeraldAPI
import HeraldCore

/// How long and how much Herald's HTTP server waits for and reads from one client, so that slow or
/// oversized requests cannot hold connections or memory (`http.*`).
public struct HTTPLimits: Sendable, Equatable {
    /// From a connection's accept to the first request's complete head, in seconds.
    public var headerTimeoutSeconds: Int
    /// From a request's head to the end of its body, in seconds.
    public var bodyTimeoutSeconds: Int
    /// From a response's end to the next request's complete head on a kept-alive connection, in seconds.
    public var idleTimeoutSeconds: Int
    /// The most bytes of one header line and of all a request's header lines.
    public var maxHeaderBytes: Int
    /// The most header lines of one request.
    public var maxHeaderCount: Int
    /// Requests with refused credentials one client address may make a minute (a token bucket of
    /// that size, refilled over a minute) before it is answered `429` whatever it presents; 0: no limit.
    public var authFailuresPerMinute: Int
    /// The reverse proxies whose `X-Forwarded-For` names the client; none by default.
    public var trustedProxies: TrustedProxies

    /// The documented defaults.
    public init(
        headerTimeoutSeconds: Int = 10, bodyTimeoutSeconds: Int = 30, idleTimeoutSeconds: Int = 60,
        maxHeaderBytes: Int = 32 * 1024, maxHeaderCount: Int = 100, authFailuresPerMinute: Int = 0,
        trustedProxies: TrustedProxies = .none
    ) {
        self.headerTimeoutSeconds = headerTimeoutSeconds
        self.bodyTimeoutSeconds = bodyTimeoutSeconds
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderCount = maxHeaderCount
        self.authFailuresPerMinute = authFailuresPerMinute
        self.trustedProxies = trustedProxies
    }

    /// Reads the ``Settings`` (`http.*`).
    /// - Throws: `HeraldError` with code `invalid_configuration` naming the key at fault.
    public init(reader: ConfigReader) throws {
        headerTimeoutSeconds = try reader.value(Settings.headerTimeoutSeconds)
        bodyTimeoutSeconds = try reader.value(Settings.bodyTimeoutSeconds)
        idleTimeoutSeconds = try reader.value(Settings.idleTimeoutSeconds)
        maxHeaderBytes = try reader.value(Settings.maxHeaderBytes)
        maxHeaderCount = try reader.value(Settings.maxHeaderCount)
        authFailuresPerMinute = try reader.value(Settings.authFailuresPerMinute)
        trustedProxies = try TrustedProxies(
            reader.value(Settings.trustedProxies), key: Settings.trustedProxies.key(app: nil))
    }

    /// The HTTP server's limits.
    public enum Settings {
        static let defaults = HTTPLimits()

        public static let headerTimeoutSeconds = Setting<Int>(
            "http.header_timeout_seconds", 1...3600, unit: "seconds", default: defaults.headerTimeoutSeconds,
            """
            A connection is closed when its client takes longer than this from the accept to a complete request \
            head: slow clients (slowloris) cannot hold connections.
            """)
        public static let bodyTimeoutSeconds = Setting<Int>(
            "http.body_timeout_seconds", 1...3600, unit: "seconds", default: defaults.bodyTimeoutSeconds,
            "A connection is closed when its client takes longer than this from a request's head to the end of its body."
        )
        public static let idleTimeoutSeconds = Setting<Int>(
            "http.idle_timeout_seconds", 1...3600, unit: "seconds", default: defaults.idleTimeoutSeconds,
            """
            A kept-alive connection is closed when its client takes longer than this from a response's end to the \
            next request's complete head.
            """)
        public static let maxHeaderBytes = Setting<Int>(
            "http.max_header_bytes", 1024...1_048_576, unit: "bytes", default: defaults.maxHeaderBytes,
            "A request with a longer header line, or longer header lines in all, is answered `431`.")
        public static let maxHeaderCount = Setting<Int>(
            "http.max_header_count", 8...10000, default: defaults.maxHeaderCount,
            "A request with more header lines is answered `431`.")
        public static let authFailuresPerMinute = Setting<Int>(
            "http.auth_failures_per_minute", 0...100_000, default: defaults.authFailuresPerMinute,
            defaultText: "`0` (no limit)",
            """
            Requests with refused credentials one client address may make a minute (a token bucket of that size, \
            refilled over a minute); past it every request from the address (whatever credential it presents, on \
            every surface, except `/healthz`, `/readyz`, `/openapi.yaml` and the VAPID key) is answered `429` with \
            `Retry-After` in its surface's error body until the allowance refills.
            """)
        public static let trustedProxies = Setting<[String]>(
            "http.trusted_proxies", .stringArray, defaultText: "none",
            """
            The reverse proxies (addresses or CIDR blocks, IPv4 or IPv6: `["10.0.0.5", "fd00::/8"]`) whose \
            `X-Forwarded-For` Herald believes. A request whose TCP peer is one of them counts, in every per-address \
            limit (`http.auth_failures_per_minute`, `registrations_per_minute` of client keys, the console's sign-ins, \
            the relay's unknown tokens, Matrix's new pushkeys), as the client the proxies named: the rightmost \
            address of `X-Forwarded-For` that is not itself a listed proxy. From any other peer the header is \
            ignored, so clients cannot pick their own address. Unset, every client behind a proxy shares the \
            proxy's allowance.
            """)
        /// Every setting above, in the reference's order.
        public static let all: [any DeclaredSetting] = [
            headerTimeoutSeconds, bodyTimeoutSeconds, idleTimeoutSeconds, maxHeaderBytes, maxHeaderCount,
            authFailuresPerMinute, trustedProxies,
        ]
    }
}

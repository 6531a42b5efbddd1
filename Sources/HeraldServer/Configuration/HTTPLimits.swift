import Configuration
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

    /// The documented defaults.
    public init(
        headerTimeoutSeconds: Int = 10, bodyTimeoutSeconds: Int = 30, idleTimeoutSeconds: Int = 60,
        maxHeaderBytes: Int = 32 * 1024, maxHeaderCount: Int = 100, authFailuresPerMinute: Int = 0
    ) {
        self.headerTimeoutSeconds = headerTimeoutSeconds
        self.bodyTimeoutSeconds = bodyTimeoutSeconds
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderCount = maxHeaderCount
        self.authFailuresPerMinute = authFailuresPerMinute
    }

    /// Reads the `http.*` keys (type, default): `header_timeout_seconds` (int 1–3600, `10`),
    /// `body_timeout_seconds` (int 1–3600, `30`), `idle_timeout_seconds` (int 1–3600, `60`),
    /// `max_header_bytes` (int 1024–1048576, `32768`), `max_header_count` (int 8–10000, `100`),
    /// `auth_failures_per_minute` (int 0–100000, `0`: no limit).
    /// - Throws: `HeraldError` with code `invalid_configuration` naming the key at fault.
    public init(reader: ConfigReader) throws {
        func value(_ name: String, _ fallback: Int, _ range: ClosedRange<Int>) throws -> Int {
            let key = "http.\(name)"
            let number = try HeraldConfiguration.integer(reader, key, default: fallback)
            guard range.contains(number) else {
                throw HeraldConfiguration.invalid(key, "must be \(range.lowerBound) to \(range.upperBound)")
            }
            return number
        }
        let defaults = HTTPLimits()
        headerTimeoutSeconds = try value("header_timeout_seconds", defaults.headerTimeoutSeconds, 1...3600)
        bodyTimeoutSeconds = try value("body_timeout_seconds", defaults.bodyTimeoutSeconds, 1...3600)
        idleTimeoutSeconds = try value("idle_timeout_seconds", defaults.idleTimeoutSeconds, 1...3600)
        maxHeaderBytes = try value("max_header_bytes", defaults.maxHeaderBytes, 1024...1_048_576)
        maxHeaderCount = try value("max_header_count", defaults.maxHeaderCount, 8...10000)
        authFailuresPerMinute = try value("auth_failures_per_minute", defaults.authFailuresPerMinute, 0...100_000)
    }
}

import CoreMetrics
import NIOCore
import NIOSSL

/// How the pool reaches one host.
public struct HTTP2PoolConfiguration: Sendable {
    /// Host name (also the TLS server name and `:authority`).
    public var host: String
    public var port: Int
    /// TLS settings: trust roots, client certificate for certificate auth; ALPN is set by the pool
    /// (`h2`, and `http/1.1` after it with ``offersHTTP1``).
    public var tls: TLSConfiguration
    /// Whether the TLS handshake offers `http/1.1` after `h2`, so that a host speaking only
    /// HTTP/1.1 says so instead of failing the handshake: its requests then fail with
    /// ``HTTP2ClientError/notHTTP2(host:chosen:)`` (Web Push learns each origin's version so).
    public var offersHTTP1 = false
    /// Long-lived connections kept to the host; streams are spread over them.
    public var connections: Int
    /// The inbound connection-level flow-control window kept open for responses (RFC 9113 §6.9).
    public var connectionWindowSize: Int
    /// Requests that may wait for a stream, per connection.
    public var maxPendingPerConnection: Int
    /// Streams assumed allowed per connection until the peer's SETTINGS arrive.
    public var initialMaxConcurrentStreams: Int
    /// Herald's own cap on streams per connection, whatever the peer allows: NIOHTTP2's per-stream
    /// bookkeeping grows with the streams open, so many shallow connections beat a few deep ones.
    public var maxStreamsPerConnection: Int
    public var connectTimeout: TimeAmount
    /// A request still unanswered after this fails with `requestTimeout`.
    public var requestTimeout: TimeAmount
    /// An idle connection sends a PING this often; no ACK within `pingTimeout` closes it.
    public var pingInterval: TimeAmount
    public var pingTimeout: TimeAmount
    /// With streams open, a connection that reads nothing for this long is closed.
    public var readTimeout: TimeAmount
    /// Reconnect backoff: full jitter over `base * 2^failures`, capped.
    public var reconnectBase: TimeAmount
    public var reconnectCap: TimeAmount
    /// How many connections a request refused by GOAWAY or REFUSED_STREAM may be tried on.
    public var maxAttempts: Int
    /// Where each request's time from submission to its answer (or error) is recorded; nil records nothing.
    public var requestDuration: CoreMetrics.Timer?

    /// Creates a configuration with production defaults.
    public init(
        host: String, port: Int = 443, tls: TLSConfiguration = .makeClientConfiguration(), connections: Int = 2,
        maxPendingPerConnection: Int = 10_000, initialMaxConcurrentStreams: Int = 100,
        maxStreamsPerConnection: Int = 100, connectionWindowSize: Int = 1 << 20,
        connectTimeout: TimeAmount = .seconds(10), requestTimeout: TimeAmount = .seconds(30),
        pingInterval: TimeAmount = .seconds(60), pingTimeout: TimeAmount = .seconds(10),
        readTimeout: TimeAmount = .seconds(30), reconnectBase: TimeAmount = .milliseconds(100),
        reconnectCap: TimeAmount = .seconds(10), maxAttempts: Int = 3
    ) {
        self.host = host
        self.port = port
        self.tls = tls
        self.connections = max(1, connections)
        self.maxPendingPerConnection = maxPendingPerConnection
        self.initialMaxConcurrentStreams = initialMaxConcurrentStreams
        self.maxStreamsPerConnection = max(1, maxStreamsPerConnection)
        self.connectionWindowSize = min(max(65_535, connectionWindowSize), Int(Int32.max))
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.readTimeout = readTimeout
        self.reconnectBase = reconnectBase
        self.reconnectCap = reconnectCap
        self.maxAttempts = max(1, maxAttempts)
    }
}

/// Why an HTTP/2 request through the pool ended without a response.
public struct HTTP2ClientError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case connectFailed(String)
        case notHTTP2(host: String, chosen: String?)
        case connectionClosed
        case requestTimeout
        case streamReset(UInt32)
        case queueFull
        case shutdown
        case retriesExhausted
        case invalidResponse(String)
    }

    private let code: Code

    /// No connection to the host could be made.
    public static func connectFailed(_ reason: String) -> Self { .init(code: .connectFailed(reason)) }
    /// The host's TLS handshake chose another protocol than `h2` through ALPN (`chosen`; nil: none).
    public static func notHTTP2(host: String, chosen: String?) -> Self {
        .init(code: .notHTTP2(host: host, chosen: chosen))
    }
    /// Whether the host does not speak HTTP/2 (its handshake chose another protocol).
    public var isNotHTTP2: Bool {
        if case .notHTTP2 = code { return true }
        return false
    }
    /// The connection closed while the request was in flight; the peer may have processed it.
    public static let connectionClosed = Self(code: .connectionClosed)
    /// The request did not complete within its timeout.
    public static let requestTimeout = Self(code: .requestTimeout)
    /// The peer reset the request's stream with this HTTP/2 error code.
    public static func streamReset(code: UInt32) -> Self { .init(code: .streamReset(code)) }
    /// The pool's queue is full; the caller should back off.
    public static let queueFull = Self(code: .queueFull)
    /// The pool is shut down.
    public static let shutdown = Self(code: .shutdown)
    /// The request was refused by every connection it was tried on (GOAWAY, REFUSED_STREAM).
    public static let retriesExhausted = Self(code: .retriesExhausted)
    /// The peer's answer was not a valid HTTP/2 response.
    public static func invalidResponse(_ reason: String) -> Self { .init(code: .invalidResponse(reason)) }

    /// Whether retrying later may succeed (every error but a malformed response or shutdown).
    public var isTransient: Bool {
        switch code {
        case .shutdown, .invalidResponse: false
        default: true
        }
    }

    public var description: String {
        switch code {
        case .connectFailed(let reason): "connect failed: \(reason)"
        case .notHTTP2(let host, let chosen):
            "connect failed: \(host) does not speak HTTP/2: its TLS handshake chose "
                + (chosen.map { "'\($0)'" } ?? "no protocol") + " through ALPN, not 'h2'"
        case .connectionClosed: "connection closed with the request in flight"
        case .requestTimeout: "request timed out"
        case .streamReset(let code): "stream reset by peer (HTTP/2 error \(code))"
        case .queueFull: "request queue is full"
        case .shutdown: "pool is shut down"
        case .retriesExhausted: "request refused on every connection tried"
        case .invalidResponse(let reason): "invalid response: \(reason)"
        }
    }
}

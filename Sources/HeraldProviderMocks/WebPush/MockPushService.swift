import HeraldTestSupport

/// A stand-in for a browser vendor's push service (RFC 8030) for tests: HTTP/2 over TLS on
/// 127.0.0.1 (or HTTP/1.1 only, to test a client's fallback), with subscriptions it makes itself,
/// VAPID verification (RFC 8292), `aes128gcm` decryption with the subscription's keys (RFC 8291),
/// scripts for subscription-level answers, and a log of every request with its decrypted payload.
///
/// ```swift
/// let ca = try TestCertificateAuthority()
/// let service = try await MockPushService.start(ca: ca)
/// let subscription = service.makeSubscription()   // endpoint, p256dh, auth
/// service.script(subscription: subscription.id, .gone)
/// // … the test …
/// try await service.shutdown()
/// ```
///
/// A push that passes every check is answered `201 Created` with a `Location`; a missing `vapid`
/// authorization gets 401 and an invalid one 403 (RFC 8292 §4.2); a missing TTL or a bad Urgency
/// or Topic 400; a body over 4096 bytes 413; a body that does not decrypt 400.
public final class MockPushService: Sendable {
    /// The HTTP version the mock serves.
    public enum HTTPVersion: Sendable {
        /// HTTP/2 (ALPN `h2`), as every major push service.
        case http2
        /// HTTP/1.1 only (ALPN `http/1.1`).
        case http1
    }

    enum Server {
        case http2(HTTP2TestServer)
        case http1(HTTP1TestServer)
    }

    let server: Server
    private let endpoint: PushServiceEndpoint

    private init(server: Server, endpoint: PushServiceEndpoint) {
        self.server = server
        self.endpoint = endpoint
    }

    /// Starts a mock on an ephemeral port of 127.0.0.1, with a TLS certificate from `ca` for
    /// `localhost` and `127.0.0.1`.
    /// - Parameters:
    ///   - httpVersion: What the mock speaks.
    ///   - maxConcurrentStreams: The HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS.
    /// - Throws: When the certificate cannot be issued or the port cannot be bound.
    public static func start(
        ca: TestCertificateAuthority, httpVersion: HTTPVersion = .http2, maxConcurrentStreams: Int = 100
    ) async throws -> MockPushService {
        let tls = try ca.serverTLSConfiguration()
        let endpoint: PushServiceEndpoint
        let server: Server
        switch httpVersion {
        case .http2:
            endpoint = PushServiceEndpoint(httpVersion: "h2")
            server = .http2(
                try await HTTP2TestServer.start(tls: tls, maxConcurrentStreams: maxConcurrentStreams) { request in
                    await endpoint.respond(to: request)
                })
        case .http1:
            endpoint = PushServiceEndpoint(httpVersion: "http/1.1")
            server = .http1(
                try await HTTP1TestServer.start(tls: tls) { request in
                    await endpoint.respond(to: request)
                })
        }
        let mock = MockPushService(server: server, endpoint: endpoint)
        endpoint.setOrigin(mock.baseURL)
        return mock
    }

    /// The port the mock listens on.
    public var port: Int {
        switch server {
        case .http2(let server): server.port
        case .http1(let server): server.port
        }
    }

    /// The mock's origin, `https://127.0.0.1:<port>`: the `aud` VAPID tokens must carry.
    public var baseURL: String { "https://127.0.0.1:\(port)" }

    /// How many TCP connections the mock has accepted.
    public var connectionCount: Int {
        switch server {
        case .http2(let server): server.acceptedConnections
        case .http1(let server): server.acceptedConnections
        }
    }

    // MARK: Subscriptions

    /// Makes a subscription as a browser's `PushManager.subscribe()` would: a fresh endpoint
    /// `https://127.0.0.1:<port>/push/<id>` and fresh browser keys.
    /// - Parameter applicationServerKey: The VAPID public key (base64url) the subscription is
    ///   restricted to; pushes signed with another key are refused with 403. Nil accepts any key.
    public func makeSubscription(applicationServerKey: String? = nil) -> Subscription {
        endpoint.makeSubscription(applicationServerKey: applicationServerKey)
    }

    // MARK: Recording

    /// Every request received so far, oldest first, whatever the answer.
    public var requests: [RecordedRequest] { endpoint.log.records }

    /// Waits until at least `count` requests have been received.
    /// - Throws: ``MockServerError`` (``MockServerError/isTimeout``) when `timeout` passes first.
    public func waitForRequests(count: Int, timeout: Duration = .seconds(10)) async throws {
        try await endpoint.log.wait(forCount: count, timeout: timeout)
    }

    // MARK: Scripts

    /// Scripts the answer to the next pushes to subscription `id`.
    ///
    /// Scripts for one subscription queue up in call order; each answers `times` requests (nil:
    /// every later request). A script only answers requests that pass the mock's own checks.
    public func script(subscription id: String, _ response: ScriptedResponse, times: Int? = nil) {
        endpoint.script(subscription: id, response, times: times)
    }

    /// Removes every script.
    public func clearScripts() {
        endpoint.clearScripts()
    }

    /// Stops listening, closes every connection and waits for in-flight requests.
    /// - Throws: Never in practice; reserved for channel close failures.
    public func shutdown() async throws {
        switch server {
        case .http2(let server): try await server.shutdown()
        case .http1(let server): try await server.shutdown()
        }
    }
}

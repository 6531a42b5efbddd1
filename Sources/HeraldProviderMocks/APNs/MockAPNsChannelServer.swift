import HeraldTestSupport

/// A stand-in for APNs' channel management service (api-manage-broadcast.push.apple.com) for tests: HTTP/2 over TLS
/// on 127.0.0.1, where a provider creates, reads, lists and deletes the broadcast channels of its apps ("Sending
/// channel management requests to APNs"), with APNs' authentication (provider token or client certificate), error
/// reasons and response headers, and a log of every request.
///
/// The channels live in an ``APNsChannelRegistry``; give the same registry to ``MockAPNsServer`` so that broadcasts
/// reach the channels this service created:
///
/// ```swift
/// let ca = try TestCertificateAuthority()
/// let key = TestAPNsAuthKey()
/// let credential = key.credential(topics: ["com.example.app"])
/// let management = try await MockAPNsChannelServer.start(ca: ca, credentials: [credential])
/// let apns = try await MockAPNsServer.start(ca: ca, credentials: [credential], channels: management.channels)
/// // … the test …
/// try await apns.shutdown()
/// try await management.shutdown()
/// ```
public final class MockAPNsChannelServer: MockHTTP2Server {
    private let server: HTTP2TestServer
    private let endpoint: APNsChannelEndpoint

    /// The HTTP/2 + TLS server the mock answers on.
    public var http2Server: HTTP2TestServer { server }

    private init(server: HTTP2TestServer, endpoint: APNsChannelEndpoint) {
        self.server = server
        self.endpoint = endpoint
    }

    /// Starts a mock on an ephemeral port of 127.0.0.1, with a TLS certificate from `ca` for `localhost` and
    /// `127.0.0.1`, accepting client certificates that `ca` issued.
    /// - Parameters:
    ///   - credentials: The provider keys whose tokens the mock accepts; a key covers the channels of its topics.
    ///   - channels: Where the channels are kept; by default a new, empty registry with Apple's limit.
    ///   - maxConcurrentStreams: The SETTINGS_MAX_CONCURRENT_STREAMS each connection starts with.
    /// - Throws: When a credential's key is unusable, the certificate cannot be issued, or the port cannot be bound.
    public static func start(
        ca: TestCertificateAuthority, credentials: [MockAPNsServer.Credential],
        channels: APNsChannelRegistry = APNsChannelRegistry(), maxConcurrentStreams: Int = 1000
    ) async throws -> MockAPNsChannelServer {
        let endpoint = try await APNsChannelEndpoint(credentials: credentials, channels: channels)
        let server = try await HTTP2TestServer.start(
            tls: try ca.serverTLSConfiguration(acceptingClientCertificates: true),
            maxConcurrentStreams: maxConcurrentStreams
        ) { request in
            await endpoint.respond(to: request)
        }
        return MockAPNsChannelServer(server: server, endpoint: endpoint)
    }

    /// The channels, as the service keeps them.
    public var channels: APNsChannelRegistry { endpoint.channels }

    /// Every request received so far, oldest first, whatever the answer.
    public var requests: [RecordedRequest] { endpoint.log.records }

    /// Waits until at least `count` requests have been received.
    /// - Throws: ``MockServerError`` (``MockServerError/isTimeout``) when `timeout` passes first.
    public func waitForRequests(count: Int, timeout: Duration = .seconds(10)) async throws {
        try await endpoint.log.wait(forCount: count, timeout: timeout)
    }
}

import HeraldTestSupport

/// A stand-in for APNs (api.push.apple.com) for tests: HTTP/2 over TLS on 127.0.0.1, with APNs' request checks,
/// provider-token and client-certificate authentication, error reasons and response headers, plus scripts for
/// device-level answers and connection-level misbehaviour, and a log of every request. Besides device pushes it takes
/// broadcasts to the channels of its ``channels`` registry (iOS 18's broadcast push notifications).
///
/// ```swift
/// let ca = try TestCertificateAuthority()
/// let key = TestAPNsAuthKey(teamID: "TEAM123456", keyID: "KEY1234567")
/// let apns = try await MockAPNsServer.start(ca: ca, credentials: [key.credential(topics: ["com.example.app"])])
/// apns.script(token: deadToken, .unregistered())
/// // … the test …
/// try await apns.shutdown()
/// ```
///
/// Like APNs, the mock serves both kinds of provider on one host: it asks every client for a TLS certificate and
/// accepts connections without one. A client that presents a certificate from
/// ``TestCertificateAuthority/apnsCertificate(bundleID:)`` of the mock's `ca` may send requests without an
/// `authorization` header; one from any other issuer fails the TLS handshake.
public final class MockAPNsServer: MockHTTP2Server {
    private let server: HTTP2TestServer

    /// The HTTP/2 + TLS server the mock answers on.
    public var http2Server: HTTP2TestServer { server }
    private let endpoint: APNsEndpoint

    private init(server: HTTP2TestServer, endpoint: APNsEndpoint) {
        self.server = server
        self.endpoint = endpoint
    }

    /// Starts a mock on an ephemeral port of 127.0.0.1, with a TLS certificate from `ca` for `localhost` and
    /// `127.0.0.1`, accepting client certificates that `ca` issued.
    /// - Parameters:
    ///   - credentials: The provider keys whose tokens the mock accepts.
    ///   - maxConcurrentStreams: The SETTINGS_MAX_CONCURRENT_STREAMS each connection starts with.
    ///   - channels: The broadcast channels `POST /4/broadcasts/apps/<bundle ID>` accepts: give the registry of a
    ///     ``MockAPNsChannelServer`` so that the channels it creates can be broadcast to. By default a registry of the
    ///     mock's own, empty.
    /// - Throws: When a credential's key is unusable, the certificate cannot be issued, or the port cannot be bound.
    public static func start(
        ca: TestCertificateAuthority, credentials: [Credential], maxConcurrentStreams: Int = 1000,
        channels: APNsChannelRegistry = APNsChannelRegistry()
    ) async throws -> MockAPNsServer {
        let endpoint = try await APNsEndpoint(credentials: credentials, channels: channels)
        let server = try await HTTP2TestServer.start(
            tls: try ca.serverTLSConfiguration(acceptingClientCertificates: true),
            maxConcurrentStreams: maxConcurrentStreams
        ) { request in
            await endpoint.respond(to: request)
        }
        return MockAPNsServer(server: server, endpoint: endpoint)
    }

    /// The broadcast channels the mock accepts.
    public var channels: APNsChannelRegistry { endpoint.channels }

    // MARK: Recording

    /// Every request received so far, oldest first, whatever the answer.
    public var requests: [RecordedRequest] { endpoint.log.records }

    /// Waits until at least `count` requests have been received.
    /// - Throws: ``MockServerError`` (``MockServerError/isTimeout``) when `timeout` passes first.
    public func waitForRequests(count: Int, timeout: Duration = .seconds(10)) async throws {
        try await endpoint.log.wait(forCount: count, timeout: timeout)
    }

    // MARK: Device scripts

    /// Scripts the answer to the next requests for the device `token`.
    ///
    /// Scripts for one token queue up in call order; each answers `times` requests (nil: every later request, so
    /// later scripts for the token never play). A script only answers requests that pass APNs' own checks.
    public func script(token: String, _ response: ScriptedResponse, times: Int? = nil) {
        endpoint.script(token: token, response, times: times)
    }

    /// Removes every device script.
    public func clearScripts() {
        endpoint.clearScripts()
    }
}

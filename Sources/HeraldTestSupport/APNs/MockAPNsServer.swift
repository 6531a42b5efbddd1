/// A stand-in for APNs (api.push.apple.com) for tests: HTTP/2 over TLS on 127.0.0.1, with APNs' request checks,
/// provider-token verification, error reasons and response headers, plus scripts for device-level answers and
/// connection-level misbehaviour, and a log of every request.
///
/// ```swift
/// let ca = try TestCertificateAuthority()
/// let key = TestAPNsAuthKey(teamID: "TEAM123456", keyID: "KEY1234567")
/// let apns = try await MockAPNsServer.start(ca: ca, credentials: [key.credential(topics: ["com.example.app"])])
/// defer { Task { try await apns.shutdown() } }
/// apns.script(token: deadToken, .unregistered())
/// ```
public final class MockAPNsServer: Sendable {
    private let server: HTTP2TestServer
    private let endpoint: APNsEndpoint

    private init(server: HTTP2TestServer, endpoint: APNsEndpoint) {
        self.server = server
        self.endpoint = endpoint
    }

    /// Starts a mock on an ephemeral port of 127.0.0.1, with a TLS certificate from `ca` for `localhost` and
    /// `127.0.0.1`.
    /// - Parameters:
    ///   - credentials: The provider keys whose tokens the mock accepts.
    ///   - maxConcurrentStreams: The SETTINGS_MAX_CONCURRENT_STREAMS each connection starts with.
    /// - Throws: When a credential's key is unusable, the certificate cannot be issued, or the port cannot be bound.
    public static func start(
        ca: TestCertificateAuthority, credentials: [Credential], maxConcurrentStreams: Int = 1000
    ) async throws -> MockAPNsServer {
        let endpoint = try await APNsEndpoint(credentials: credentials)
        let server = try await HTTP2TestServer.start(
            tls: try ca.serverTLSConfiguration(), maxConcurrentStreams: maxConcurrentStreams
        ) { request in
            await endpoint.respond(to: request)
        }
        return MockAPNsServer(server: server, endpoint: endpoint)
    }

    /// The port the mock listens on.
    public var port: Int { server.port }

    /// The mock's origin, `https://127.0.0.1:<port>`, to configure a client with in place of
    /// `https://api.push.apple.com`.
    public var baseURL: String { "https://127.0.0.1:\(port)" }

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

    // MARK: Connection scripts

    /// Sets SETTINGS_MAX_CONCURRENT_STREAMS: sent at once in a SETTINGS frame on every open connection, and used in
    /// the initial SETTINGS of new ones. The mock refuses streams beyond it (RST_STREAM REFUSED_STREAM) once the
    /// client has acknowledged the setting.
    public func setMaxConcurrentStreams(_ n: Int) {
        server.setMaxConcurrentStreams(n)
    }

    /// After the n-th stream on a connection (counted from this call on open connections), sends GOAWAY with that
    /// stream as the last stream ID, answers the streams up to it, ignores later ones and then closes the
    /// connection. Replaces any other connection script.
    public func goAway(afterStreams n: Int) {
        server.setConnectionScript(.goAway(afterStreams: n))
    }

    /// Answers n streams on a connection (counted from this call on open connections), then closes the TCP
    /// connection abruptly, with neither GOAWAY nor TLS close_notify; streams past the n-th are never answered.
    /// Replaces any other connection script.
    public func dropConnections(afterStreams n: Int) {
        server.setConnectionScript(.drop(afterStreams: n))
    }

    /// Removes the GOAWAY or drop script; connections already closing still close.
    public func clearConnectionScripts() {
        server.setConnectionScript(nil)
    }

    /// The highest number of streams one connection had in service at once, to check that a client respects
    /// SETTINGS_MAX_CONCURRENT_STREAMS.
    public var peakConcurrentStreams: Int { server.peakConcurrentStreams }

    /// How many TCP connections the mock has accepted.
    public var connectionCount: Int { server.acceptedConnections }

    // MARK: Lifecycle

    /// Stops listening, closes every connection and waits for in-flight requests; delayed answers are abandoned.
    /// - Throws: Never in practice; reserved for channel close failures.
    public func shutdown() async throws {
        try await server.shutdown()
    }
}

import HeraldTestSupport
extension MockPushService {
    /// The HTTP/2 engine of a mock started with ``HTTPVersion/http2``; connection faults are HTTP/2-only.
    private var http2: HTTP2TestServer {
        guard case .http2(let server) = server else {
            preconditionFailure("connection faults need a mock push service started with .http2")
        }
        return server
    }

    /// After the n-th stream on a connection, sends GOAWAY naming it, answers the streams up to it, then closes
    /// the connection (see ``MockHTTP2Server/goAway(afterStreams:)``). HTTP/2 mocks only.
    public func goAway(afterStreams n: Int) {
        http2.setConnectionScript(.goAway(afterStreams: n))
    }

    /// Answers n streams on a connection, then resets it with a TCP RST (see
    /// ``MockHTTP2Server/resetConnections(afterStreams:)``). HTTP/2 mocks only.
    public func resetConnections(afterStreams n: Int) {
        http2.setConnectionScript(.reset(afterStreams: n))
    }

    /// Removes the GOAWAY or reset script. HTTP/2 mocks only.
    public func clearConnectionScripts() {
        http2.setConnectionScript(nil)
    }

    /// Treats connections accepted from now on as `fault` says; nil serves them normally again (see
    /// ``MockHTTP2Server/setAcceptFault(_:)``). HTTP/2 mocks only.
    /// - Throws: When the certificate for ``AcceptFault/untrustedCertificate`` cannot be made.
    public func setAcceptFault(_ fault: AcceptFault?) throws {
        try http2.setAcceptFault(fault)
    }

    /// Closes every open connection at once. HTTP/2 mocks only.
    public func closeConnections() {
        http2.closeConnections()
    }

    /// Goes down: stops listening and resets every open connection. HTTP/2 mocks only.
    public func stopListening() async {
        await http2.stopListening()
    }

    /// Comes back up on the same port after ``stopListening()``. HTTP/2 mocks only.
    /// - Throws: When the port cannot be bound again.
    public func resumeListening() async throws {
        try await http2.resumeListening()
    }
}

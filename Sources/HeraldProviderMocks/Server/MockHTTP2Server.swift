import HeraldTestSupport

/// A mock provider on ``HTTP2TestServer``: the connection-level scripts and counters both mocks share.
public protocol MockHTTP2Server: Sendable {
    /// The HTTP/2 + TLS server the mock answers on.
    var http2Server: HTTP2TestServer { get }
}

extension MockHTTP2Server {
    /// The port the mock listens on.
    public var port: Int { http2Server.port }

    /// The mock's origin, `https://127.0.0.1:<port>`, to configure a client with in place of the real service.
    public var baseURL: String { "https://127.0.0.1:\(port)" }

    /// Sets SETTINGS_MAX_CONCURRENT_STREAMS: sent at once in a SETTINGS frame on every open connection, and used in
    /// the initial SETTINGS of new ones. The mock refuses streams beyond it (RST_STREAM REFUSED_STREAM) once the
    /// client has acknowledged the setting.
    public func setMaxConcurrentStreams(_ n: Int) {
        http2Server.setMaxConcurrentStreams(n)
    }

    /// After the n-th stream on a connection (counted from this call on open connections), sends GOAWAY with that
    /// stream as the last stream ID, answers the streams up to it, refuses later ones (REFUSED_STREAM) and leaves
    /// the client to close the connection, closing it itself 2 s later if the client does not. Replaces any other
    /// connection script.
    public func goAway(afterStreams n: Int) {
        http2Server.setConnectionScript(.goAway(afterStreams: n))
    }

    /// Answers n streams on a connection (counted from this call on open connections), then closes the TCP
    /// connection abruptly, with neither GOAWAY nor TLS close_notify; streams past the n-th are never answered.
    /// Replaces any other connection script.
    public func dropConnections(afterStreams n: Int) {
        http2Server.setConnectionScript(.drop(afterStreams: n))
    }

    /// Like ``dropConnections(afterStreams:)``, but the connection is reset (`SO_LINGER` 0: a TCP RST instead of a
    /// FIN). Replaces any other connection script.
    public func resetConnections(afterStreams n: Int) {
        http2Server.setConnectionScript(.reset(afterStreams: n))
    }

    /// Treats connections accepted from now on as `fault` says (a stall, a TLS handshake that fails, an RST), nil
    /// serves them normally again. Connections already open are left as they are; ``closeConnections()`` ends them.
    /// - Throws: When the certificate for ``AcceptFault/untrustedCertificate`` cannot be made.
    public func setAcceptFault(_ fault: AcceptFault?) throws {
        try http2Server.setAcceptFault(fault)
    }

    /// Closes every open connection at once (TCP FIN, no GOAWAY, no TLS close_notify); the mock goes on accepting.
    public func closeConnections() {
        http2Server.closeConnections()
    }

    /// Goes down: stops listening, so connecting is refused, and resets every open connection.
    public func stopListening() async {
        await http2Server.stopListening()
    }

    /// Comes back up on the same port after ``stopListening()``.
    /// - Throws: When the port cannot be bound again.
    public func resumeListening() async throws {
        try await http2Server.resumeListening()
    }

    /// Removes the GOAWAY or drop script; connections already closing still close.
    public func clearConnectionScripts() {
        http2Server.setConnectionScript(nil)
    }

    /// The highest number of streams one connection had in service at once, to check that a client respects
    /// SETTINGS_MAX_CONCURRENT_STREAMS.
    public var peakConcurrentStreams: Int { http2Server.peakConcurrentStreams }
    /// SETTINGS frames of the server that clients have acknowledged on the open connections (the initial ones
    /// included): a new `setMaxConcurrentStreams` value is in force on a connection once its count has grown.
    public var settingsAcknowledged: Int { http2Server.settingsAcknowledged }

    /// PING frames (keep-alives) clients have sent on the open connections.
    public var pingsReceived: Int { http2Server.pingsReceived }

    /// How many TCP connections the mock has accepted.
    public var connectionCount: Int { http2Server.acceptedConnections }

    /// How many TCP connections are open now: a test waits on it for a close the mock made.
    public var openConnectionCount: Int { http2Server.openConnectionCount }

    /// Stops listening, closes every connection and waits for in-flight requests; delayed answers are abandoned.
    /// - Throws: Never in practice; reserved for channel close failures.
    public func shutdown() async throws {
        try await http2Server.shutdown()
    }
}

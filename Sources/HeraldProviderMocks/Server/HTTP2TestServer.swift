import HeraldTestSupport
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization
import X509

#if canImport(Glibc)
    import Glibc
#endif

/// The HTTP/2-over-TLS engine under the mock provider servers: it accepts connections on 127.0.0.1, hands every
/// stream's request to a handler, writes the handler's answer, and plays connection-level scripts (SETTINGS,
/// GOAWAY, abrupt drops).
public final class HTTP2TestServer: Sendable {
    /// Answers one request. Called concurrently for concurrent streams.
    typealias Handler = @Sendable (TestHTTPRequest) async -> TestHTTPResponse

    /// The bound port.
    let port: Int

    /// The listening socket and the task accepting on it; nil while the server is stopped (``stopListening()``).
    private struct Listener: Sendable {
        let channel: any Channel
        let acceptLoop: Task<Void, Never>
    }

    private let registry: Registry
    private let listener: Mutex<Listener?>
    private let sslContext: NIOSSLContext
    private let handler: Handler

    private init(
        port: Int, registry: Registry, listener: Listener, sslContext: NIOSSLContext, handler: @escaping Handler
    ) {
        self.port = port
        self.registry = registry
        self.listener = Mutex(listener)
        self.sslContext = sslContext
        self.handler = handler
    }

    /// Binds an ephemeral port on 127.0.0.1 and starts serving.
    /// - Throws: When the TLS context cannot be built or the port cannot be bound.
    static func start(
        tls: TLSConfiguration, maxConcurrentStreams: Int, handler: @escaping Handler
    ) async throws -> HTTP2TestServer {
        let sslContext = try NIOSSLContext(configuration: tls)
        let registry = Registry(maxConcurrentStreams: maxConcurrentStreams)
        let (port, listener) = try await listen(port: 0, sslContext: sslContext, registry: registry, handler: handler)
        return HTTP2TestServer(
            port: port, registry: registry, listener: listener, sslContext: sslContext, handler: handler)
    }

    private static func listen(
        port: Int, sslContext: NIOSSLContext, registry: Registry, handler: @escaping Handler
    ) async throws -> (Int, Listener) {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .bind(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try Self.configure(channel, sslContext: sslContext, registry: registry)
                }
            }
        guard let port = channel.channel.localAddress?.port else {
            try? await channel.channel.close()
            throw MockServerError.notListening()
        }
        let acceptLoop = Task {
            await withDiscardingTaskGroup { group in
                do {
                    try await channel.executeThenClose { connections in
                        for try await accepted in connections {
                            switch accepted {
                            case .http2(let connection):
                                group.addTask { await Self.serve(connection, handler: handler) }
                            case .reset(let channel):
                                // SO_LINGER 0: close() sends an RST.
                                _ = (channel as? any SocketOptionProvider)?.setSoLinger(
                                    linger(l_onoff: 1, l_linger: 0))
                                channel.close(promise: nil)
                            case .faulted:
                                break
                            }
                        }
                    }
                } catch {
                    // The listening socket closed: the server is shutting down or stopped listening.
                }
            }
        }
        return (port, Listener(channel: channel.channel, acceptLoop: acceptLoop))
    }

    /// Changes SETTINGS_MAX_CONCURRENT_STREAMS: announced at once on every open connection, and in the initial
    /// SETTINGS of new ones.
    func setMaxConcurrentStreams(_ value: Int) {
        for connection in registry.setMaxConcurrentStreams(value) {
            connection.announce(maxConcurrentStreams: value)
        }
    }

    /// Installs a connection script for open and future connections, counting streams from the next one; nil removes
    /// it.
    func setConnectionScript(_ script: ConnectionScript?) {
        registry.setScript(script)
    }

    /// The highest number of streams any one connection had open at once.
    var peakConcurrentStreams: Int {
        registry.peakConcurrentStreams
    }

    /// SETTINGS frames of the server that clients have acknowledged on the open connections.
    var settingsAcknowledged: Int {
        registry.openConnections.reduce(0) { $0 + $1.settingsAcknowledged }
    }

    /// PING frames clients have sent on the open connections.
    var pingsReceived: Int {
        registry.openConnections.reduce(0) { $0 + $1.pingsReceived }
    }

    /// How many connections the server has accepted.
    var acceptedConnections: Int {
        registry.acceptedConnections
    }

    /// How many connections are open now (accepted and not closed).
    var openConnectionCount: Int {
        registry.openConnections.count
    }

    /// Stops listening, closes every connection and waits for in-flight handlers (sleeping ones are cancelled).
    func shutdown() async throws {
        let connections = registry.shutDown()
        let listener = self.listener.withLock { $0 }
        try? await listener?.channel.close()
        for connection in connections {
            connection.channel.close(promise: nil)
        }
        listener?.acceptLoop.cancel()
        await listener?.acceptLoop.value
    }

    /// Treats connections accepted from now on as `fault` says, before any HTTP/2; nil serves them normally again.
    /// Connections already open are left as they are.
    /// - Throws: When the certificate for ``AcceptFault/untrustedCertificate`` cannot be made.
    func setAcceptFault(_ fault: AcceptFault?) throws {
        var untrusted: NIOSSLContext?
        if fault == .untrustedCertificate {
            // A certificate for the right host from a CA nobody trusts.
            untrusted = try NIOSSLContext(configuration: try TestCertificateAuthority().serverTLSConfiguration())
        }
        registry.setAcceptFault(fault, untrustedContext: untrusted)
    }

    /// Closes every open connection at once (TCP FIN, no GOAWAY); the server goes on accepting.
    func closeConnections() {
        for connection in registry.openConnections {
            connection.channel.close(promise: nil)
        }
    }

    /// Stops listening (connecting to the port is refused) and resets every open connection, as a provider host
    /// that goes down; ``resumeListening()`` brings it back on the same port.
    func stopListening() async {
        let listener = self.listener.withLock { listener in
            defer { listener = nil }
            return listener
        }
        guard let listener else { return }
        try? await listener.channel.close()
        for connection in registry.openConnections {
            let channel = connection.channel
            channel.eventLoop.execute {
                _ = (channel as? any SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0))
                channel.close(promise: nil)
            }
        }
        listener.acceptLoop.cancel()
        await listener.acceptLoop.value
    }

    /// Listens again on the same port after ``stopListening()``; does nothing while listening.
    /// - Throws: When the port cannot be bound again (another process took it meanwhile).
    func resumeListening() async throws {
        guard listener.withLock({ $0 == nil }) else { return }
        let (_, listener) = try await Self.listen(
            port: port, sslContext: sslContext, registry: registry, handler: handler)
        self.listener.withLock { $0 = listener }
    }

    // MARK: Pipeline

    private struct AcceptedConnection: Sendable {
        let connection: TestServerConnection
        let multiplexer: NIOHTTP2Handler.AsyncStreamMultiplexer<AcceptedStream>
    }

    private struct AcceptedStream: Sendable {
        let channel: any Channel
        let streamID: Int
        let disposition: StreamDisposition
        let clientCertificate: Certificate?
        let request: EventLoopFuture<CollectedRequest>
    }

    /// What the accept loop gets for a new connection.
    private enum Accepted: Sendable {
        /// A connection to serve.
        case http2(AcceptedConnection)
        /// A connection to reset at once (``AcceptFault/reset``).
        case reset(any Channel)
        /// A connection left to its fault (stalled, or failing its TLS handshake).
        case faulted
    }

    private static func configure(
        _ channel: any Channel, sslContext: NIOSSLContext, registry: Registry
    ) throws -> Accepted {
        let sync = channel.pipeline.syncOperations
        switch registry.acceptFault {
        case (.reset?, _):
            _ = registry.register(channel)
            return .reset(channel)
        case (.untrustedCertificate?, let untrusted?):
            try sync.addHandler(NIOSSLServerHandler(context: untrusted))
            _ = registry.register(channel)
            return .faulted
        case (.stall?, _):
            // TLS completes; what arrives after it is read and dropped, and nothing is ever written.
            try sync.addHandler(NIOSSLServerHandler(context: sslContext))
            _ = registry.register(channel)
            return .faulted
        case (nil, _), (.untrustedCertificate?, nil):
            return .http2(try configureHTTP2(channel, sslContext: sslContext, registry: registry))
        }
    }

    private static func configureHTTP2(
        _ channel: any Channel, sslContext: NIOSSLContext, registry: Registry
    ) throws -> AcceptedConnection {
        let sync = channel.pipeline.syncOperations
        try sync.addHandler(NIOSSLServerHandler(context: sslContext))
        let (connection, maxConcurrentStreams) = registry.register(channel)

        var configuration = NIOHTTP2Handler.Configuration()
        configuration.connection.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: HPACKDecoder.defaultMaxHeaderListSize),
        ]
        // A mock is driven hard on purpose (resets, refused streams, thousands of requests): switch off the
        // denial-of-service heuristics that would otherwise close the connection under test.
        configuration.connection.maximumConnectionGlitches = Int.max / 2
        configuration.connection.maximumRecentlyResetStreams = 100_000
        configuration.stream.streamResetFrameRateLimit.maximumCount = Int.max / 2
        configuration.stream.streamErrorRateLimit.maximumCount = Int.max / 2

        let multiplexer = try sync.configureAsyncHTTP2Pipeline(mode: .server, configuration: configuration) { stream in
            stream.eventLoop.makeCompletedFuture {
                let streamID = Int(try stream.syncOptions!.getOption(HTTP2StreamChannelOptions.streamID))
                let (script, generation) = registry.currentScript
                let disposition = connection.streamOpened(streamID: streamID, script: script, generation: generation)
                let clientCertificate = connection.clientCertificate()
                stream.closeFuture.whenComplete { _ in connection.streamClosed() }
                let promise = stream.eventLoop.makePromise(of: CollectedRequest.self)
                try stream.pipeline.syncOperations.addHandler(StreamRequestCollector(promise: promise))
                return AcceptedStream(
                    channel: stream, streamID: streamID, disposition: disposition,
                    clientCertificate: clientCertificate, request: promise.futureResult)
            }
        }
        try sync.addHandler(ConnectionFrameCounter(connection: connection))
        return AcceptedConnection(connection: connection, multiplexer: multiplexer)
    }

    // MARK: Serving

    private static func serve(_ accepted: AcceptedConnection, handler: @escaping Handler) async {
        await withDiscardingTaskGroup { group in
            do {
                for try await stream in accepted.multiplexer.inbound {
                    group.addTask { await serve(stream, on: accepted.connection, handler: handler) }
                }
            } catch {
                // The connection failed (TLS, protocol error, reset): its streams end with it.
            }
        }
    }

    private static func serve(
        _ stream: AcceptedStream, on connection: TestServerConnection, handler: @escaping Handler
    ) async {
        let counted: Bool
        switch stream.disposition {
        case .refuse:
            // REFUSED_STREAM, as a server does for a stream it will not process (RFC 9113 §8.7): a plain close
            // would reset it with CANCEL, which a client that has not yet read the GOAWAY must take as a failure
            // (the stream may have been processed), not as a stream to retry.
            stream.channel.writeAndFlush(HTTP2Frame.FramePayload.rstStream(.refusedStream), promise: nil)
            return
        case .hold:
            try? await stream.channel.closeFuture.get()
            return
        case .serve(let isCounted):
            counted = isCounted
        }
        defer { connection.streamFinished(counted: counted) }
        do {
            let collected = try await stream.request.get()
            let response = await handler(request(from: collected, on: connection.id, stream: stream))
            if response.delay > .zero {
                try await Task.sleep(for: response.delay)
            }
            try await write(response, to: stream.channel)
        } catch {
            stream.channel.close(promise: nil)
        }
    }

    private static func request(
        from collected: CollectedRequest, on connectionID: Int, stream: AcceptedStream
    ) -> TestHTTPRequest {
        var method = ""
        var path = ""
        var headers: [(String, String)] = []
        for (name, value, _) in collected.headers {
            switch name {
            case ":method": method = value
            case ":path": path = value
            case _ where name.hasPrefix(":"): break
            default: headers.append((name, value))
            }
        }
        return TestHTTPRequest(
            method: method, path: path, headers: headers, body: Array(buffer: collected.body),
            connectionID: connectionID, streamID: stream.streamID, clientCertificate: stream.clientCertificate)
    }

    private static func write(_ response: TestHTTPResponse, to channel: any Channel) async throws {
        var headers = HPACKHeaders([(":status", String(response.status))])
        for (name, value) in response.headers {
            headers.add(name: name, value: value)
        }
        if response.body.isEmpty {
            try await channel.writeAndFlush(HTTP2Frame.FramePayload.headers(.init(headers: headers, endStream: true)))
                .get()
        } else {
            channel.write(HTTP2Frame.FramePayload.headers(.init(headers: headers)), promise: nil)
            let body = channel.allocator.buffer(bytes: response.body)
            // Awaiting the last frame's write means the response has reached the socket before the stream counts
            // as finished, which the drop script relies on.
            try await channel.writeAndFlush(
                HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(body), endStream: true))
            ).get()
        }
    }
}

extension HTTP2TestServer {
    /// The server's shared state: open connections, the SETTINGS value and the connection script.
    final class Registry: Sendable {
        private struct State {
            var connections: [Int: TestServerConnection] = [:]
            var nextConnectionID = 1
            var maxConcurrentStreams: Int
            var script: ConnectionScript?
            var scriptGeneration = 0
            var peakConcurrentStreams = 0
            var isShutDown = false
            var acceptFault: AcceptFault?
            var untrustedContext: NIOSSLContext?
        }

        private let state: Mutex<State>

        init(maxConcurrentStreams: Int) {
            state = Mutex(State(maxConcurrentStreams: maxConcurrentStreams))
        }

        var currentScript: (ConnectionScript?, Int) {
            state.withLock { ($0.script, $0.scriptGeneration) }
        }

        var acceptedConnections: Int {
            state.withLock { $0.nextConnectionID - 1 }
        }

        var peakConcurrentStreams: Int {
            let (peak, open) = state.withLock { ($0.peakConcurrentStreams, Array($0.connections.values)) }
            return open.reduce(peak) { max($0, $1.peakOpenStreams) }
        }

        func register(_ channel: any Channel) -> (TestServerConnection, maxConcurrentStreams: Int) {
            let (connection, maxConcurrentStreams, isShutDown) = state.withLock { state in
                let connection = TestServerConnection(id: state.nextConnectionID, channel: channel)
                state.nextConnectionID += 1
                if !state.isShutDown {
                    state.connections[connection.id] = connection
                }
                return (connection, state.maxConcurrentStreams, state.isShutDown)
            }
            if isShutDown {
                channel.close(promise: nil)
            } else {
                channel.closeFuture.whenComplete { _ in self.unregister(connection) }
            }
            return (connection, maxConcurrentStreams)
        }

        var acceptFault: (AcceptFault?, NIOSSLContext?) {
            state.withLock { ($0.acceptFault, $0.untrustedContext) }
        }

        var openConnections: [TestServerConnection] {
            state.withLock { Array($0.connections.values) }
        }

        func setAcceptFault(_ fault: AcceptFault?, untrustedContext: NIOSSLContext?) {
            state.withLock { state in
                state.acceptFault = fault
                state.untrustedContext = untrustedContext
            }
        }

        func setMaxConcurrentStreams(_ value: Int) -> [TestServerConnection] {
            state.withLock { state in
                state.maxConcurrentStreams = value
                return Array(state.connections.values)
            }
        }

        func setScript(_ script: ConnectionScript?) {
            state.withLock { state in
                state.script = script
                state.scriptGeneration += 1
            }
        }

        func shutDown() -> [TestServerConnection] {
            state.withLock { state in
                state.isShutDown = true
                return Array(state.connections.values)
            }
        }

        private func unregister(_ connection: TestServerConnection) {
            let peak = connection.peakOpenStreams
            state.withLock { state in
                state.connections[connection.id] = nil
                state.peakConcurrentStreams = max(state.peakConcurrentStreams, peak)
            }
        }
    }
}

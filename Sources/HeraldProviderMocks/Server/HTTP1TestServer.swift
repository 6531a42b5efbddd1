import HeraldTestSupport
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// An HTTP/1.1-over-TLS engine for mocks of services that do not speak HTTP/2: it accepts
/// connections on 127.0.0.1 (ALPN offering only `http/1.1`), hands each request to a handler and
/// writes its answer, keeping connections alive between requests.
final class HTTP1TestServer: Sendable {
    /// Answers one request. Requests on one connection are answered in order.
    typealias Handler = @Sendable (TestHTTPRequest) async -> TestHTTPResponse

    private typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

    private struct State {
        var accepted = 0
        var open: [Int: any Channel] = [:]
        var isShutDown = false
    }

    /// The bound port.
    let port: Int

    private let serverChannel: any Channel
    private let acceptLoop: Mutex<Task<Void, Never>?>
    private let state: Mutex<State>

    private init(port: Int, serverChannel: any Channel) {
        self.port = port
        self.serverChannel = serverChannel
        self.state = Mutex(State())
        self.acceptLoop = Mutex(nil)
    }

    /// Binds an ephemeral port on 127.0.0.1 and starts serving; `tls`'s ALPN list is replaced by
    /// `http/1.1`. Without `tls` it serves plain HTTP/1.1.
    /// - Throws: When the TLS context cannot be built or the port cannot be bound.
    static func start(tls: TLSConfiguration?, handler: @escaping Handler) async throws -> HTTP1TestServer {
        let sslContext = try tls.map { tls in
            var tls = tls
            tls.applicationProtocols = ["http/1.1"]
            return try NIOSSLContext(configuration: tls)
        }
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .bind(host: "127.0.0.1", port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let sslContext { try sync.addHandler(NIOSSLServerHandler(context: sslContext)) }
                    try sync.configureHTTPServerPipeline()
                    return try Connection(wrappingChannelSynchronously: channel)
                }
            }
        guard let port = channel.channel.localAddress?.port else {
            try? await channel.channel.close()
            throw MockServerError.notListening()
        }
        let server = HTTP1TestServer(port: port, serverChannel: channel.channel)
        let loop = Task {
            await withDiscardingTaskGroup { group in
                do {
                    try await channel.executeThenClose { connections in
                        for try await connection in connections {
                            guard let id = server.register(connection.channel) else {
                                try? await connection.channel.close()
                                continue
                            }
                            group.addTask {
                                await Self.serve(connection, id: id, handler: handler)
                                server.unregister(id)
                            }
                        }
                    }
                } catch {
                    // The listening socket closed: the server is shutting down.
                }
            }
        }
        server.acceptLoop.withLock { $0 = loop }
        return server
    }

    /// How many connections the server has accepted.
    var acceptedConnections: Int {
        state.withLock { $0.accepted }
    }

    /// Stops listening, closes every connection and waits for in-flight handlers.
    func shutdown() async throws {
        let connections = state.withLock { state in
            state.isShutDown = true
            return Array(state.open.values)
        }
        try? await serverChannel.close()
        for connection in connections { connection.close(promise: nil) }
        let loop = acceptLoop.withLock { $0 }
        loop?.cancel()
        await loop?.value
    }

    private func register(_ channel: any Channel) -> Int? {
        state.withLock { state in
            guard !state.isShutDown else { return nil }
            state.accepted += 1
            state.open[state.accepted] = channel
            return state.accepted
        }
    }

    private func unregister(_ id: Int) {
        _ = state.withLock { $0.open.removeValue(forKey: id) }
    }

    private static func serve(_ connection: Connection, id: Int, handler: @escaping Handler) async {
        do {
            try await connection.executeThenClose { inbound, outbound in
                var head: HTTPRequestHead?
                var body: [UInt8] = []
                var served = 0
                for try await part in inbound {
                    switch part {
                    case .head(let value):
                        head = value
                        body = []
                    case .body(let bytes):
                        body.append(contentsOf: bytes.readableBytesView)
                    case .end:
                        guard let request = head else { continue }
                        served += 1
                        let response = await handler(
                            TestHTTPRequest(
                                method: request.method.rawValue, path: request.uri,
                                headers: request.headers.map { ($0.name.lowercased(), $0.value) }, body: body,
                                connectionID: id, streamID: served, clientCertificate: nil))
                        if response.delay > .zero { try await Task.sleep(for: response.delay) }
                        var headers = HTTPHeaders(response.headers)
                        headers.add(name: "content-length", value: String(response.body.count))
                        try await outbound.write(
                            .head(
                                HTTPResponseHead(
                                    version: .http1_1, status: HTTPResponseStatus(statusCode: response.status),
                                    headers: headers)))
                        if !response.body.isEmpty {
                            try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: response.body))))
                        }
                        try await outbound.write(.end(nil))
                        head = nil
                    }
                }
            }
        } catch {
            // The connection failed or was closed by a shutdown; its requests end with it.
        }
    }
}

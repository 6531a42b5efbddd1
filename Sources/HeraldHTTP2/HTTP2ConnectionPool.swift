import HeraldCore
import Logging
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// Herald's HTTP/2 client for provider traffic: long-lived TLS connections (ALPN `h2`) to one host,
/// streams spread over the least-loaded connection, frames of many requests flushed once per
/// event-loop turn, the peer's stream limit and flow control honoured, PING keep-alive, request and
/// read timeouts, GOAWAY drained with unprocessed requests retried on another connection, and
/// reconnects with full-jitter backoff. Every request ends in a response or an error.
public final class HTTP2ConnectionPool: Sendable {
    private final class Connection: Sendable {
        let id: Int
        let channel: any Channel
        let handler: NIOLoopBound<HTTP2ClientConnectionHandler>
        let load = ConnectionLoad()

        init(id: Int, channel: any Channel, handler: HTTP2ClientConnectionHandler) {
            self.id = id
            self.channel = channel
            self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
        }

        /// Hands requests to the connection's handler in one event-loop task.
        func submit(_ requests: [PooledRequest]) {
            load.count.add(requests.count, ordering: .relaxed)
            for request in requests { request.carrier = load }
            if channel.eventLoop.inEventLoop {
                for request in requests { handler.value.submit(request) }
            } else {
                channel.eventLoop.execute { for request in requests { self.handler.value.submit(request) } }
            }
        }
    }

    private struct State {
        var live: [Connection] = []
        var connecting = 0
        var waiting: [PooledRequest] = []
        var consecutiveFailures = 0
        var nextConnectAt = NIODeadline.uptimeNanoseconds(0)
        var nextID = 0
        var isShutdown = false
    }

    private let configuration: HTTP2PoolConfiguration
    private let group: any EventLoopGroup
    private let sslContext: NIOSSLContext
    private let logger: Logger
    private let state = Mutex(State())

    /// Creates a pool; connections open on first use.
    /// - Throws: NIOSSL errors for an unusable TLS configuration.
    public init(
        configuration: HTTP2PoolConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "herald.http2")
    ) throws {
        var tls = configuration.tls
        tls.applicationProtocols = configuration.offersHTTP1 ? ["h2", "http/1.1"] : ["h2"]
        self.sslContext = try NIOSSLContext(configuration: tls)
        self.configuration = configuration
        self.group = eventLoopGroup
        self.logger = logger
    }

    /// Connections open now.
    public var connectionCount: Int { state.withLock { $0.live.count } }

    /// The pool's use now.
    public var statistics: ConnectionPoolStatistics {
        state.withLock { state in
            ConnectionPoolStatistics(
                connections: state.live.count, connecting: state.connecting,
                streamsInUse: state.live.reduce(0) { $0 + $1.load.count.load(ordering: .relaxed) },
                waiting: state.waiting.count)
        }
    }

    /// Sends a request and waits for its complete response.
    /// - Throws: `HTTP2ClientError` when it ends without one.
    public func execute(_ request: HTTP2Request) async throws -> HTTP2Response {
        try await submit(request).get()
    }

    /// Sends a request; the future completes with its response or an `HTTP2ClientError`.
    public func submit(_ request: HTTP2Request) -> EventLoopFuture<HTTP2Response> {
        let promise = group.any().makePromise(of: HTTP2Response.self)
        dispatch(
            PooledRequest(
                request: request, sink: .promise(promise), deadline: .now() + configuration.requestTimeout,
                duration: configuration.requestDuration))
        return promise.futureResult
    }

    /// Sends many requests at once and returns every result, in order, when the last one ends:
    /// one event-loop task to submit them and one wake-up to collect them, instead of one each.
    public func execute(batch requests: [HTTP2Request]) async -> [Result<HTTP2Response, HTTP2ClientError>] {
        guard !requests.isEmpty else { return [] }
        let deadline = NIODeadline.now() + configuration.requestTimeout
        return await withCheckedContinuation { continuation in
            let batch = HTTP2Batch(count: requests.count, continuation: continuation)
            let pooled = requests.enumerated().map { index, request in
                PooledRequest(
                    request: request, sink: .batch(batch, index: index), deadline: deadline,
                    duration: configuration.requestDuration)
            }
            dispatch(pooled)
        }
    }

    /// Closes every connection; requests still in flight fail.
    public func shutdown() async {
        let (connections, waiting) = state.withLock { state in
            state.isShutdown = true
            defer { state.waiting.removeAll() }
            return (state.live, state.waiting)
        }
        for request in waiting { request.fail(.shutdown) }
        for connection in connections { try? await connection.channel.close() }
    }

    private enum Route {
        /// Submit on this connection; open another one too when the pool is below its size.
        case connection(Connection, openAnother: Bool)
        /// Wait (queued in the state) for a connection being opened.
        case wait(openAnother: Bool)
        case fail(HTTP2ClientError)
    }

    private func dispatch(_ request: PooledRequest) {
        dispatch([request])
    }

    /// Routes requests to the least-loaded live connection, or queues them for one being opened.
    private func dispatch(_ requests: [PooledRequest]) {
        let now = NIODeadline.now()
        var ready: [PooledRequest] = []
        ready.reserveCapacity(requests.count)
        for request in requests {
            request.attempts += 1
            if request.attempts > configuration.maxAttempts {
                request.fail(.retriesExhausted)
            } else if now >= request.deadline {
                request.fail(.requestTimeout)
            } else {
                ready.append(request)
            }
        }
        guard !ready.isEmpty else { return }
        let route = state.withLock { state -> Route in
            if state.isShutdown { return .fail(.shutdown) }
            let wantMore = state.live.count + state.connecting < configuration.connections
            let canConnect = wantMore && NIODeadline.now() >= state.nextConnectAt
            if canConnect { state.connecting += 1 }
            if let best = state.live.min(by: {
                $0.load.count.load(ordering: .relaxed) < $1.load.count.load(ordering: .relaxed)
            }) {
                return .connection(best, openAnother: canConnect)
            }
            // Requests wait for a connection being opened, unless the host is failing: then only the
            // requests that open a new attempt wait for it (a probe), and the others fail at once
            // instead of each waiting out a connect timeout behind an attempt that may stall too.
            if canConnect || (state.connecting > 0 && state.consecutiveFailures == 0) {
                state.waiting.append(contentsOf: ready)
                return .wait(openAnother: canConnect)
            }
            return .fail(.connectFailed("no connection to \(configuration.host) (reconnecting after failures)"))
        }
        switch route {
        case .connection(let connection, let openAnother):
            connection.submit(ready)
            if openAnother { openConnection() }
        case .wait(let openAnother):
            if openAnother { openConnection() }
        case .fail(let error):
            for request in ready { request.fail(error) }
        }
    }

    private func openConnection() {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let configuration = self.configuration
        let sslContext = self.sslContext
        let serverName = configuration.host.isIPAddress ? nil : configuration.host
        let retry: @Sendable (PooledRequest) -> Void = { [weak self] in self?.dispatch($0) }
        let retired: @Sendable () -> Void = { [weak self] in self?.retire(id) }
        let refusal = Refusal()
        ClientBootstrap(group: group)
            .connectTimeout(configuration.connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverName))
                    try sync.addHandler(ALPNCheckHandler(host: configuration.host, refused: refusal.set))
                    // One TLS record run per flush instead of a record per frame buffer.
                    try sync.addHandler(WriteCoalescingHandler())
                    try sync.addHandler(
                        NIOHTTP2Handler(
                            mode: .client,
                            initialSettings: [
                                HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
                                HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
                                HTTP2Setting(parameter: .enablePush, value: 0),
                            ],
                            // Herald builds its own header blocks (lower-case, no connection headers).
                            headerBlockValidation: .disabled, contentLengthValidation: .disabled))
                    try sync.addHandler(
                        HTTP2ClientConnectionHandler(
                            configuration: configuration, retry: retry, retired: retired))
                }
            }
            .connect(host: configuration.host, port: configuration.port)
            .flatMap { channel in
                channel.pipeline.handler(type: HTTP2ClientConnectionHandler.self).flatMap { handler in
                    let bound = NIOLoopBound(handler, eventLoop: channel.eventLoop)
                    channel.closeFuture.whenComplete { _ in bound.value.closed() }
                    // Live only once TLS is up and the server's HTTP/2 preface has arrived.
                    return (handler.ready ?? channel.eventLoop.makeSucceededVoidFuture()).map {
                        Connection(id: id, channel: channel, handler: bound.value)
                    }
                }
            }
            .whenComplete { [weak self] result in
                self?.connected(result.mapError { refusal.error ?? $0 })
            }
    }

    private func connected(_ result: Result<Connection, any Error>) {
        switch result {
        case .success(let connection):
            let (waiting, shutdown) = state.withLock { state in
                state.connecting -= 1
                state.consecutiveFailures = 0
                state.live.append(connection)
                defer { state.waiting.removeAll() }
                return (state.waiting, state.isShutdown)
            }
            if shutdown {
                connection.channel.close(promise: nil)
            }
            logger.debug("http2 connection open", metadata: ["herald.host": "\(configuration.host)"])
            connection.submit(waiting)
        case .failure(let error):
            let waiting = state.withLock { state in
                state.connecting -= 1
                state.consecutiveFailures += 1
                state.nextConnectAt = .now() + backoff(failures: state.consecutiveFailures)
                guard state.connecting == 0 else { return [PooledRequest]() }
                defer { state.waiting.removeAll() }
                return state.waiting
            }
            logger.warning(
                "http2 connect failed", metadata: ["herald.host": "\(configuration.host)", "error": "\(error)"])
            // The pool's own reasons (a host that does not speak HTTP/2) name the host already.
            let failure = (error as? HTTP2ClientError) ?? .connectFailed("\(configuration.host): \(error)")
            for request in waiting { request.fail(failure) }
        }
    }

    private func retire(_ id: Int) {
        state.withLock { state in state.live.removeAll { $0.id == id } }
    }

    /// Full jitter (a uniform delay up to the capped exponential step), so reconnecting clients spread out.
    private func backoff(failures: Int) -> TimeAmount {
        let step = configuration.reconnectBase.nanoseconds << min(failures, 30)
        let cap = min(step, configuration.reconnectCap.nanoseconds)
        return .nanoseconds(Int64.random(in: 0...max(cap, 1)))
    }
}

/// Why a connection's handshake refused HTTP/2, once it is known.
private final class Refusal: Sendable {
    private let value = Mutex<HTTP2ClientError?>(nil)

    var error: HTTP2ClientError? { value.withLock { $0 } }

    @Sendable func set(_ error: HTTP2ClientError) { value.withLock { $0 = error } }
}

extension String {
    fileprivate var isIPAddress: Bool {
        (try? SocketAddress(ipAddress: self, port: 0)) != nil
    }
}

/// Collects the results of a batch and resumes its caller once, when the last one arrives.
final class HTTP2Batch: Sendable {
    private struct State {
        var results: [Result<HTTP2Response, HTTP2ClientError>?]
        var remaining: Int
        var continuation: CheckedContinuation<[Result<HTTP2Response, HTTP2ClientError>], Never>?
    }

    private let state: Mutex<State>

    init(count: Int, continuation: CheckedContinuation<[Result<HTTP2Response, HTTP2ClientError>], Never>) {
        state = Mutex(State(results: Array(repeating: nil, count: count), remaining: count, continuation: continuation))
    }

    func set(_ index: Int, _ result: Result<HTTP2Response, HTTP2ClientError>) {
        let finished = state.withLock {
            state -> (
                [Result<HTTP2Response, HTTP2ClientError>],
                CheckedContinuation<[Result<HTTP2Response, HTTP2ClientError>], Never>
            )? in
            guard state.results[index] == nil else { return nil }
            state.results[index] = result
            state.remaining -= 1
            guard state.remaining == 0, let continuation = state.continuation else { return nil }
            state.continuation = nil
            return (state.results.map { $0! }, continuation)
        }
        if let (results, continuation) = finished { continuation.resume(returning: results) }
    }
}

import CoreMetrics
import NIOCore
import NIOHPACK
import NIOHTTP2
import Synchronization

/// A request travelling through the pool, with where its result goes.
final class PooledRequest: @unchecked Sendable {
    // Mutated only on the event loop of the connection currently carrying it.

    /// Where the result goes: a promise for single requests, a slot of a batch.
    enum Sink {
        case promise(EventLoopPromise<HTTP2Response>)
        case batch(HTTP2Batch, index: Int)
    }

    let request: HTTP2Request
    let sink: Sink
    let deadline: NIODeadline
    var attempts = 0
    /// The load counter of the connection carrying the request.
    var carrier: ConnectionLoad?
    /// When the request was submitted, and where its duration is recorded.
    let submitted: NIODeadline
    let duration: CoreMetrics.Timer?

    init(request: HTTP2Request, sink: Sink, deadline: NIODeadline, duration: CoreMetrics.Timer? = nil) {
        self.request = request
        self.sink = sink
        self.deadline = deadline
        self.duration = duration
        self.submitted = duration == nil ? deadline : .now()
    }

    private func recordDuration() {
        guard let duration else { return }
        duration.recordNanoseconds((NIODeadline.now() - submitted).nanoseconds)
    }

    /// The request leaves its connection (answered, failed, or going elsewhere).
    func leave() {
        carrier?.count.subtract(1, ordering: .relaxed)
        carrier = nil
    }

    func succeed(_ response: HTTP2Response) {
        leave()
        recordDuration()
        switch sink {
        case .promise(let promise): promise.succeed(response)
        case .batch(let batch, let index): batch.set(index, .success(response))
        }
    }

    func fail(_ error: HTTP2ClientError) {
        leave()
        recordDuration()
        switch sink {
        case .promise(let promise): promise.fail(error)
        case .batch(let batch, let index): batch.set(index, .failure(error))
        }
    }
}

/// How many requests a connection carries, read by the pool to pick the least-loaded one.
final class ConnectionLoad: Sendable {
    let count = Atomic<Int>(0)
}

/// Sits behind `NIOHTTP2Handler` on the connection channel (no stream multiplexer): it writes each
/// request as HEADERS and DATA frames with explicit stream ids, flushes once per event-loop turn,
/// reads response frames, and performs what ``HTTP2ConnectionStateMachine`` decides.
final class HTTP2ClientConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundIn = Never
    typealias OutboundOut = HTTP2Frame

    private struct ResponseBuilder {
        var status: Int?
        var headers = HPACKHeaders()
        var body: ByteBuffer?
    }

    private var machine: HTTP2ConnectionStateMachine<PooledRequest>
    private var responses: [Int: ResponseBuilder] = [:]
    /// Response bytes received on the connection and not yet returned with WINDOW_UPDATE.
    private var connectionWindowDebt = 0

    /// Sweeps open streams for passed deadlines (one timer per connection, not one per request).
    private var deadlineSweep: RepeatedTask?
    private var context: ChannelHandlerContext?
    private var flushScheduled = false
    private var lastReadAt = NIODeadline.now()
    private var pingSentAt: NIODeadline?
    private var keepAlive: RepeatedTask?
    private let configuration: HTTP2PoolConfiguration
    private let requestHeaders: HPACKHeaders
    /// Called with requests this connection did not process, to try them elsewhere.
    private let retry: @Sendable (PooledRequest) -> Void
    /// Called once when the connection stops taking requests (GOAWAY or close).
    private let retired: @Sendable () -> Void
    private var didRetire = false

    init(
        configuration: HTTP2PoolConfiguration, retry: @escaping @Sendable (PooledRequest) -> Void,
        retired: @escaping @Sendable () -> Void
    ) {
        self.configuration = configuration
        self.machine = HTTP2ConnectionStateMachine(
            initialMaxConcurrentStreams: configuration.initialMaxConcurrentStreams,
            streamCap: configuration.maxStreamsPerConnection,
            maxPending: configuration.maxPendingPerConnection)
        let authority = configuration.port == 443 ? configuration.host : "\(configuration.host):\(configuration.port)"
        self.requestHeaders = [":scheme": "https", ":authority": authority]
        self.retry = retry
        self.retired = retired
    }

    /// Requests on this connection, sent or waiting.
    var load: Int { machine.load }

    /// Completes when the connection is ready for requests (TLS is up and the server's preface, its
    /// first SETTINGS, has arrived); fails if it closes before, or when that takes longer than the
    /// configuration's `connectTimeout`.
    private(set) var ready: EventLoopFuture<Void>?
    private var readiness: EventLoopPromise<Void>?
    /// Closes a connection that is not ready within `connectTimeout` (a server that accepts and then
    /// sends nothing, in the TLS handshake or after it).
    private var establishmentTimer: Scheduled<Void>?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let promise = context.eventLoop.makePromise(of: Void.self)
        readiness = promise
        ready = promise.futureResult
        let timeout = configuration.connectTimeout
        establishmentTimer = context.eventLoop.scheduleTask(in: timeout) { [weak self] in
            guard let self, let readiness = self.readiness else { return }
            self.readiness = nil
            readiness.fail(
                HTTP2ClientError.connectFailed(
                    "no TLS handshake and HTTP/2 preface from the server within \(timeout.nanoseconds / 1_000_000) ms"))
            self.context?.close(promise: nil)
        }
        let interval = min(configuration.pingInterval, configuration.readTimeout, configuration.pingTimeout)
        keepAlive = context.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) {
            [weak self] _ in self?.checkLiveness()
        }
        deadlineSweep = context.eventLoop.scheduleRepeatedTask(
            initialDelay: .milliseconds(50), delay: .milliseconds(50)
        ) { [weak self] _ in self?.sweepDeadlines() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        establishmentTimer?.cancel()
        keepAlive?.cancel()
        deadlineSweep?.cancel()
        // A channel that closes before it ever connected never saw channelActive or channelInactive.
        closed()
        self.context = nil
    }

    /// Takes a request; must run on the channel's event loop.
    func submit(_ request: PooledRequest) {
        perform(machine.enqueue(request))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastReadAt = .now()
        let frame = unwrapInboundIn(data)
        let id = Int(frame.streamID)
        switch frame.payload {
        case .headers(let headers):
            guard machine.open[id] != nil else { return }
            var builder = responses[id] ?? ResponseBuilder()
            if builder.status == nil, let status = headers.headers.first(name: ":status").flatMap(Int.init) {
                // 1xx responses are interim (RFC 9113 §8.1); the final one follows.
                if status >= 200 { builder.status = status }
                for (name, value, _) in headers.headers where !name.hasPrefix(":") {
                    builder.headers.add(name: name, value: value)
                }
            } else {
                for (name, value, _) in headers.headers where !name.hasPrefix(":") {
                    builder.headers.add(name: name, value: value)
                }
            }
            responses[id] = builder
            if headers.endStream { finish(stream: id) }
        case .data(let data):
            returnConnectionWindow(data.data.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0))
            guard machine.open[id] != nil else { return }
            if case .byteBuffer(var bytes) = data.data {
                if responses[id]?.body == nil {
                    responses[id, default: ResponseBuilder()].body = bytes
                } else {
                    responses[id]?.body?.writeBuffer(&bytes)
                }
            }
            if data.endStream { finish(stream: id) }
        case .rstStream(let code):
            responses[id] = nil
            perform(machine.streamReset(id, refused: code == .refusedStream, errorCode: UInt32(code.networkCode)))
        case .goAway(let lastStreamID, _, _):
            retire()
            perform(machine.goAwayReceived(lastStreamID: Int(lastStreamID)))
        case .settings(.settings(let settings)):
            let limit = settings.last(where: { $0.parameter == .maxConcurrentStreams })?.value
            perform(machine.settingsReceived(maxConcurrentStreams: limit))
            // The server's preface (RFC 9113 §3.4): the connection is ready.
            establishmentTimer?.cancel()
            establishmentTimer = nil
            readiness?.succeed()
            readiness = nil
        case .ping(_, ack: true):
            pingSentAt = nil
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed()
        context.fireChannelInactive()
    }

    /// TLS is up and Herald's preface is out (NIOSSLHandler forwards channelActive once the
    /// handshake completes, and NIOHTTP2Handler writes its preface then); the connection is ready
    /// once the server's preface arrives.
    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        // Open the connection window from RFC 9113's 65,535 bytes to the target at once.
        if configuration.connectionWindowSize > 65_535 {
            context.writeAndFlush(
                wrapOutboundOut(
                    HTTP2Frame(
                        streamID: .rootStream,
                        payload: .windowUpdate(windowSizeIncrement: configuration.connectionWindowSize - 65_535))),
                promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        readiness?.fail(error)
        readiness = nil
        context.close(promise: nil)
    }

    /// Everything still on the connection is retried or failed. Called when the channel goes
    /// inactive, and from the channel's close future, because NIOHTTP2Handler does not forward
    /// channelInactive for a connection that never became active.
    func closed() {
        establishmentTimer?.cancel()
        establishmentTimer = nil
        readiness?.fail(HTTP2ClientError.connectionClosed)
        readiness = nil
        retire()
        deadlineSweep?.cancel()
        responses.removeAll()
        perform(machine.connectionClosed())
    }

    private func finish(stream id: Int) {
        let builder = responses.removeValue(forKey: id)
        guard let status = builder?.status else {
            return perform(machine.streamFailed(id, error: .invalidResponse("stream ended without a :status")))
        }
        let response = HTTP2Response(
            status: status, headers: builder?.headers ?? [:], body: builder?.body ?? ByteBuffer())
        for action in machine.streamCompleted(id) {
            if case .complete(let request) = action {
                request.succeed(response)
            } else {
                perform([action])
            }
        }
    }

    private func perform(_ actions: [HTTP2ConnectionStateMachine<PooledRequest>.Action]) {
        for action in actions {
            switch action {
            case .send(let id, let request): write(request, on: id)
            case .complete: break  // handled in finish(stream:), which has the response
            case .retry(let request):
                request.leave()
                retry(request)
            case .fail(let request, let error): request.fail(error)
            case .close: context?.close(promise: nil)
            }
        }
    }

    private func write(_ pooled: PooledRequest, on id: Int) {
        guard let context else { return pooled.fail(.connectionClosed) }
        let streamID = HTTP2StreamID(id)
        var headers = requestHeaders
        headers.reserveCapacity(4 + pooled.request.headers.count)
        headers.add(name: ":method", value: pooled.request.method)
        // Paths carry device tokens: indexing them would churn the HPACK table for nothing.
        headers.add(name: ":path", value: pooled.request.path, indexing: .nonIndexable)
        headers.add(contentsOf: pooled.request.headers)
        let hasBody = pooled.request.body.readableBytes > 0
        context.write(
            wrapOutboundOut(
                HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers, endStream: !hasBody)))),
            promise: nil)
        if hasBody {
            context.write(
                wrapOutboundOut(
                    HTTP2Frame(
                        streamID: streamID,
                        payload: .data(.init(data: .byteBuffer(pooled.request.body), endStream: true)))),
                promise: nil)
        }
        scheduleFlush()
    }

    /// Many requests submitted in one event-loop turn leave with a single flush.
    private func scheduleFlush() {
        guard !flushScheduled, let context else { return }
        flushScheduled = true
        context.eventLoop.execute { [weak self] in
            guard let self else { return }
            self.flushScheduled = false
            self.context?.flush()
        }
    }

    /// With no stream multiplexer in the pipeline, NIOHTTP2 leaves the connection-level inbound
    /// window to us: return consumed bytes once half the window is used, or error bodies would
    /// eventually stall the connection (RFC 9113 §6.9).
    private func returnConnectionWindow(_ length: Int) {
        guard length > 0, let context else { return }
        connectionWindowDebt += length
        guard connectionWindowDebt >= max(configuration.connectionWindowSize, 65_535) / 2 else { return }
        context.write(
            wrapOutboundOut(
                HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: connectionWindowDebt))),
            promise: nil)
        connectionWindowDebt = 0
        scheduleFlush()
    }

    /// Fails the streams whose deadline has passed (checked every 50 ms).
    private func sweepDeadlines() {
        let now = NIODeadline.now()
        for (id, request) in machine.open where request.deadline <= now { timedOut(stream: id) }
    }

    private func timedOut(stream id: Int) {
        responses[id] = nil
        guard machine.open[id] != nil, let context else { return }
        context.write(
            wrapOutboundOut(HTTP2Frame(streamID: HTTP2StreamID(id), payload: .rstStream(.cancel))), promise: nil)
        scheduleFlush()
        perform(machine.streamFailed(id, error: .requestTimeout))
    }

    private func checkLiveness() {
        guard let context else { return }
        let now = NIODeadline.now()
        if let sent = pingSentAt, now - sent > configuration.pingTimeout {
            context.close(promise: nil)
        } else if machine.openCount > 0, now - lastReadAt > configuration.readTimeout {
            context.close(promise: nil)
        } else if pingSentAt == nil, machine.openCount == 0, now - lastReadAt >= configuration.pingInterval {
            pingSentAt = now
            context.writeAndFlush(
                wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(), ack: false))),
                promise: nil)
        }
    }

    private func retire() {
        guard !didRetire else { return }
        didRetire = true
        retired()
    }
}

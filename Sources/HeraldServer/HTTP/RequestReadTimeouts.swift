import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1

/// Herald's HTTP/1.1 server channel (with the direct channel's WebSocket upgrade), plus the read
/// timeouts of ``HTTPLimits``: a client must send each request's head, and then its body, within
/// their timeouts, and a kept-alive connection must bring its next request within the idle
/// timeout; otherwise the connection is closed. Hummingbird's own idle timeout starts only after
/// the first request head, so it cannot stop a client that never finishes one.
struct TimedHTTPChannel<Inner: ServerChildChannel>: ServerChildChannel {
    let inner: Inner
    let limits: HTTPLimits
    /// Whether the connection's handlers run on its own event loop (else on Swift's global executor).
    let onConnectionLoop: Bool

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Inner.Value> {
        inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            // The inner setup built the HTTP pipeline synchronously (response encoder, then request
            // decoder): right after the decoder, the timeouts see request parts on the way in and
            // response parts on the way out, before the encoder.
            let operations = channel.pipeline.syncOperations
            let decoder = try operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try operations.addHandler(
                RequestReadTimeoutHandler(limits: limits, logger: logger), position: .after(decoder))
            // After the upgrade handler: it sees the WebSocket upgrade complete, with the frame decoder in place.
            try operations.addHandler(WebSocketUpgradeWatcher())
            return value
        }
    }

    /// Handles the connection on its own event loop (``EventLoopTaskExecutor``) when `onConnectionLoop`:
    /// its handlers run on the thread that reads and writes its bytes.
    func handle(value: Inner.Value, logger: Logger) async {
        guard onConnectionLoop else { return await inner.handle(value: value, logger: logger) }
        await withTaskExecutorPreference(EventLoopTaskExecutor(value.channel.eventLoop)) {
            await inner.handle(value: value, logger: logger)
        }
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 with the direct channel's WebSocket upgrade, the header limits and read timeouts of
    /// `limits`, and Hummingbird's WebSocket defaults (frames up to 16 KiB; a larger one closes the
    /// socket with 1009).
    /// `onConnectionLoop`: a connection's handlers run on its own event loop (``TimedHTTPChannel``).
    static func herald(
        webSocketRouter: Router<ChannelRequestContext>, limits: HTTPLimits, onConnectionLoop: Bool
    ) -> HTTPServerBuilder {
        let webSocketResponder = webSocketRouter.buildResponder()
        var http1 = HTTP1Channel.Configuration()
        http1.httpDecoder = .init(
            maxHeaderFieldSize: limits.maxHeaderBytes, maxHeaderListSize: limits.maxHeaderBytes,
            maxHeaderFieldCount: limits.maxHeaderCount)
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(http1: http1)
        return HTTPServerBuilder { responder in
            TimedHTTPChannel(
                inner: HTTP1WebSocketUpgradeChannel(
                    responder: responder, webSocketResponder: webSocketResponder, configuration: configuration),
                limits: limits, onConnectionLoop: onConnectionLoop)
        }
    }
}

/// Closes a connection whose client is too slow to send a request (see ``TimedHTTPChannel``).
///
/// Sits between the HTTP/1 codec and the WebSocket upgrader. It arms one timer at a time: the
/// header timeout before the first request, the body timeout from a head to its end, nothing while
/// responses are owed, and the idle timeout once they are all written. It leaves the pipeline when
/// a request asks for an upgrade, before the WebSocket handlers replace HTTP's.
final class RequestReadTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let limits: HTTPLimits
    private let logger: Logger
    private var timer: Scheduled<Void>?
    /// Between a request's head and its end.
    private var readingBody = false
    /// Requests read to their end whose responses are not written yet.
    private var owed = 0
    /// Whether a response was written: the next wait is the idle timeout, not the header timeout.
    private var answered = false
    private var upgrading = false
    /// Whether the first request was read to its end: until then the WebSocket upgrade handler behind this one is
    /// still deciding whether the connection upgrades.
    private var readFirstRequest = false

    init(limits: HTTPLimits, logger: Logger) {
        self.limits = limits
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        rearm(context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    /// A connection that closes before its first request (a header timeout, a load balancer's TCP check, a
    /// scanner) is an ordinary event. The upgrade handler would fail its decision as an error Hummingbird logs at
    /// `error` ("Error handling upgrade result"); told first that the input ended, it gives up quietly.
    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if !readFirstRequest {
            context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch part {
        case .head(let head):
            readingBody = true
            upgrading = head.headers.contains(name: "upgrade")
            arm(context: context, seconds: limits.bodyTimeoutSeconds, waitingFor: "request body")
        case .body:
            break
        case .end:
            readingBody = false
            readFirstRequest = true
            owed += 1
            rearm(context: context)
        }
        context.fireChannelRead(data)
        if case .end = part, upgrading {
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            owed = max(0, owed - 1)
            answered = true
            rearm(context: context)
        }
        context.write(data, promise: promise)
    }

    /// The timer the connection's state calls for.
    private func rearm(context: ChannelHandlerContext) {
        if readingBody { return }  // The body timer runs from the head.
        if owed > 0 {
            timer?.cancel()
            timer = nil
        } else if answered {
            arm(context: context, seconds: limits.idleTimeoutSeconds, waitingFor: "next request")
        } else {
            arm(context: context, seconds: limits.headerTimeoutSeconds, waitingFor: "request head")
        }
    }

    private func arm(context: ChannelHandlerContext, seconds: Int, waitingFor what: String) {
        timer?.cancel()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let logger = logger
        timer = context.eventLoop.scheduleTask(in: .seconds(Int64(seconds))) {
            logger.debug("closing a connection: no \(what) within \(seconds) s")
            loopBound.value.close(promise: nil)
        }
    }
}

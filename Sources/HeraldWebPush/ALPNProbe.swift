import HeraldHTTP2
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// Learns which HTTP version a push service origin speaks: one TLS handshake offering `h2` and
/// `http/1.1` through ALPN, closed as soon as the server has chosen. An origin that chooses
/// nothing (no ALPN) is taken as HTTP/1.1 (RFC 7301 §3.2: a server that does not support ALPN
/// speaks the protocol it would without it).
struct ALPNProbe: Sendable {
    private let sslContext: NIOSSLContext
    private let group: any EventLoopGroup
    private let timeout: TimeAmount

    /// - Throws: NIOSSL errors for an unusable TLS configuration.
    init(tls: TLSConfiguration, group: any EventLoopGroup, timeout: TimeAmount) throws {
        var tls = tls
        tls.applicationProtocols = ["h2", "http/1.1"]
        self.sslContext = try NIOSSLContext(configuration: tls)
        self.group = group
        self.timeout = timeout
    }

    /// The version `origin` chose.
    /// - Throws: Connection, TLS and timeout errors; the caller treats them as transient.
    func httpVersion(of origin: HTTP2OriginPools.Origin) async throws -> WebPushHTTPVersion {
        let loop = group.next()
        let promise = loop.makePromise(of: String?.self)
        let sslContext = self.sslContext
        let timeout = self.timeout
        let serverName = (try? SocketAddress(ipAddress: origin.host, port: 0)) == nil ? origin.host : nil
        ClientBootstrap(group: loop)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverName))
                    try sync.addHandler(ALPNProbeHandler(promise: promise, timeout: timeout))
                }
            }
            .connect(host: origin.host, port: origin.port)
            // A promise completed twice keeps its first result, so the handler and this may both try.
            .whenFailure { promise.fail($0) }
        return try await promise.futureResult.get() == "h2" ? .http2 : .http1
    }
}

/// Completes the probe's promise with the negotiated protocol once the handshake is done, then
/// closes the connection.
private final class ALPNProbeHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private struct Closed: Error, CustomStringConvertible {
        var description: String { "connection closed before the TLS handshake completed" }
    }

    private struct TimedOut: Error, CustomStringConvertible {
        var description: String { "TLS handshake timed out" }
    }

    private let promise: EventLoopPromise<String?>
    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?

    init(promise: EventLoopPromise<String?>, timeout: TimeAmount) {
        self.promise = promise
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let promise = self.promise
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            promise.fail(TimedOut())
            channel.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        promise.fail(Closed())
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = event {
            deadline?.cancel()
            promise.succeed(negotiated)
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(Closed())
        context.fireChannelInactive()
    }
}

import NIOCore
import NIOTLS

/// Fails a provider connection whose server did not choose `h2` through ALPN (RFC 7301): APNs and
/// FCM speak only HTTP/2, and a host that answers HTTP/1.1 (a proxy, a wrong URL) would otherwise
/// fail later with an error about frames it never sent; a Web Push origin that chose `http/1.1` is
/// sent to over HTTP/1.1 from then on (``HTTP2ClientError/notHTTP2(host:chosen:)``). Sits right after the TLS handler, checks the
/// handshake's outcome once and leaves the pipeline.
final class ALPNCheckHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    let host: String
    /// Told the refusal before the connection closes: whatever error its close then surfaces as,
    /// the pool fails the connection's requests with this one.
    let refused: @Sendable (HTTP2ClientError) -> Void

    init(host: String, refused: @escaping @Sendable (HTTP2ClientError) -> Void) {
        self.host = host
        self.refused = refused
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case TLSUserEvent.handshakeCompleted(let negotiated) = event else {
            return context.fireUserInboundEventTriggered(event)
        }
        context.fireUserInboundEventTriggered(event)
        if negotiated == "h2" {
            context.pipeline.syncOperations.removeHandler(self, promise: nil)
        } else {
            let error = HTTP2ClientError.notHTTP2(host: host, chosen: negotiated)
            refused(error)
            context.fireErrorCaught(error)
            context.close(promise: nil)
        }
    }
}

import NIOCore
import NIOTLS

/// Fails a provider connection whose server did not choose `h2` through ALPN (RFC 7301): APNs and
/// FCM speak only HTTP/2, and a host that answers HTTP/1.1 (a proxy, a wrong URL) would otherwise
/// fail later with an error about frames it never sent. Sits right after the TLS handler, checks the
/// handshake's outcome once and leaves the pipeline.
final class ALPNCheckHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    let host: String

    init(host: String) {
        self.host = host
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case TLSUserEvent.handshakeCompleted(let negotiated) = event else {
            return context.fireUserInboundEventTriggered(event)
        }
        context.fireUserInboundEventTriggered(event)
        if negotiated == "h2" {
            context.pipeline.syncOperations.removeHandler(self, promise: nil)
        } else {
            let chosen = negotiated.map { "'\($0)'" } ?? "no protocol"
            context.fireErrorCaught(
                HTTP2ClientError.connectFailed(
                    "\(host) does not speak HTTP/2: its TLS handshake chose \(chosen) through ALPN, not 'h2'"))
            context.close(promise: nil)
        }
    }
}

import NIOCore
import NIOHTTP1
import NIOWebSocket

/// Closes a WebSocket whose client sends a frame without a masking key: RFC 6455 §5.1 has every
/// client frame masked, and a server "MUST close the connection upon receiving a frame that is not
/// masked" (with 1002, protocol error). NIOWebSocket's decoder accepts unmasked frames, so this
/// sits right behind it.
final class MaskedFramesRequired: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private var closing = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        let frame = unwrapInboundIn(data)
        guard frame.maskKey == nil else { return context.fireChannelRead(data) }
        closing = true
        var code = context.channel.allocator.buffer(capacity: 2)
        code.write(webSocketErrorCode: .protocolError)
        let close = WebSocketFrame(fin: true, opcode: .connectionClose, data: code)
        context.writeAndFlush(wrapOutboundOut(close)).whenComplete { _ in context.close(promise: nil) }
    }
}

/// Waits, at the end of a new connection's pipeline, for the HTTP/1 upgrade to WebSocket: then it
/// puts ``MaskedFramesRequired`` right behind the frame decoder (before any buffered frame is
/// replayed) and leaves. A connection that stays HTTP/1 removes it at its first request.
final class WebSocketUpgradeWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .upgradeComplete? = event as? HTTPServerUpgradeEvents {
            let operations = context.pipeline.syncOperations
            if let decoder = try? operations.handler(type: ByteToMessageHandler<WebSocketFrameDecoder>.self) {
                try? operations.addHandler(MaskedFramesRequired(), position: .after(decoder))
            }
            operations.removeHandler(context: context, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

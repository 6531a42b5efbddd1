import NIOCore

/// Sits between `NIOSSLHandler` and `NIOHTTP2Handler` and turns everything written between two
/// flushes into one write.
///
/// `NIOHTTP2Handler` writes each frame as its own buffer (a request is three: the HEADERS frame,
/// the DATA frame header and the body), and `NIOSSLHandler` hands each buffer to `SSL_write` on
/// its own, so every buffer became its own TLS record: three AEAD seals here and three opens at
/// the peer for every request. Copying a few hundred bytes into one buffer is far cheaper, and
/// TLS then cuts full-size records (RFC 8446 §5.1 allows up to 16 KiB of plaintext each).
final class WriteCoalescingHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// Bytes gathered before a write is passed on without waiting for the flush.
    private let limit: Int
    private var pending: ByteBuffer?
    private var promises: [EventLoopPromise<Void>] = []
    /// A spare buffer, kept to be reused once the layer below has let go of it.
    private var spare: ByteBuffer?

    /// Creates the handler.
    /// - Parameter limit: bytes gathered at most before they are passed on.
    init(limit: Int = 64 * 1024) {
        self.limit = limit
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .byteBuffer(var bytes):
            if var gathered = pending.take() {
                if gathered.readableBytes + bytes.readableBytes > limit {
                    pending = gathered
                    passOn(context: context)
                    pending = bytes
                } else {
                    gathered.writeBuffer(&bytes)
                    pending = gathered
                }
            } else if var buffer = spare.take() {
                buffer.clear()
                buffer.writeBuffer(&bytes)
                pending = buffer
            } else {
                var buffer = context.channel.allocator.buffer(capacity: max(4096, bytes.readableBytes))
                buffer.writeBuffer(&bytes)
                pending = buffer
            }
            if let promise { promises.append(promise) }
        case .fileRegion:
            // Order is kept: what was gathered goes first.
            passOn(context: context)
            context.write(data, promise: promise)
        }
    }

    func flush(context: ChannelHandlerContext) {
        passOn(context: context)
        context.flush()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // Nothing gathered and unflushed outlives the handler: the writes are failed, as a channel
        // fails writes it never flushed when it closes.
        pending = nil
        let failed = promises
        promises.removeAll()
        for promise in failed { promise.fail(ChannelError.ioOnClosedChannel) }
    }

    /// Passes what was gathered on as one write, with one promise for all the writes in it.
    private func passOn(context: ChannelHandlerContext) {
        guard let gathered = pending.take() else { return }
        let promise: EventLoopPromise<Void>?
        switch promises.count {
        case 0: promise = nil
        case 1: promise = promises[0]
        default:
            let combined = context.eventLoop.makePromise(of: Void.self)
            let waiting = promises
            combined.futureResult.whenComplete { result in
                for promise in waiting { promise.completeWith(result) }
            }
            promise = combined
        }
        promises.removeAll(keepingCapacity: true)
        context.write(wrapOutboundOut(.byteBuffer(gathered)), promise: promise)
        // Once the layer below has consumed the write (NIOSSLHandler copies it into BoringSSL on
        // flush), this buffer is ours alone again and its storage is reused; if not, `clear()`
        // copies on write and nothing is shared.
        spare = gathered
    }
}

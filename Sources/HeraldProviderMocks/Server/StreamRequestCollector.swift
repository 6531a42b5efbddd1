import NIOCore
import NIOHPACK
import NIOHTTP2

/// The request frames of one stream, gathered until the client ends the stream.
struct CollectedRequest: Sendable {
    var headers: HPACKHeaders
    var body: ByteBuffer
}

/// Gathers one HTTP/2 stream's HEADERS and DATA frames and completes a promise when the client ends its side.
///
/// Bodies beyond `maximumBodySize` are truncated rather than buffered; the mocks only need to know they were too big.
final class StreamRequestCollector: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    static let maximumBodySize = 1 << 20

    private let promise: EventLoopPromise<CollectedRequest>
    private var headers: HPACKHeaders?
    private var body: ByteBuffer?
    private var completed = false

    init(promise: EventLoopPromise<CollectedRequest>) {
        self.promise = promise
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            // A second HEADERS block is a trailer section; the mocks have no use for trailers.
            if headers == nil { headers = frame.headers }
            if frame.endStream { complete(context: context) }
        case .data(let frame):
            if case .byteBuffer(var bytes) = frame.data {
                if body == nil {
                    body = context.channel.allocator.buffer(capacity: bytes.readableBytes)
                }
                if body!.readableBytes < Self.maximumBodySize {
                    body!.writeBuffer(&bytes)
                }
            }
            if frame.endStream { complete(context: context) }
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(StreamClosedBeforeRequestEnded())
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error)
        context.close(promise: nil)
    }

    private func complete(context: ChannelHandlerContext) {
        guard !completed else { return }
        completed = true
        promise.succeed(
            CollectedRequest(
                headers: headers ?? [:], body: body ?? context.channel.allocator.buffer(capacity: 0)))
    }

    private func fail(_ error: any Error) {
        guard !completed else { return }
        completed = true
        promise.fail(error)
    }
}

/// The stream closed (reset, GOAWAY, connection loss) before the client finished sending its request.
struct StreamClosedBeforeRequestEnded: Error {}

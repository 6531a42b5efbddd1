import NIOCore
import NIOEmbedded
import Testing

@testable import HeraldHTTP2

@Suite("Write coalescing below HTTP/2")
struct WriteCoalescingHandlerTests {
    private func channel(limit: Int = 64 * 1024) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(WriteCoalescingHandler(limit: limit))
        return channel
    }

    private func buffer(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    private func outbound(_ channel: EmbeddedChannel) throws -> [String] {
        var written: [String] = []
        while let data = try channel.readOutbound(as: IOData.self) {
            guard case .byteBuffer(let bytes) = data else {
                written.append("<file>")
                continue
            }
            written.append(String(buffer: bytes))
        }
        return written
    }

    @Test("Writes between two flushes leave as one write, in order, and only on the flush")
    func oneWritePerFlush() throws {
        let channel = try channel()
        channel.write(IOData.byteBuffer(buffer("HEADERS")), promise: nil)
        channel.write(IOData.byteBuffer(buffer("DATA")), promise: nil)
        channel.write(IOData.byteBuffer(buffer("body")), promise: nil)
        #expect(try outbound(channel).isEmpty)
        channel.flush()
        #expect(try outbound(channel) == ["HEADERSDATAbody"])
        channel.write(IOData.byteBuffer(buffer("next")), promise: nil)
        channel.flush()
        #expect(try outbound(channel) == ["next"])
        _ = try channel.finish()
    }

    @Test("Every write's promise completes when the combined write does")
    func promises() throws {
        let channel = try channel()
        let first = channel.eventLoop.makePromise(of: Void.self)
        let second = channel.eventLoop.makePromise(of: Void.self)
        var completed = 0
        first.futureResult.whenSuccess { completed += 1 }
        second.futureResult.whenSuccess { completed += 1 }
        channel.write(IOData.byteBuffer(buffer("a")), promise: first)
        channel.write(IOData.byteBuffer(buffer("b")), promise: nil)
        channel.write(IOData.byteBuffer(buffer("c")), promise: second)
        #expect(completed == 0)
        channel.flush()
        channel.embeddedEventLoop.run()
        #expect(completed == 2)
        #expect(try outbound(channel) == ["abc"])
        _ = try channel.finish()
    }

    @Test("Past the limit, what was gathered goes on before the flush")
    func limit() throws {
        let channel = try channel(limit: 8)
        channel.write(IOData.byteBuffer(buffer("12345")), promise: nil)
        channel.write(IOData.byteBuffer(buffer("678")), promise: nil)
        channel.write(IOData.byteBuffer(buffer("9")), promise: nil)
        channel.flush()
        #expect(try outbound(channel) == ["12345678", "9"])
        _ = try channel.finish()
    }

    @Test("Writes never flushed fail when the handler goes")
    func unflushedWritesFail() throws {
        let channel = try channel()
        let promise = channel.eventLoop.makePromise(of: Void.self)
        var failure: (any Error)?
        promise.futureResult.whenFailure { failure = $0 }
        channel.write(IOData.byteBuffer(buffer("lost")), promise: promise)
        _ = try? channel.finish()
        channel.embeddedEventLoop.run()
        #expect(failure != nil)
    }
}

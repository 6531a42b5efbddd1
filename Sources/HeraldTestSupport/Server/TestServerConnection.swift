import NIOCore
import NIOHTTP2
import NIOSSL
import Synchronization

/// One accepted connection of an ``HTTP2TestServer``: its channel and its script bookkeeping.
final class TestServerConnection: Sendable {
    let id: Int
    let channel: any Channel
    private let state = Mutex(ConnectionScriptState())

    init(id: Int, channel: any Channel) {
        self.id = id
        self.channel = channel
    }

    /// The highest number of streams this connection had open at once.
    var peakOpenStreams: Int {
        state.withLock { $0.peakOpenStreams }
    }

    /// Classifies a stream the client opened and performs whatever the script asks of the connection.
    func streamOpened(streamID: Int, script: ConnectionScript?, generation: Int) -> StreamDisposition {
        let (disposition, action) = state.withLock {
            $0.streamOpened(streamID: streamID, script: script, generation: generation)
        }
        perform(action)
        return disposition
    }

    /// Records that a stream closed at the HTTP/2 level.
    func streamClosed() {
        state.withLock { $0.streamClosed() }
    }

    /// Records that a served stream is done and performs whatever the script asks of the connection.
    func streamFinished(counted: Bool) {
        perform(state.withLock { $0.streamFinished(counted: counted) })
    }

    /// Announces a new SETTINGS_MAX_CONCURRENT_STREAMS to the client.
    func announce(maxConcurrentStreams: Int) {
        let settings = [HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams)]
        channel.writeAndFlush(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings(settings))), promise: nil)
    }

    private func perform(_ action: ConnectionScriptState.Action) {
        let channel = self.channel
        switch action {
        case .none:
            break
        case .sendGoAway(let lastStreamID):
            // Deferred to the next event-loop tick: this runs inside the HTTP/2 handler's read of the stream's
            // HEADERS frame.
            channel.eventLoop.execute {
                let frame = HTTP2Frame(
                    streamID: .rootStream,
                    payload: .goAway(lastStreamID: HTTP2StreamID(lastStreamID), errorCode: .noError, opaqueData: nil))
                channel.writeAndFlush(frame, promise: nil)
            }
        case .close:
            channel.close(promise: nil)
        case .drop:
            channel.eventLoop.execute {
                // Closing from the TLS handler's context goes straight to the socket: no close_notify, no GOAWAY.
                if let context = try? channel.pipeline.syncOperations.context(handlerType: NIOSSLServerHandler.self) {
                    context.close(promise: nil)
                } else {
                    channel.close(promise: nil)
                }
            }
        }
    }
}

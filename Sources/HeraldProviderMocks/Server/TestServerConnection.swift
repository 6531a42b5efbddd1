import HeraldTestSupport
import NIOCore
import NIOHTTP2
import NIOSSL
import SwiftASN1
import Synchronization
import X509

#if canImport(Glibc)
    import Glibc
#endif

/// One accepted connection of an ``HTTP2TestServer``: its channel, its script bookkeeping and the client's
/// certificate.
final class TestServerConnection: Sendable {
    private enum PeerCertificate {
        case unread
        case read(Certificate?)
    }

    /// How long a connection that has sent GOAWAY and answered its streams waits for the client to close it.
    static let closeGrace = TimeAmount.seconds(2)

    let id: Int
    let channel: any Channel
    private let state = Mutex(ConnectionScriptState())
    private let peerCertificate = Mutex(PeerCertificate.unread)
    private let acknowledgements = Atomic(0)
    private let pings = Atomic(0)

    init(id: Int, channel: any Channel) {
        self.id = id
        self.channel = channel
    }

    /// How many SETTINGS frames of the server the client has acknowledged on this connection.
    var settingsAcknowledged: Int {
        acknowledgements.load(ordering: .relaxed)
    }

    /// Counts one SETTINGS acknowledgement of the client.
    func settingsAcknowledgementReceived() {
        acknowledgements.add(1, ordering: .relaxed)
    }

    /// How many PING frames (not acknowledgements) the client has sent on this connection.
    var pingsReceived: Int {
        pings.load(ordering: .relaxed)
    }

    /// Counts one PING of the client.
    func pingReceived() {
        pings.add(1, ordering: .relaxed)
    }

    /// The highest number of streams this connection had open at once.
    var peakOpenStreams: Int {
        state.withLock { $0.peakOpenStreams }
    }

    /// The certificate the client presented in the TLS handshake (verified by NIOSSL against the server's trust
    /// roots), or nil when it presented none; read from the TLS handler once, then remembered.
    ///
    /// Must be called on the connection's event loop after the handshake, which is where and when streams open.
    func clientCertificate() -> Certificate? {
        if case .read(let certificate) = peerCertificate.withLock({ $0 }) { return certificate }
        let presented = try? channel.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self).peerCertificate
        let certificate = presented.flatMap { try? Certificate(derEncoded: $0.toDERBytes()) }
        peerCertificate.withLock { $0 = .read(certificate) }
        return certificate
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
            // As a server does after its GOAWAY: the client closes the connection once its streams are done, and
            // one that does not is closed after a grace period. Closing at once, with frames the client sent since
            // unread, makes the kernel reset the TCP connection, and the client's kernel then throws away the
            // responses it has not read yet: answered requests would fail on the client (one in ~40 runs of
            // APNsClientTests.goAwayMidFlight under load).
            channel.eventLoop.scheduleTask(in: Self.closeGrace) { channel.close(promise: nil) }
        case .reset:
            channel.eventLoop.execute {
                // SO_LINGER with a zero timeout makes close() send an RST and discard unsent data.
                _ = (channel as? any SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0))
                channel.close(promise: nil)
            }
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

/// Counts the client's SETTINGS acknowledgements and PINGs (connection-level frames, which the HTTP/2 handler passes
/// on), so a test can wait for a new SETTINGS value to be in force, or for keep-alive PINGs, instead of sleeping.
final class ConnectionFrameCounter: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTP2Frame

    private let connection: TestServerConnection

    init(connection: TestServerConnection) {
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data).payload {
        case .settings(.ack): connection.settingsAcknowledgementReceived()
        case .ping(_, ack: false): connection.pingReceived()
        default: break
        }
        context.fireChannelRead(data)
    }
}

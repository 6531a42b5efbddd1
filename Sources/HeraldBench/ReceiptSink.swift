import Foundation
import HeraldCore
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// A minimal APNs stand-in for `herald-bench latency`: HTTP/2 over TLS on 127.0.0.1, answering every request
/// `200` with an `apns-id`, and noting on the process's monotonic clock when each request arrived (its last frame
/// read), keyed by the marker the request's payload carries. No checks, no scripts: it measures, the mock APNs in
/// HeraldTestSupport tests.
final class ReceiptSink: Sendable {
    /// The top-level payload keys whose string value names the send a request belongs to, first match wins:
    /// `bench_id` (a native send's `payload.data`) and `cloudEventId` (an AOVIS event's id).
    static let markerKeys = ["bench_id", "cloudEventId"]

    private struct State {
        var receipts: [String: ContinuousClock.Instant] = [:]
        var duplicates = 0
        var unmarked = 0
    }

    private let state = Mutex(State())
    private let channel: Mutex<(any Channel)?> = Mutex(nil)

    private init() {}

    /// Binds 127.0.0.1:`port` with the certificate chain and key of the PEM files and starts answering.
    /// - Throws: When the files cannot be read or the port cannot be bound.
    static func start(port: Int, certificateFile: String, keyFile: String) async throws -> ReceiptSink {
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certificateFile).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: keyFile, format: .pem)))
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let sink = ReceiptSink()
        var connectionSettings = NIOHTTP2Handler.ConnectionConfiguration()
        connectionSettings.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: 1000),
            HTTP2Setting(parameter: .maxHeaderListSize, value: HPACKDecoder.defaultMaxHeaderListSize),
        ]
        let connection = connectionSettings
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(NIOSSLServerHandler(context: context))
                    _ = try sync.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: connection,
                        streamConfiguration: NIOHTTP2Handler.StreamConfiguration()
                    ) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(StreamHandler(sink: sink))
                        }
                    }
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        sink.channel.withLock { $0 = channel }
        return sink
    }

    /// When the request carrying `marker` arrived (the first one, when Herald sent it twice).
    func receipt(of marker: String) -> ContinuousClock.Instant? {
        state.withLock { $0.receipts[marker] }
    }

    /// How many of `markers` have arrived.
    func received(_ markers: some Sequence<String>) -> Int {
        state.withLock { state in markers.reduce(0) { $0 + (state.receipts[$1] == nil ? 0 : 1) } }
    }

    /// Requests whose marker had already arrived, and requests without a marker.
    var anomalies: (duplicates: Int, unmarked: Int) {
        state.withLock { ($0.duplicates, $0.unmarked) }
    }

    /// Stops listening (open connections close with the process).
    func shutdown() async {
        let listening = self.channel.withLock { $0 }
        try? await listening?.close()
    }

    fileprivate func record(body: ByteBuffer, at instant: ContinuousClock.Instant) {
        let marker = (try? JSONValue.parse(body.readableBytesView))?.objectValue.flatMap { object in
            Self.markerKeys.lazy.compactMap { key -> String? in
                if case .string(let value) = object[key] { return value }
                return nil
            }.first
        }
        state.withLock { state in
            guard let marker else {
                state.unmarked += 1
                return
            }
            if state.receipts[marker] == nil {
                state.receipts[marker] = instant
            } else {
                state.duplicates += 1
            }
        }
    }

    /// Gathers one stream's request, notes its arrival when the client ends the stream, and answers like APNs.
    private final class StreamHandler: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame.FramePayload
        typealias OutboundOut = HTTP2Frame.FramePayload

        private let sink: ReceiptSink
        private var body = ByteBuffer()

        init(sink: ReceiptSink) {
            self.sink = sink
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .headers(let frame):
                if frame.endStream { finish(context: context) }
            case .data(let frame):
                if case .byteBuffer(var bytes) = frame.data { body.writeBuffer(&bytes) }
                if frame.endStream { finish(context: context) }
            default:
                break
            }
        }

        private func finish(context: ChannelHandlerContext) {
            sink.record(body: body, at: .now)
            let headers = HPACKHeaders([(":status", "200"), ("apns-id", UUID().uuidString)])
            context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: headers, endStream: true))), promise: nil)
        }
    }
}

import Hummingbird
import HummingbirdTesting
import NIOPosix
import Testing

@testable import HeraldServer

/// Where a connection's requests run: on the connection's own event loop (the SQLite store's
/// setting), or on Swift's global executor (PostgreSQL's; docs/performance.md).
@Suite("A connection's requests, on its event loop or not")
struct ConnectionLoopTests {
    @Test(
        "onConnectionLoop: a request's handler runs on the event loop of its connection; without it, on no event loop",
        arguments: [true, false])
    func handlerThread(onConnectionLoop: Bool) async throws {
        let router = Router()
        router.get("where") { _, _ in
            MultiThreadedEventLoopGroup.currentEventLoop == nil ? "elsewhere" : "loop"
        }
        let application = Application(
            router: router,
            server: .herald(
                webSocketRouter: Router(context: ChannelRequestContext.self), limits: HTTPLimits(),
                onConnectionLoop: onConnectionLoop))
        try await application.test(.live) { client in
            for _ in 0..<3 {
                let response = try await client.execute(uri: "/where", method: .get)
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == (onConnectionLoop ? "loop" : "elsewhere"))
            }
        }
    }
}

import Foundation
import HeraldCore
import HeraldServer
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import HummingbirdWebSocket

extension ServerHarness {
    /// The router served on a real port with the direct channel's WebSocket routes.
    package func liveApplication() throws -> some ApplicationProtocol {
        Application(
            router: try router().router,
            server: .http1WebSocketUpgrade(
                webSocketRouter: HeraldApplication.webSocketRouter(store: store, apps: apps, dispatcher: dispatcher)),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }
}

extension ChannelTestClient {
    /// Opens an installation's direct channel over a real WebSocket, as a device does: a channel
    /// credential asked for with the server key, then Home Assistant's push channel subscription.
    /// - Throws: `TestFailure` when the channel refuses the credential or the subscription.
    package static func subscribed(_ api: API, port: Int, installation id: String) async throws -> ChannelTestClient {
        guard
            let credential = try await api.call(.post, "/v1/installations/\(id)/channel-credential").string(
                "credential")
        else { throw TestFailure("no channel credential for \(id)") }
        let channel = ChannelTestClient(port: port, bearer: credential)
        guard await channel.next()?["type"] == .string("auth_ok") else { throw TestFailure("the channel refused") }
        channel.send(
            .object([
                "id": .number(1), "type": .string("mobile_app/push_notification_channel"),
                "webhook_id": .string(id), "support_confirm": .bool(false),
            ]))
        guard await channel.next()?["success"] == .bool(true) else { throw TestFailure("the subscription failed") }
        return channel
    }
}

extension EngineHarness {
    /// Runs `test` against the router served on a real port with the channel's WebSocket routes
    /// (its client and port), then stops the mocks, whether the test threw or not.
    package func live(_ test: @Sendable (API, Int) async throws -> Void) async throws {
        do {
            try await server.liveApplication().test(.live) { client in
                guard let port = client.port else { throw TestFailure("the live server has no port") }
                try await test(API(client: client), port)
            }
        } catch {
            await stop()
            throw error
        }
        await stop()
    }
}

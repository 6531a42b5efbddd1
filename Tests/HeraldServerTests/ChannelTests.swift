import Foundation
import HTTPTypes
import HeraldCore
import HeraldEngine
import HeraldProviderMocks
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import HummingbirdWebSocket
import Testing

@testable import HeraldAPI

/// Herald on a real port with its WebSocket router, the mock APNs and FCM behind it.
struct ChannelHarness {
    let engine: EngineHarness
    var server: ServerHarness { engine.server }

    init(
        confirmWindow: Duration = .seconds(10), store: (store: any HeraldStore, cipher: TokenCipher)? = nil
    ) async throws {
        engine = try await EngineHarness(
            engine: Self.engine(confirmWindow: confirmWindow), store: store)
    }

    /// The engine settings of the channel tests: all successes in the ledger, a short retry policy.
    static func engine(confirmWindow: Duration) -> EngineConfiguration {
        EngineConfiguration(
            retryPolicy: RetryPolicy(base: .seconds(1), cap: .seconds(10), maxAttempts: 3),
            defaultDeliveryLog: .all, cleanupInterval: nil, channelConfirmWindow: confirmWindow)
    }

    /// Runs `test` with the API and the port WebSockets connect to.
    func run(_ test: @Sendable (API, Int) async throws -> Void) async throws {
        let server = self.server
        let app = Application(
            router: try server.router().router,
            server: .http1WebSocketUpgrade(
                webSocketRouter: HeraldApplication.webSocketRouter(
                    store: server.store, apps: server.apps, dispatcher: server.dispatcher)),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        do {
            try await app.test(.live) { client in
                guard let port = client.port else { throw TestFailure("no port") }
                try await test(API(client: client), port)
            }
        } catch {
            await engine.stop()
            throw error
        }
        await engine.stop()
    }

    /// Registers an iOS installation of `user` (an APNs token: its cloud route) and returns its id.
    func iPhone(_ api: API, user: String = "ann") async throws -> String {
        try await api.register(#"{"platform":"ios","token":"\#(Fixtures.apnsToken())","user_id":"\#(user)"}"#)
    }

    /// Works due jobs until each notification is final: a delivery that waits for its channel's
    /// confirmation settles after the job that wrote it has returned (on the confirmation, the
    /// window's end or the channel's close).
    /// - Parameter dispatcher: The node whose workers run the jobs (nil: this harness's).
    func settled(
        _ ids: [String], _ api: API, on dispatcher: Dispatcher? = nil, within limit: Duration = .seconds(20)
    ) async throws {
        var open = 0
        do {
            try await waitUntil("\(ids.count) notifications settled", timeout: limit, every: .milliseconds(50)) {
                _ = try await (dispatcher ?? server.dispatcher).runDueJobs()
                open = 0
                for id in ids
                where !["done", "failed", "expired"].contains(try await api.notification(id).string("status")) {
                    open += 1
                }
                return open == 0
            }
        } catch is WaitTimedOut {
            // What the store holds of them: where a lost settlement or wake-up would show.
            let store = server.store
            let now = server.clock.date
            var states: [String] = []
            for id in ids {
                let pending = try await store.nextPending(notificationID: id).map { "\($0.timeIntervalSince(now)) s" }
                states.append(
                    "\(try await api.notification(id).string("status") ?? "?") (next pending \(pending ?? "none"))")
            }
            let queue = try await store.queueStatistics(now: now)
            throw TestFailure(
                "\(open) notifications not settled: \(states); the job queue at the clock's now: \(queue)")
        }
    }

    /// Connects with a user token through Home Assistant's handshake and subscribes to `webhookID`.
    func subscribed(
        port: Int, user: String = "ann", webhookID: String, confirm: Bool
    ) async throws -> ChannelTestClient {
        let client = ChannelTestClient(port: port)
        #expect(await client.next()?.objectValue?["type"] == .string("auth_required"))
        client.send(.object(["type": .string("auth"), "access_token": .string(try await server.userToken(user))]))
        #expect(await client.next()?.objectValue?["type"] == .string("auth_ok"))
        client.send(
            .object([
                "id": .number(1), "type": .string("mobile_app/push_notification_channel"),
                "webhook_id": .string(webhookID), "support_confirm": .bool(confirm),
            ]))
        let answer = await client.next()
        #expect(answer?.objectValue?["success"] == .bool(true), "\(String(describing: answer))")
        return client
    }
}

@Suite("Direct channel (WebSocket): Home Assistant's local push protocol, confirm and cloud fallback", .serialized)
struct ChannelTests {
    @Test(
        "Home Assistant's handshake and header auth; bad credentials, other users' installations and bad messages refused"
    )
    func authentication() async throws {
        let harness = try await ChannelHarness()
        try await harness.run { api, port in
            let mine = try await harness.iPhone(api)
            let theirs = try await harness.iPhone(api, user: "bob")

            // The handshake: auth_required with ha_version, auth, auth_ok.
            let client = try await harness.subscribed(port: port, webhookID: mine, confirm: true)
            func command(_ id: Int, _ members: [String: JSONValue]) async -> [String: JSONValue]? {
                var message = members
                message["id"] = .number(JSONNumber(id))
                client.send(.object(message))
                return await client.next()?.objectValue
            }
            let other = await command(
                2, ["type": .string("mobile_app/push_notification_channel"), "webhook_id": .string(theirs)])
            #expect(other?["error"]?.objectValue?["code"] == .string("unauthorized"))
            #expect(other?["error"]?.objectValue?["message"] == .string("User not linked to this webhook ID"))
            let unknown = await command(
                3, ["type": .string("mobile_app/push_notification_channel"), "webhook_id": .string("nope")])
            #expect(unknown?["error"]?.objectValue?["code"] == .string("not_found"))
            let missing = await command(4, ["type": .string("mobile_app/push_notification_channel")])
            #expect(missing?["error"]?.objectValue?["code"] == .string("invalid_format"))
            let reused = await command(4, ["type": .string("ping")])
            #expect(reused?["error"]?.objectValue?["code"] == .string("id_reuse"))
            let unknownCommand = await command(5, ["type": .string("get_states")])
            #expect(unknownCommand?["error"]?.objectValue?["code"] == .string("unknown_command"))
            let badConfirm = await command(
                6,
                [
                    "type": .string("mobile_app/push_notification_confirm"), "webhook_id": .string(mine),
                    "confirm_id": .string("0123"),
                ])
            #expect(badConfirm?["error"]?.objectValue?["message"] == .string("Push notification channel not found"))
            #expect(await command(7, ["type": .string("ping")])?["type"] == .string("pong"))
            await client.close()

            // A wrong token in the handshake: auth_invalid, then the server closes.
            let refused = ChannelTestClient(port: port, path: "/api/websocket")
            #expect(await refused.next()?.objectValue?["type"] == .string("auth_required"))
            refused.send(.object(["type": .string("auth"), "access_token": .string("not-a-token")]))
            let invalid = await refused.next()?.objectValue
            #expect(invalid?["type"] == .string("auth_invalid"))
            #expect(invalid?["message"] == .string("Invalid access token or password"))
            #expect(await refused.next() == nil, "the socket closed")
            await refused.close()

            // An API key is not a device's credential.
            let keyed = ChannelTestClient(port: port)
            #expect(await keyed.next()?.objectValue?["type"] == .string("auth_required"))
            keyed.send(.object(["type": .string("auth"), "access_token": .string(ServerHarness.serverKey)]))
            #expect(await keyed.next()?.objectValue?["type"] == .string("auth_invalid"))
            await keyed.close()

            // The header: a channel credential opens its installation only, and auth_ok comes at once.
            let issued = try await api.call(.post, "/v1/installations/\(mine)/channel-credential", body: "{}")
            let credential = try #require(issued.string("credential"))
            #expect(issued.string("webhook_id") == mine)
            let headed = ChannelTestClient(port: port, bearer: credential)
            #expect(await headed.next()?.objectValue?["type"] == .string("auth_ok"))
            headed.send(
                .object([
                    "id": .number(1), "type": .string("mobile_app/push_notification_channel"),
                    "webhook_id": .string(theirs),
                ]))
            #expect(await headed.next()?.objectValue?["error"]?.objectValue?["code"] == .string("unauthorized"))
            await headed.close()

            // Only the server key or the installation's own user get a credential.
            let byClient = try await api.call(
                .post, "/v1/installations/\(mine)/channel-credential", bearer: ServerHarness.clientKey, body: "{}")
            #expect(byClient.status == .forbidden)
            let byOther = try await api.call(
                .post, "/v1/installations/\(mine)/channel-credential",
                bearer: try await harness.server.userToken("bob"),
                body: "{}")
            #expect(byOther.status == .notFound)
            #expect(
                try await api.call(.post, "/v1/installations/nope/channel-credential", body: "{}").status == .notFound)

            // A bad header credential is refused before the upgrade.
            let forged = ChannelTestClient(port: port, bearer: credential + "x")
            #expect(await forged.ended() != nil, "the upgrade was refused")

            // A plain GET of the channel's URL says it is a WebSocket.
            let plain = try await api.call(.get, "/v1/channel", bearer: nil)
            #expect(plain.status.code == 426)
            #expect(plain["error.code"] == .string("upgrade_required"))
        }
    }

    @Test("Confirmed in time: delivered over the channel as Home Assistant's event, nothing to APNs")
    func confirmedInTime() async throws {
        let harness = try await ChannelHarness()
        try await harness.run { api, port in
            let id = try await harness.iPhone(api)
            let client = try await harness.subscribed(port: port, webhookID: id, confirm: true)
            let sent = try await api.send(
                #"{"target":{"user_ids":["ann"]},"payload":{"title":"Gate","body":"Vehicle detected","deep_link":"app://gate","data":{"camera":"front"}}}"#
            )
            async let drained = harness.engine.drain()
            let event = try #require(await client.next())
            #expect(event["id"] == .number(1))
            #expect(event["type"] == .string("event"))
            let body = try #require(event["event"]?.objectValue)
            #expect(body["message"] == .string("Vehicle detected"))
            #expect(body["title"] == .string("Gate"))
            #expect(body["data"]?.objectValue?["url"] == .string("app://gate"))
            #expect(body["data"]?.objectValue?["camera"] == .string("front"))
            guard case .string(let confirmID)? = body["hass_confirm_id"] else {
                throw TestFailure("no hass_confirm_id")
            }
            #expect(confirmID.count == 32)
            client.send(
                .object([
                    "id": .number(2), "type": .string("mobile_app/push_notification_confirm"),
                    "webhook_id": .string(id), "confirm_id": .string(confirmID),
                ]))
            #expect(await client.next()?.objectValue?["success"] == .bool(true))
            _ = try await drained
            try await harness.settled([sent], api)
            let record = try await api.notification(sent)
            #expect(record["counts.sent"] == .number(1))
            #expect(harness.engine.apns.requests.isEmpty)
            let ledger = try await api.call(.get, "/v1/notifications/\(sent)/deliveries")
            #expect(ledger["data.0.service"] == .string("direct"))
            #expect(ledger["data.0.outcome"] == .string("delivered"))
            #expect(ledger["data.0.provider_id"] == .string("direct:confirmed"))
            await client.close()
        }
    }

    @Test("Not confirmed within the window: the channel is torn down and the notification goes to APNs exactly once")
    func unconfirmedFallsBack() async throws {
        let harness = try await ChannelHarness(confirmWindow: .milliseconds(500))
        try await harness.run { api, port in
            let id = try await harness.iPhone(api)
            let client = try await harness.subscribed(port: port, webhookID: id, confirm: true)
            let first = try await api.send(#"{"target":{"user_ids":["ann"]},"payload":{"body":"one"}}"#)
            let second = try await api.send(#"{"target":{"user_ids":["ann"]},"payload":{"body":"two"}}"#)
            // Two workers: both notifications wait on the channel at once.
            async let a = harness.server.dispatcher.runDueJobs(owner: "w1")
            async let b = harness.server.dispatcher.runDueJobs(owner: "w2")
            _ = try await (a, b)
            // The jobs return with both waiting for the confirmation; the window's end on the
            // engine's clock settles them.
            harness.server.clock.advance(by: .seconds(0.5 + 1))
            try await harness.settled([first, second], api)
            var events: [String] = []
            while let event = await client.next(within: .milliseconds(200)) {
                if case .string(let text)? = event["event"]?.objectValue?["message"] { events.append(text) }
            }
            #expect(Set(events) == ["one", "two"], "both went over the channel first")
            #expect(harness.engine.apns.requests.count == 2, "each fell back once")
            for sent in [first, second] {
                #expect(try await api.notification(sent)["counts.sent"] == .number(1))
                let ledger = try await api.call(.get, "/v1/notifications/\(sent)/deliveries")
                let rows = ledger["data"]?.arrayValue ?? []
                #expect(
                    Set(rows.compactMap { $0.objectValue?["outcome"]?.stringValue })
                        == ["fell_back", "delivered"], "\(rows)")
                #expect(rows.contains { $0.objectValue?["service"] == .string("apns") })
            }
            // The channel is gone: a third notification goes straight to APNs.
            let third = try await api.send(#"{"target":{"user_ids":["ann"]},"payload":{"body":"three"}}"#)
            try await harness.engine.drain()
            #expect(try await api.notification(third)["counts.sent"] == .number(1))
            #expect(harness.engine.apns.requests.count == 3)
            await client.close()
        }
    }

    @Test("A channel that closes with a notification waiting on it falls back at once")
    func closeFallsBack() async throws {
        let harness = try await ChannelHarness(confirmWindow: .seconds(60))
        try await harness.run { api, port in
            let id = try await harness.iPhone(api)
            let client = try await harness.subscribed(port: port, webhookID: id, confirm: true)
            let sent = try await api.send(#"{"target":{"user_ids":["ann"]},"payload":{"body":"hello"}}"#)
            async let drained = harness.engine.drain()
            #expect(await client.next()?["event"]?.objectValue?["message"] == .string("hello"))
            await client.close()
            _ = try await drained
            try await harness.settled([sent], api)
            #expect(harness.engine.apns.requests.count == 1)
            let ledger = try await api.call(.get, "/v1/notifications/\(sent)/deliveries?outcome=fell_back")
            #expect(ledger["data.0.reason"] == .string("the channel closed before the device confirmed"))
        }
    }

    @Test("Without support_confirm, writing to the channel is delivery: no fallback")
    func withoutConfirm() async throws {
        let harness = try await ChannelHarness(confirmWindow: .milliseconds(200))
        try await harness.run { api, port in
            let id = try await harness.iPhone(api)
            let client = try await harness.subscribed(port: port, webhookID: id, confirm: false)
            let sent = try await api.send(#"{"target":{"user_ids":["ann"]},"payload":{"body":"hello"}}"#)
            try await harness.engine.drain()
            let event = try #require(await client.next()?["event"]?.objectValue)
            #expect(event["message"] == .string("hello"))
            #expect(event["hass_confirm_id"] == nil)
            // No sleep past the confirm window: the notification is already closed, so nothing of it is left
            // pending that a missed window could send to APNs.
            let record = try await api.notification(sent)
            #expect(record["status"] == .string("done"))
            #expect(record["counts.sent"] == .number(1))
            #expect(harness.engine.apns.requests.isEmpty)
            await client.close()
        }
    }

    @Test("A direct-only device keeps what it missed until it connects, then gets it")
    func directOnlyWaits() async throws {
        let harness = try await ChannelHarness()
        try await harness.run { api, port in
            let id = try await api.register(
                #"{"platform":"android","service":"direct","token":"listen-\#(UUID().uuidString)"}"#)
            let sent = try await api.send(
                #"{"target":{"installation_ids":["\#(id)"]},"payload":{"title":"While you were away"}}"#)
            try await harness.engine.drain()
            var record = try await api.notification(sent)
            #expect(record["counts.sent"] == .number(0))
            #expect(record["status"] != .string("done"))

            let credential = try #require(
                try await api.call(.post, "/v1/installations/\(id)/channel-credential", body: "{}").string("credential")
            )
            let client = ChannelTestClient(port: port, bearer: credential)
            #expect(await client.next()?["type"] == .string("auth_ok"))
            client.send(
                .object([
                    "id": .number(1), "type": .string("mobile_app/push_notification_channel"),
                    "webhook_id": .string(id),
                ]))
            #expect(await client.next()?["success"] == .bool(true))
            try await harness.engine.drain()
            #expect(await client.next()?["event"]?.objectValue?["message"] == .string("While you were away"))
            record = try await api.notification(sent)
            #expect(record["counts.sent"] == .number(1))
            #expect(record["status"] == .string("done"))
            await client.close()
        }
    }
}

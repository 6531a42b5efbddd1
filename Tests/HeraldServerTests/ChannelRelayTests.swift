import Foundation
import HTTPTypes
import HeraldCore
import HeraldEngine
import HeraldPostgres
import HeraldProviderMocks
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

/// Two nodes on one PostgreSQL database: node A holds the device's WebSocket (its router, its
/// channels), node B runs the fan-out. B reaches A's channel through the relay and gets the outcome back.
struct RelayPair {
    let database: PostgresTestDatabase
    let a: ChannelHarness
    let b: Dispatcher
    let relays: [Task<Void, Never>]

    static func start(confirmWindow: Duration) async throws -> Self {
        let database = try await PostgresTestDatabase.create()
        let cipher = Fixtures.cipher()
        let storeA = try PostgresStore.started(url: database.url, cipher: cipher)
        let storeB = try PostgresStore.started(url: database.url, cipher: cipher)
        let a = try await ChannelHarness(confirmWindow: confirmWindow, store: (storeA, cipher))
        try await storeB.migrate()
        let clock = a.server.clock
        let b = Dispatcher(
            store: storeB, transports: ["demo": a.engine.transports],
            configuration: ChannelHarness.engine(confirmWindow: confirmWindow), now: { clock.date })
        #expect(a.server.dispatcher.channels.node != b.channels.node)
        let relays = [a.server.dispatcher.channels, b.channels].map { channels in
            Task { await channels.runRelay() }
        }
        return Self(database: database, a: a, b: b, relays: relays)
    }

    func stop() async throws {
        for relay in relays { relay.cancel() }
        try await database.drop()
    }
}

@Suite("Direct channel across nodes: confirm and fallback through the PostgreSQL relay", .serialized)
struct ChannelRelayTests {
    @Test("Node B's notification reaches the channel on node A; A's confirmation comes back: nothing to APNs")
    func confirmedAcrossNodes() async throws {
        let pair = try await RelayPair.start(confirmWindow: .seconds(10))
        try await pair.a.run { api, port in
            let id = try await pair.a.iPhone(api)
            let client = try await pair.a.subscribed(port: port, webhookID: id, confirm: true)
            let sent = try await api.send(#"{"target":{"user_ids":["ann"]},"payload":{"body":"across"}}"#)
            // The device confirms what it gets while node B waits for the outcome.
            let device = Task {
                let event = await client.next(within: .seconds(10))
                guard case .string(let confirmID)? = event?["event"]?.objectValue?["hass_confirm_id"] else {
                    return event
                }
                client.send(
                    .object([
                        "id": .number(2), "type": .string("mobile_app/push_notification_confirm"),
                        "webhook_id": .string(id), "confirm_id": .string(confirmID),
                    ]))
                return event
            }
            // One job; twice when the device's confirmation came back before B's worker had released
            // it (the release then finds the delivery due and makes the job due again).
            let ran = try await pair.b.runDueJobs()
            #expect((1...2).contains(ran), "\(ran) jobs")
            let event = await device.value
            // The confirmation comes back to node B through the relay, now or after B's job has returned.
            try await pair.a.settled([sent], api, on: pair.b)
            #expect(event?["event"]?.objectValue?["message"] == .string("across"), "\(String(describing: event))")
            #expect(pair.a.engine.apns.requests.isEmpty)
            let ledger = try await api.call(.get, "/v1/notifications/\(sent)/deliveries")
            let rows = ledger["data"]?.arrayValue ?? []
            #expect(rows.count == 1)
            #expect(rows.first?.objectValue?["outcome"] == .string("delivered"), "\(rows)")
            #expect(rows.first?.objectValue?["service"] == .string("direct"), "\(rows)")
            await client.close()
        }
        try await pair.stop()
    }

    @Test("Not confirmed on node A within the window: node B sends it to APNs exactly once, the ledger shows both")
    func unconfirmedAcrossNodesFallsBack() async throws {
        let pair = try await RelayPair.start(confirmWindow: .milliseconds(500))
        try await pair.a.run { api, port in
            let id = try await pair.a.iPhone(api)
            let client = try await pair.a.subscribed(port: port, webhookID: id, confirm: true)
            let sent = try await api.send(#"{"target":{"user_ids":["ann"]},"payload":{"body":"unanswered"}}"#)
            #expect(try await pair.b.runDueJobs() == 1)
            let event = await client.next(within: .seconds(5))
            #expect(event?["event"]?.objectValue?["message"] == .string("unanswered"), "it went over the channel first")
            // The window passes on the nodes' clock: A tears the channel down, B falls back.
            pair.a.server.clock.advance(by: .seconds(0.5 + 1))
            try await pair.a.settled([sent], api, on: pair.b)
            #expect(pair.a.engine.apns.requests.count == 1, "then to APNs, once")
            #expect(try await api.notification(sent)["counts.sent"] == .number(1))
            let ledger = try await api.call(.get, "/v1/notifications/\(sent)/deliveries")
            let rows = ledger["data"]?.arrayValue ?? []
            #expect(
                Set(rows.compactMap { $0.objectValue?["outcome"]?.stringValue }) == ["fell_back", "delivered"],
                "\(rows)")
            #expect(rows.contains { $0.objectValue?["service"] == .string("apns") })
            await client.close()
        }
        try await pair.stop()
    }
}

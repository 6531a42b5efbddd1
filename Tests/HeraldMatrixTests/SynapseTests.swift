import Foundation
import HeraldCore
import HeraldProviderMocks
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HeraldMatrix

@Suite("Matrix push gateway with Synapse as the homeserver")
struct SynapseTests {
    @Test(
        "Synapse's HTTP pusher: a message from alice reaches bob's iPhone through the mock APNs with the room and event ids (only ids with event_id_only); a token APNs calls unregistered is rejected on the next notify and Synapse deletes the pusher"
    )
    func synapse() async throws {
        let harness = try await EngineHarness(dialects: MatrixTests.dialects)
        let app = Application(
            router: try harness.server.router().router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        let synapse = try ConversationProcess(
            try TestPython.matrix.command(TestPython.script("matrix-synapse.py"), []))
        do {
            try await app.test(.live) { client in
                let port = try #require(client.port)
                let url = "http://127.0.0.1:\(port)\(MatrixRoutes.path)"
                let ready = try await synapse.next(timeout: .seconds(120))
                #expect(ready["ready"] as? Bool == true, "\(ready)")
                let roomID = try #require(ready["room_id"] as? String)

                // Bob's iPhone: the default format.
                let phone = Fixtures.apnsToken()
                let set = try await synapse.ask([
                    "cmd": "set_pusher", "app_id": MatrixTests.iosAppID, "pushkey": phone, "url": url,
                ])
                #expect(set["ok"] as? Bool == true, "\(set)")
                let sent = try await synapse.ask(["cmd": "send", "body": "hello from alice"])
                let eventID = try #require(sent["event_id"] as? String)
                let alert = try await Self.delivered(to: phone, harness: harness)
                #expect(alert.json?.objectValue?["event_id"] == .string(eventID))
                #expect(alert.json?.objectValue?["room_id"] == .string(roomID))
                let body = alert.json?.objectValue?["aps"]?.objectValue?["alert"]?.objectValue?["body"]
                #expect(body.map { "\($0)".contains("hello from alice") } == true, "\(String(describing: body))")
                #expect(alert.json?.objectValue?["aps"]?.objectValue?["badge"] == .number(1))

                // A second device of bob's whose pusher asks for ids only.
                let tablet = Fixtures.apnsToken()
                _ = try await synapse.ask([
                    "cmd": "set_pusher", "app_id": MatrixTests.iosAppID, "pushkey": tablet, "url": url,
                    "format": "event_id_only",
                ])
                let second = try #require(
                    try await synapse.ask(["cmd": "send", "body": "lunch?"])["event_id"] as? String)
                let idsOnly = try await Self.delivered(to: tablet, harness: harness)
                #expect(idsOnly.json?.objectValue?["event_id"] == .string(second))
                #expect(idsOnly.json?.objectValue?["aps"]?.objectValue?["alert"] == nil)
                #expect(!String(decoding: idsOnly.body, as: UTF8.self).contains("lunch?"), "ids only")

                // The phone's token is dead: APNs says so on the next push; the notify after that
                // answers it in rejected, and Synapse removes that pusher (the tablet's stays).
                // (The phone got "lunch?" too: wait for that one before the token dies.)
                _ = try await Self.delivered(to: phone, harness: harness, after: 1)
                harness.apns.script(token: phone, .unregistered())
                _ = try await synapse.ask(["cmd": "send", "body": "are you there?"])
                _ = try await Self.delivered(to: phone, harness: harness, after: 2)
                _ = try await synapse.ask(["cmd": "send", "body": "bob?"])
                let remaining = try await synapse.ask(["cmd": "wait_pushers", "count": 1, "timeout": 30])
                #expect(remaining["ok"] as? Bool == true, "\(remaining)")
                let pushkeys = (remaining["pushers"] as? [[String: Any]])?.compactMap { $0["pushkey"] as? String }
                #expect(pushkeys == [tablet])
                _ = try await synapse.ask(["cmd": "quit"])
            }
        } catch {
            await synapse.finish()
            await harness.stop()
            throw error
        }
        await synapse.finish()
        await harness.stop()
    }

    /// The mock APNs's request to `token` (past the first `after` ones to it), working the engine's
    /// jobs until it comes: Synapse's pusher calls Herald on its own schedule.
    static func delivered(
        to token: String, harness: EngineHarness, after: Int = 0
    ) async throws -> MockAPNsServer.RecordedRequest {
        try await waitForValue("an APNs request to the device", every: .milliseconds(50)) {
            try await harness.drain()
            let requests = harness.apns.requests.filter { $0.token == token }
            return requests.count > after ? requests[after] : nil
        }
    }
}

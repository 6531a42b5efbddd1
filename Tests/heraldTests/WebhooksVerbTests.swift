import Foundation
import HeraldTestSupport
import Testing

@Suite("herald webhooks as a process")
struct WebhooksVerbTests {
    @Test(
        "list shows an app's endpoints with their health and backlog, deliveries its events, replay counts what it sends again"
    )
    func listDeliveriesReplay() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = directory.file("herald.sqlite")
        let server = try HeraldProcess(["serve", "--port", "0", "--database", database])
        let address = try await server.line(startingWith: "Herald is listening on ")
        let serverKey = try await server.line(startingWith: "server key: ")
        let created = try await request(
            "POST", "\(address)/v1/webhooks", bearer: serverKey,
            json: #"{"id":"crm","url":"https://hooks.invalid/herald","events":["installation.invalidated"]}"#)
        #expect(created.status == 201, "\(created.body)")
        let test = try await request("POST", "\(address)/v1/webhooks/crm/test", bearer: serverKey)
        #expect(test.status == 202, "\(test.body)")
        server.process.terminate()
        #expect(try await server.exitStatus() == 0)

        let list = try HeraldProcess(["webhooks", "list", "--database", database])
        #expect(try await list.exitStatus() == 0, "\(list.text)")
        #expect(list.text.contains("crm  enabled  https://hooks.invalid/herald"), "\(list.text)")
        #expect(list.text.contains("events: installation.invalidated"), "\(list.text)")
        #expect(list.text.contains("backlog: 1"), "\(list.text)")
        #expect(!list.text.contains("whsec_"), "no secret is printed")

        let deliveries = try HeraldProcess(["webhooks", "deliveries", "crm", "--database", database])
        #expect(try await deliveries.exitStatus() == 0, "\(deliveries.text)")
        #expect(deliveries.text.contains("webhook.test  pending"), "\(deliveries.text)")

        // Still waiting: nothing to send again.
        let replay = try HeraldProcess([
            "webhooks", "replay", "crm", "--since", "2020-01-01T00:00:00Z", "--database", database,
        ])
        #expect(try await replay.exitStatus() == 0, "\(replay.text)")
        #expect(replay.text.contains("replayed 0 events of crm"), "\(replay.text)")

        let unknown = try HeraldProcess(["webhooks", "deliveries", "nope", "--database", database])
        #expect(try await unknown.exitStatus() != 0)
        #expect(unknown.text.contains("no webhook endpoint nope"), "\(unknown.text)")
    }
}

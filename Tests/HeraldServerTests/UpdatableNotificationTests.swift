import Foundation
import HTTPTypes
import HeraldCore
import HeraldEngine
import HeraldProviderMocks
import HeraldServerTestSupport
import HeraldTestSupport
import HeraldWebPush
import Testing

/// An updatable notification carries its replacement key on every provider's wire, so a later
/// change replaces it on the device (docs/content.md, "Updating and deleting").
@Suite("Updatable notifications: the replacement key on the wire of every provider", .serialized)
struct UpdatableNotificationTests {
    @Test("APNs apns-collapse-id, FCM collapse_key and android.notification.tag; the record says updatable")
    func providers() async throws {
        let harness = try await EngineHarness()
        try await harness.run { api in
            _ = try await api.register(#"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
            _ = try await api.register(#"{"platform":"android","token":"\#(Fixtures.fcmToken())"}"#)
            let id = try await api.send(
                #"{"target":{"all":true},"updatable":true,"payload":{"title":"Score","body":"1:0","thread_id":"match"}}"#
            )
            try await harness.drain()
            let key = "herald-\(id)"
            #expect(harness.apns.requests.map { $0.header("apns-collapse-id") } == [key])
            let android = harness.fcm.requests.first?.json?.objectValue?["message"]?.objectValue?["android"]?
                .objectValue
            #expect(android?["collapse_key"] == .string(key))
            #expect(android?["notification"]?.objectValue?["tag"] == .string(key), "the tag replaces what is shown")
            let record = try await api.notification(id)
            #expect(record["updatable"] == .bool(true))
            #expect(record["payload.collapse_id"] == .string(key))

            // A collapse_id given is the key; a send without updatable carries none.
            let own = try await api.send(
                #"{"target":{"all":true},"updatable":true,"payload":{"body":"2:0","collapse_id":"match-7"}}"#)
            _ = try await api.send(#"{"target":{"all":true},"payload":{"body":"plain"}}"#)
            try await harness.drain()
            #expect(
                harness.apns.requests.map { $0.header("apns-collapse-id") } == [key, "match-7", nil])
            #expect(try await api.notification(own)["payload.collapse_id"] == .string("match-7"))
            let refused = try await api.call(
                .post, "/v1/notifications", body: #"{"target":{"all":true},"updatable":"yes","payload":{"body":"x"}}"#)
            #expect(refused.status == .badRequest)
            #expect(refused.errorField == "updatable")
        }
    }

    @Test(
        "Web Push: the Topic header and the payload's tag, the removal's herald_remove; the direct channel: the event's tag, the removal's clear_notification"
    )
    func webPushAndDirect() async throws {
        let harness = try await WebPushDeliveryTests.Harness()
        try await harness.run { api in
            let subscription = harness.service.makeSubscription(applicationServerKey: harness.key.publicKeyBase64URL)
            _ = try await api.register(#"{"platform":"web","subscription":\#(subscription.json)}"#)
            let id = try await api.send(#"{"target":{"all":true},"updatable":true,"payload":{"title":"Score"}}"#)
            try await harness.server.dispatcher.runDueJobs()
            let changed = try await api.call(.patch, "/v1/notifications/\(id)", body: #"{"payload":{"title":"2:0"}}"#)
            #expect(changed.status == .accepted)
            try await harness.server.dispatcher.runDueJobs()
            #expect(try await api.call(.delete, "/v1/notifications/\(id)/delivered").status == .accepted)
            try await harness.server.dispatcher.runDueJobs()
            let key = "herald-\(id)"
            #expect(
                harness.service.requests.allSatisfy { $0.header("topic") == WebPushTopic.derive(fromCollapseID: key) })
            let bodies = try harness.service.requests.map { try JSONValue.parse(try #require($0.plaintext)) }
            #expect(bodies.map { $0.objectValue?["title"] } == [.string("Score"), .string("2:0"), nil])
            #expect(bodies.allSatisfy { $0.objectValue?["tag"] == .string(key) }, "the service worker replaces by tag")
            #expect(bodies.last?.objectValue?["data"]?.objectValue?["herald_remove"] == .string(key))
        }
        let engine = try await EngineHarness()
        try await engine.live { api, port in
            let installation = try #require(
                try await api.call(
                    .post, "/v1/installations",
                    body: #"{"platform":"android","service":"direct","token":"device-\#(UUID().uuidString)"}"#
                ).string("id"))
            let channel = try await ChannelTestClient.subscribed(api, port: port, installation: installation)
            let id = try await api.send(#"{"target":{"all":true},"updatable":true,"payload":{"body":"1:0"}}"#)
            _ = try await engine.drain()
            #expect(await channel.next()?["event"]?["data"]?["tag"] == .string("herald-\(id)"))
            #expect(try await api.call(.delete, "/v1/notifications/\(id)/delivered").status == .accepted)
            _ = try await engine.drain()
            let removal = await channel.next()?["event"]
            #expect(removal?["message"] == .string("clear_notification"))
            #expect(removal?["data"]?["tag"] == .string("herald-\(id)"))
            _ = await channel.close()
        }
    }
}

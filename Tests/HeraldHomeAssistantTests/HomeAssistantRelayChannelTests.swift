import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldProviderMocks
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

@testable import HeraldHomeAssistant

/// A device the relay registered (its device id is the `webhook_id` of its `mobile_app`
/// registration, and it has no user) on the local push channel, `/api/websocket`, subscribed with
/// Home Assistant's own messages (the `mobile_app` document's `push_notification_channel`).
@Suite("Home Assistant relay devices on the local push channel")
struct HomeAssistantRelayChannelTests {
    static let webhookID = "7a3c9e0b5d2f41c8b6e1"

    /// The handshake Home Assistant's websocket API starts with, the credential as its access token.
    static func connect(port: Int, credential: String) async throws -> ChannelTestClient {
        let channel = ChannelTestClient(port: port, path: "/api/websocket")
        #expect(await channel.next()?["type"] == .string("auth_required"))
        channel.send(.object(["type": .string("auth"), "access_token": .string(credential)]))
        let answer = await channel.next()
        guard answer?["type"] == .string("auth_ok") else {
            throw TestFailure("auth refused: \(String(describing: answer))")
        }
        return channel
    }

    static func subscribe(_ channel: ChannelTestClient, id: Int, webhookID: String) async -> JSONValue? {
        channel.send(
            .object([
                "id": .number(JSONNumber(id)), "type": .string("mobile_app/push_notification_channel"),
                "webhook_id": .string(webhookID), "support_confirm": .bool(true),
            ]))
        return await channel.next()
    }

    @Test(
        "The webhook id Home Assistant sends opens the relay's device with its channel credential; a push goes over it"
    )
    func webhookIDOpensTheChannel() async throws {
        let harness = try await EngineHarness(dialects: HomeAssistantCaller.dialects(), otherApps: ["other"])
        let token = Fixtures.fcmToken()
        try await harness.live { api, port in
            let relay = HomeAssistantCaller(client: api.client)
            let first = try await relay.send("Hello", token: token, webhookID: Self.webhookID)
            #expect(first.status == .created)
            try await harness.drain()
            let installation = try #require(
                try await harness.server.store.installations(appID: "demo", deviceID: Self.webhookID).first)
            #expect(installation.userID == nil)
            let credential = try #require(
                try await api.call(.post, "/v1/installations/\(installation.id)/channel-credential").string(
                    "credential"))

            let channel = try await Self.connect(port: port, credential: credential)
            let subscribed = await Self.subscribe(channel, id: 1, webhookID: Self.webhookID)
            #expect(subscribed?["success"] == .bool(true), "\(String(describing: subscribed))")

            let pushed = try await relay.send("Over the channel", token: token, webhookID: Self.webhookID)
            #expect(pushed.status == .created)
            try await harness.drain()
            let event = await channel.next()
            #expect(event?["type"] == .string("event"))
            #expect(event?["event"]?["message"] == .string("Over the channel"))
            let confirmID = try #require(event?["event"]?["hass_confirm_id"]?.stringValue)
            channel.send(
                .object([
                    "id": .number(2), "type": .string("mobile_app/push_notification_confirm"),
                    "webhook_id": .string(Self.webhookID), "confirm_id": .string(confirmID),
                ]))
            #expect(await channel.next()?["success"] == .bool(true))
            try await harness.drain()
            // The first push went to FCM; the second over the channel only.
            #expect(harness.fcm.requests.count == 1)
            await channel.close()
        }
    }

    @Test("Another app's credential, and a user token of the app, cannot subscribe to the relay's device")
    func othersCannot() async throws {
        let harness = try await EngineHarness(dialects: HomeAssistantCaller.dialects(), otherApps: ["other"])
        try await harness.live { api, port in
            let relay = HomeAssistantCaller(client: api.client)
            #expect(
                try await relay.send("Hello", token: Fixtures.fcmToken(), webhookID: Self.webhookID).status == .created)
            let installation = try #require(
                try await harness.server.store.installations(appID: "demo", deviceID: Self.webhookID).first)

            // A channel credential of the other app, even one made for this installation's id.
            let apps = harness.server.apps
            let stranger = try #require(apps.channelCredential(appID: "other", installationID: installation.id))
            let other = try await Self.connect(port: port, credential: stranger)
            for (id, webhookID) in [(1, Self.webhookID), (2, installation.id)] {
                let refused = await Self.subscribe(other, id: id, webhookID: webhookID)
                #expect(refused?["success"] == .bool(false))
                #expect(refused?["error"]?["code"] == .string("not_found"))
                #expect(refused?["error"]?["message"] == .string("Webhook ID not found"))
            }
            await other.close()

            // A user of the app: the relay's device has no user.
            let user = try await Self.connect(port: port, credential: try await harness.server.userToken("ann"))
            let refused = await Self.subscribe(user, id: 1, webhookID: Self.webhookID)
            #expect(refused?["error"]?["code"] == .string("unauthorized"))
            await user.close()
        }
    }
}

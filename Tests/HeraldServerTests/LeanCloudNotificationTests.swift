import Foundation
import HTTPTypes
import HeraldCore
import HeraldTestSupport
import Testing

/// What LeanCloud's clients read back and what each platform is shown (seed 003): `_Notification`'s
/// `status` and `subscribers`, `title` for Android only and `badge` / `sound` for iOS only, and the
/// refusal of an app-key push while client push is off.
@Suite("LeanCloud _Notification status, per-platform rendering, client push", .serialized)
struct LeanCloudNotificationTests {
    private static func lc(_ harness: EngineHarness, _ api: API) -> LeanCloudClient {
        let clock = harness.server.clock
        return LeanCloudClient(client: api.client, now: { clock.now })
    }

    /// An iOS (APNs) and an Android (FCM) installation; their tokens.
    private static func devices(_ lc: LeanCloudClient, badge: Int = 1) async throws -> (ios: String, android: String) {
        let token = Fixtures.apnsToken()
        let registrationID = Fixtures.fcmToken()
        _ = try await lc.save(#"{"deviceType":"ios","deviceToken":"\#(token)","badge":\#(badge)}"#)
        _ = try await lc.save(
            #"""
            {"deviceType":"android","installationId":"\#(UUID().uuidString.lowercased())",
            "registrationId":"\#(registrationID)","vendor":"fcm"}
            """#)
        return (token, registrationID)
    }

    @Test("An app-key push while client push is off: 119 in LeanCloud's body, naming the setting; nothing sent")
    func clientPushOff() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects())
        try await harness.run { api in
            let lc = Self.lc(harness, api)
            _ = try await Self.devices(lc)
            // The guide's request to every device, as written (X-AVOSCloud-Application-Key: the app key).
            let refused = try await lc.call(
                .post, "/1.1/push", auth: .legacy, body: "{\n\"data\": {\n\"alert\": \"Hello From AVOS Cloud.\"\n}\n}")
            #expect(refused.status == .forbidden)
            #expect(refused.leanCloudCode == 119)
            let message = try #require(refused.string("error"))
            #expect(message.contains("app.demo.leancloud.client_push"))
            #expect(refused.json?.objectValue?.keys.sorted() == ["code", "error"])
            for auth: LeanCloudClient.Auth in [.appKey, .signed(master: false, at: harness.server.clock.now)] {
                let again = try await lc.call(.post, "/1.1/push", auth: auth, body: #"{"data":{"alert":"x"}}"#)
                #expect(again.leanCloudCode == 119)
                #expect(again.string("error") == message)
            }
            try await harness.drain()
            #expect(try await lc.call(.get, "/1.1/classes/_Notification?count=1&limit=0").int("count") == 0)
            #expect(harness.apns.requests.isEmpty)
            #expect(harness.fcm.requests.isEmpty)
        }
    }
}

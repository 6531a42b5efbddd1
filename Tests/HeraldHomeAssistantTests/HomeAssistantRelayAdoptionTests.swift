import Foundation
import HTTPTypes
import HeraldCore
import HeraldEngine
import HeraldProviderMocks
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

@testable import HeraldAPI
@testable import HeraldHomeAssistant

/// The relay forwards a push token Herald has never seen, as the document's relay does (004):
/// Herald registers it from what Home Assistant sends, then delivers as for any relay push.
@Suite("Home Assistant push relay: tokens Herald has never seen")
struct HomeAssistantRelayAdoptionTests {
    static func settings(
        _ configure: (inout HomeAssistantRelayConfiguration) -> Void = { _ in }
    ) -> HomeAssistantRelayConfiguration {
        var settings = HomeAssistantRelayConfiguration(relay: true)
        configure(&settings)
        return settings
    }

    static func dialects(_ apps: [String: HomeAssistantRelayConfiguration]) -> DialectSettings {
        var dialects = DialectSettings()
        dialects.homeAssistant = apps
        return dialects
    }

    @Test("An unknown Android token is registered from the request and delivered through FCM")
    func androidToken() async throws {
        let harness = try await EngineHarness(dialects: Self.dialects(["demo": Self.settings()]))
        let token = Fixtures.fcmToken()
        try await harness.run { api in
            let ha = HomeAssistantCaller(client: api.client)
            let answer = try await ha.send("Door opened", title: "Home", token: token)
            #expect(answer.status == .created)
            // Queued, not sent yet: the provider's answer counts when the engine records it.
            #expect(answer.rateLimitCounts == [0, 0, 1, 150, 149])
            try await harness.drain()
            #expect(harness.fcm.requests.count == 1)
            #expect(harness.fcm.requests.first?.token == token)

            let installation = try #require(
                try await harness.server.store.installation(appID: "demo", service: .fcm, token: token))
            #expect(installation.platform == .android)
            #expect(installation.deviceID == HomeAssistantCaller.webhookID)
            #expect(installation.appVersion == "2024.3.3")
            #expect(installation.osVersion == "14")
            #expect(installation.valid)
            #expect(installation.userID == nil)

            // The next push finds the same installation.
            #expect(try await ha.send("Again", token: token).rateLimitCounts == [1, 0, 2, 150, 148])
            #expect(try await api.call(.get, "/v1/installations").items.count == 1)
        }
    }

    @Test(
        "Apple tokens: APNs in the configured environment with the Companion app id as topic; an FCM token of the iOS app goes to FCM"
    )
    func appleTokens() async throws {
        let harness = try await EngineHarness(
            dialects: Self.dialects(["demo": Self.settings { $0.apnsEnvironment = .sandbox }]), apnsSandbox: .separate)
        let apnsToken = Fixtures.apnsToken()
        let fcmToken = Fixtures.fcmToken()
        try await harness.run { api in
            let ha = HomeAssistantCaller(client: api.client)
            #expect(
                try await ha.send("Motion", token: apnsToken, appID: HomeAssistantCaller.iOSAppID).status == .created)
            #expect(
                try await ha.send("Motion", token: fcmToken, appID: HomeAssistantCaller.iOSAppID).status == .created)
            try await harness.drain()
            #expect(harness.apns.requests.isEmpty)
            #expect(harness.sandboxAPNs?.requests.count == 1)
            #expect(harness.sandboxAPNs?.requests.first?.header("apns-topic") == HomeAssistantCaller.iOSAppID)
            #expect(harness.fcm.requests.count == 1)

            let apple = try #require(
                try await harness.server.store.installation(appID: "demo", service: .apns, token: apnsToken))
            #expect(apple.platform == .ios)
            #expect(apple.environment == .sandbox)
            #expect(apple.bundleID == HomeAssistantCaller.iOSAppID)
            let viaFCM = try #require(
                try await harness.server.store.installation(appID: "demo", service: .fcm, token: fcmToken))
            #expect(viaFCM.platform == .ios)
        }
    }

    @Test(
        "A token the provider refused is answered InvalidToken with no provider request, until the app registers a new one"
    )
    func refusedToken() async throws {
        let harness = try await EngineHarness(dialects: Self.dialects(["demo": Self.settings()]))
        let token = Fixtures.fcmToken()
        try await harness.run { api in
            let ha = HomeAssistantCaller(client: api.client)
            harness.fcm.script(token: token, .unregistered)
            #expect(try await ha.send("First", token: token).status == .created)
            try await harness.drain()
            #expect(harness.fcm.requests.count == 1)

            for _ in 0..<2 {
                let gone = try await ha.send("Again", token: token)
                #expect(gone.status == .gone)
                #expect(gone.isJSON)
                #expect(gone.string("errorType") == "InvalidToken")
                #expect(gone.string("errorMessage") != nil)
            }
            try await harness.drain()
            #expect(harness.fcm.requests.count == 1)
            let stored = try await harness.server.store.installation(appID: "demo", service: .fcm, token: token)
            #expect(stored?.valid == false)

            // The Companion app registers a new token with Home Assistant: same webhook, new token.
            let renewed = Fixtures.fcmToken()
            #expect(try await ha.send("New", token: renewed).status == .created)
            try await harness.drain()
            #expect(harness.fcm.requests.count == 2)
            #expect(try await api.call(.get, "/v1/installations").items.count == 1)
        }
    }

    @Test("registered_only keeps a closed relay: an unknown token is refused and nothing is stored")
    func closedRelay() async throws {
        let harness = try await EngineHarness(
            dialects: Self.dialects(["demo": Self.settings { $0.registeredOnly = true }]))
        try await harness.run { api in
            let ha = HomeAssistantCaller(client: api.client)
            let answer = try await ha.send("Hello", token: Fixtures.fcmToken())
            #expect(answer.status == .notFound)
            #expect(answer.string("errorType") == "UnknownToken")
            #expect(try await api.call(.get, "/v1/installations").items.isEmpty)
            #expect(try await api.call(.get, "/v1/notifications").items.isEmpty)
            // A token registered natively is still relayed.
            let token = Fixtures.fcmToken()
            _ = try await api.register(#"{"platform":"android","token":"\#(token)"}"#)
            #expect(try await ha.send("Hello", token: token).status == .created)
        }
    }

    @Test("Several relay apps: app_ids decides which app takes a new token; a Companion app none lists is refused")
    func severalApps() async throws {
        let harness = try await EngineHarness(
            dialects: Self.dialects([
                "demo": Self.settings { $0.companionAppIDs = [HomeAssistantCaller.androidAppID] },
                "other": Self.settings { $0.companionAppIDs = [HomeAssistantCaller.iOSAppID] },
            ]), otherApps: ["other"])
        let android = Fixtures.fcmToken()
        let apple = Fixtures.apnsToken()
        try await harness.run { api in
            let ha = HomeAssistantCaller(client: api.client)
            #expect(try await ha.send("A", token: android).status == .created)
            #expect(try await ha.send("B", token: apple, appID: HomeAssistantCaller.iOSAppID).status == .created)
            let store = harness.server.store
            #expect(try await store.installation(appID: "demo", service: .fcm, token: android) != nil)
            #expect(try await store.installation(appID: "other", service: .fcm, token: android) == nil)
            #expect(try await store.installation(appID: "other", service: .apns, token: apple) != nil)
            #expect(try await store.installation(appID: "demo", service: .apns, token: apple) == nil)

            let stranger = try await ha.send("C", token: Fixtures.fcmToken(), appID: "com.example.fork")
            #expect(stranger.status == .notFound)
            #expect(stranger.string("errorType") == "UnknownApp")
            #expect(stranger.string("message")?.contains("home_assistant.app_ids") == true)
            try await harness.drain()
            #expect(harness.fcm.requests.count == 1)
            #expect(harness.apns.requests.count == 1)
        }
    }

    @Test(
        "new_tokens_per_minute bounds new tokens per address at its boundary; known tokens and the daily maximum are unaffected"
    )
    func newTokenLimit() async throws {
        let harness = try await EngineHarness(
            dialects: Self.dialects([
                "demo": Self.settings {
                    $0.newTokensPerMinute = 3
                    $0.maximumPerDay = 2
                }
            ]))
        try await harness.run { api in
            let ha = HomeAssistantCaller(client: api.client)
            // Four phones (each its own mobile_app registration, so its own webhook).
            let tokens = (0..<4).map { _ in Fixtures.fcmToken() }
            func send(_ message: String, _ index: Int) async throws -> CallResponse {
                try await ha.send(message, token: tokens[index], webhookID: "webhook-\(index)")
            }
            for index in 0..<3 {
                #expect(try await send("Hi", index).status == .created)
            }
            let refused = try await send("Hi", 3)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.isJSON)
            #expect(refused.string("errorType") == "RateLimited")
            #expect(refused.string("message")?.contains("3 new push tokens a minute") == true)
            #expect(Int(refused.headers[.retryAfter] ?? "") ?? 0 > 0)
            #expect(try await harness.server.store.installation(appID: "demo", service: .fcm, token: tokens[3]) == nil)

            // A known token is not a new one; its daily maximum holds as for any token.
            #expect(try await send("Two", 0).status == .created)
            let third = try await send("Three", 0)
            #expect(third.status == .tooManyRequests)
            #expect(third.rateLimitCounts == [0, 1, 3, 2, 0])

            // A minute later the address may register new tokens again.
            harness.server.clock.advance(by: .seconds(60))
            #expect(try await send("Hi", 3).status == .created)
            #expect(try await api.call(.get, "/v1/installations").items.count == 4)
        }
    }

    @Test("An unknown token for a service the app has not configured is refused, and nothing is stored")
    func unconfiguredService() async throws {
        let harness = try await ServerHarness(
            transports: ["demo": AppTransports([])], dialects: Self.dialects(["demo": Self.settings()]))
        try await harness.run { api in
            let answer = try await HomeAssistantCaller(client: api.client).send("Hello", token: Fixtures.fcmToken())
            #expect(answer.status == .internalServerError)
            #expect(answer.string("errorType") == "ProviderMisconfigured")
            #expect(answer.string("message")?.contains("app.demo.fcm") == true)
            #expect(try await api.call(.get, "/v1/installations").items.isEmpty)
        }
    }
}

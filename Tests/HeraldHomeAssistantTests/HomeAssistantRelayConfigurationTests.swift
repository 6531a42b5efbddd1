import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import Testing

@testable import HeraldAPI
@testable import HeraldHomeAssistant

@Suite("Home Assistant push relay settings")
struct HomeAssistantRelayConfigurationTests {
    static let app = [
        "HERALD_APPS": "home", "HERALD_APP_HOME_SERVER_KEY": "hsk_home-server-key-000",
        "HERALD_APP_HOME_CLIENT_KEY": "hck_home-client-key-000",
    ]

    @Test("The relay is off unless an app turns it on; the daily maximum defaults to Home Assistant's 150")
    func settings() async throws {
        let off = try await HeraldConfiguration.load(file: nil, environment: Self.app)
        #expect(off.dialects.homeAssistant["home"] == HomeAssistantRelayConfiguration(relay: false, maximumPerDay: 150))
        let on = try await HeraldConfiguration.load(
            file: nil,
            environment: Self.app.merging([
                "HERALD_APP_HOME_HOME_ASSISTANT_RELAY": "true", "HERALD_APP_HOME_HOME_ASSISTANT_MAX_PER_DAY": "500",
            ]) { $1 })
        #expect(on.dialects.homeAssistant["home"] == HomeAssistantRelayConfiguration(relay: true, maximumPerDay: 500))
    }

    @Test("Tokens never seen: an open relay by default, 60 new tokens a minute, production APNs; each key is read")
    func newTokens() async throws {
        let defaults = try #require(
            try await HeraldConfiguration.load(file: nil, environment: Self.app).dialects.homeAssistant["home"])
        #expect(!defaults.registeredOnly)
        #expect(defaults.companionAppIDs.isEmpty)
        #expect(defaults.apnsEnvironment == .production)
        #expect(defaults.newTokensPerMinute == 60)
        let set = try await HeraldConfiguration.load(
            file: nil,
            environment: Self.app.merging([
                "HERALD_APP_HOME_HOME_ASSISTANT_RELAY": "true",
                "HERALD_APP_HOME_HOME_ASSISTANT_REGISTERED_ONLY": "true",
                "HERALD_APP_HOME_HOME_ASSISTANT_APP_IDS": "io.robbie.HomeAssistant,io.robbie.HomeAssistant.dev",
                "HERALD_APP_HOME_HOME_ASSISTANT_APNS_ENVIRONMENT": "sandbox",
                "HERALD_APP_HOME_HOME_ASSISTANT_NEW_TOKENS_PER_MINUTE": "0",
            ]) { $1 })
        #expect(
            set.dialects.homeAssistant["home"]
                == HomeAssistantRelayConfiguration(
                    relay: true, registeredOnly: true,
                    companionAppIDs: ["io.robbie.HomeAssistant", "io.robbie.HomeAssistant.dev"],
                    apnsEnvironment: .sandbox, newTokensPerMinute: 0))
    }

    @Test(
        "Bad relay settings are refused naming the key",
        arguments: [
            (["HERALD_APP_HOME_HOME_ASSISTANT_RELAY": "maybe"], "app.home.home_assistant.relay"),
            (["HERALD_APP_HOME_HOME_ASSISTANT_MAX_PER_DAY": "0"], "app.home.home_assistant.max_per_day"),
            (["HERALD_APP_HOME_HOME_ASSISTANT_MAX_PER_DAY": "lots"], "app.home.home_assistant.max_per_day"),
            (["HERALD_APP_HOME_HOME_ASSISTANT_REGISTERED_ONLY": "perhaps"], "app.home.home_assistant.registered_only"),
            (["HERALD_APP_HOME_HOME_ASSISTANT_APNS_ENVIRONMENT": "dev"], "app.home.home_assistant.apns_environment"),
            (
                ["HERALD_APP_HOME_HOME_ASSISTANT_NEW_TOKENS_PER_MINUTE": "-1"],
                "app.home.home_assistant.new_tokens_per_minute"
            ),
        ])
    func invalid(environment: [String: String], key: String) async throws {
        let error = await #expect(throws: HeraldError.self) {
            try await HeraldConfiguration.load(file: nil, environment: Self.app.merging(environment) { $1 })
        }
        #expect(error?.code == "invalid_configuration")
        #expect(error?.field == key)
    }
}

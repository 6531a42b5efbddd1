import Configuration
import HeraldCore

/// An app's settings for the Home Assistant push relay. The relay is off for an app unless it
/// turns it on: Home Assistant authenticates with nothing but the push token.
public struct HomeAssistantRelayConfiguration: Sendable, Equatable {
    /// Home Assistant's reference limit: its Companion relay sends at most 150 notifications per
    /// token per UTC day (the `mobile_app` push notification document).
    public static let defaultMaximumPerDay = 150
    /// The largest configurable daily maximum.
    public static let maximumPerDayRange = 1...1_000_000
    /// Push tokens Herald has not seen that one client address may register a minute, by default.
    public static let defaultNewTokensPerMinute = 60
    /// The configurable range of ``newTokensPerMinute`` (0: no limit).
    public static let newTokensPerMinuteRange = 0...100_000

    /// Whether the relay serves this app's push tokens.
    public var relay: Bool
    /// Notifications accepted per push token per UTC day.
    public var maximumPerDay: Int
    /// Whether only tokens registered through another API are relayed (a closed relay); otherwise a
    /// token Herald has never seen is registered from what Home Assistant sends, as the document's
    /// relay forwards any `push_token`.
    public var registeredOnly: Bool
    /// The Companion app ids (`registration_info.app_id`) this app serves, when several apps enable
    /// the relay: a token Herald has never seen goes to the app listing its app id.
    public var companionAppIDs: [String]
    /// The APNs environment of Apple tokens registered by the relay (a store or TestFlight build is
    /// `production`).
    public var apnsEnvironment: PushEnvironment
    /// Tokens Herald has never seen that one client address may register a minute (0: no limit).
    public var newTokensPerMinute: Int

    /// Creates the settings.
    public init(
        relay: Bool = false, maximumPerDay: Int = Self.defaultMaximumPerDay, registeredOnly: Bool = false,
        companionAppIDs: [String] = [], apnsEnvironment: PushEnvironment = .production,
        newTokensPerMinute: Int = Self.defaultNewTokensPerMinute
    ) {
        self.relay = relay
        self.maximumPerDay = maximumPerDay
        self.registeredOnly = registeredOnly
        self.companionAppIDs = companionAppIDs
        self.apnsEnvironment = apnsEnvironment
        self.newTokensPerMinute = newTokensPerMinute
    }

    /// Reads, under `app.<id>.home_assistant`: `relay` (boolean; `false`), `max_per_day` (integer, 1 to
    /// 1,000,000; `150`), `registered_only` (boolean; `false`), `app_ids` (list of Companion app ids;
    /// empty), `apns_environment` (`sandbox` or `production`; `production`) and
    /// `new_tokens_per_minute` (integer, 0 to 100,000, 0 = no limit; `60`).
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    public init(appID: String, reader: ConfigReader) throws {
        let prefix = "app.\(appID).\(HomeAssistantRelayRoutes.settingsKey)"
        relay = try HeraldConfiguration.boolean(reader, "relay", default: false, key: "\(prefix).relay")
        maximumPerDay = try HeraldConfiguration.integer(
            reader, "max_per_day", default: Self.defaultMaximumPerDay, key: "\(prefix).max_per_day")
        guard Self.maximumPerDayRange.contains(maximumPerDay) else {
            throw HeraldConfiguration.invalid("\(prefix).max_per_day", "must be 1 to 1000000")
        }
        registeredOnly = try HeraldConfiguration.boolean(
            reader, "registered_only", default: false, key: "\(prefix).registered_only")
        companionAppIDs = reader.stringArray(forKey: "app_ids", default: [])
        guard
            companionAppIDs.allSatisfy({ !$0.isEmpty && $0.utf8.count <= HomeAssistantPushRequest.maxRegistrationText })
        else {
            throw HeraldConfiguration.invalid("\(prefix).app_ids", "must list non-empty app ids")
        }
        let environment = reader.string(forKey: "apns_environment", default: PushEnvironment.production.rawValue)
        guard let parsed = PushEnvironment(rawValue: environment) else {
            throw HeraldConfiguration.invalid("\(prefix).apns_environment", "must be sandbox or production")
        }
        apnsEnvironment = parsed
        newTokensPerMinute = try HeraldConfiguration.integer(
            reader, "new_tokens_per_minute", default: Self.defaultNewTokensPerMinute,
            key: "\(prefix).new_tokens_per_minute")
        guard Self.newTokensPerMinuteRange.contains(newTokensPerMinute) else {
            throw HeraldConfiguration.invalid("\(prefix).new_tokens_per_minute", "must be 0 to 100000")
        }
    }
}

extension HomeAssistantRelayRoutes {
    static func settings(appID: String, reader: ConfigReader) throws -> HomeAssistantRelayConfiguration {
        try HomeAssistantRelayConfiguration(appID: appID, reader: reader)
    }
}

extension DialectSettings {
    /// The Home Assistant push relay's settings, by app.
    public var homeAssistant: [String: HomeAssistantRelayConfiguration] {
        get { settings(of: HomeAssistantRelayRoutes.self) }
        set { replace(HomeAssistantRelayRoutes.self, with: newValue) }
    }
}

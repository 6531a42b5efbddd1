import Configuration
import HeraldAPI
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
    /// Hours between retries of a token the provider invalidated, by default.
    public static let defaultInvalidRetryHours = 24
    /// The configurable range of ``invalidRetryHours`` (0: never retried; a year at most).
    public static let invalidRetryHoursRange = 0...8_760

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
    /// Hours between two sends to a token the provider invalidated (0: never): the relay pushes to it
    /// again at most this often, and a delivery revives its installation.
    public var invalidRetryHours: Int

    /// Creates the settings.
    public init(
        relay: Bool = false, maximumPerDay: Int = Self.defaultMaximumPerDay, registeredOnly: Bool = false,
        companionAppIDs: [String] = [], apnsEnvironment: PushEnvironment = .production,
        newTokensPerMinute: Int = Self.defaultNewTokensPerMinute, invalidRetryHours: Int = Self.defaultInvalidRetryHours
    ) {
        self.relay = relay
        self.maximumPerDay = maximumPerDay
        self.registeredOnly = registeredOnly
        self.companionAppIDs = companionAppIDs
        self.apnsEnvironment = apnsEnvironment
        self.newTokensPerMinute = newTokensPerMinute
        self.invalidRetryHours = invalidRetryHours
    }

    /// Reads app `appID`'s ``Settings``.
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    public init(appID: String, reader: ConfigReader) throws {
        relay = try reader.value(Settings.relay, app: appID)
        maximumPerDay = try reader.value(Settings.maximumPerDay, app: appID)
        registeredOnly = try reader.value(Settings.registeredOnly, app: appID)
        companionAppIDs = reader.value(Settings.companionAppIDs, app: appID)
        guard
            companionAppIDs.allSatisfy({ !$0.isEmpty && $0.utf8.count <= HomeAssistantPushRequest.maxRegistrationText })
        else {
            throw HeraldError.invalidConfiguration(
                Settings.companionAppIDs.key(app: appID), "must list non-empty app ids")
        }
        apnsEnvironment = try reader.value(Settings.apnsEnvironment, app: appID)
        newTokensPerMinute = try reader.value(Settings.newTokensPerMinute, app: appID)
        invalidRetryHours = try reader.value(Settings.invalidRetryHours, app: appID)
    }

    /// An app's Home Assistant push relay settings.
    public enum Settings {
        public static let relay = Setting<Bool>(
            "app.<id>.home_assistant.relay", default: false,
            """
            Home Assistant push relay: serve this app's push tokens at `POST /ha/push`. Off unless turned on: Home \
            Assistant authenticates with nothing but the push token.
            """)
        public static let maximumPerDay = Setting<Int>(
            "app.<id>.home_assistant.max_per_day", HomeAssistantRelayConfiguration.maximumPerDayRange,
            default: HomeAssistantRelayConfiguration.defaultMaximumPerDay,
            "Home Assistant push relay: notifications accepted per push token per UTC day.")
        public static let registeredOnly = Setting<Bool>(
            "app.<id>.home_assistant.registered_only", default: false,
            """
            Home Assistant push relay: relay only tokens registered through another API (a closed relay); otherwise \
            a token never seen is registered from what Home Assistant sends.
            """)
        public static let companionAppIDs = Setting<[String]>(
            "app.<id>.home_assistant.app_ids", .stringArray,
            """
            Home Assistant push relay: the Companion app ids (`registration_info.app_id`) whose new tokens this app \
            takes, when several apps enable the relay.
            """)
        public static let apnsEnvironment = Setting<PushEnvironment>(
            "app.<id>.home_assistant.apns_environment", choices: [.sandbox, .production], default: .production,
            """
            Home Assistant push relay: the APNs environment of the Apple tokens it registers (a store or TestFlight \
            build is `production`); a reload that changes it moves the APNs installations it registered.
            """)
        public static let newTokensPerMinute = Setting<Int>(
            "app.<id>.home_assistant.new_tokens_per_minute", HomeAssistantRelayConfiguration.newTokensPerMinuteRange,
            default: HomeAssistantRelayConfiguration.defaultNewTokensPerMinute,
            "Home Assistant push relay: tokens never seen that one client address may register a minute (`0`: no limit)."
        )
        public static let invalidRetryHours = Setting<Int>(
            "app.<id>.home_assistant.invalid_retry_hours", HomeAssistantRelayConfiguration.invalidRetryHoursRange,
            default: HomeAssistantRelayConfiguration.defaultInvalidRetryHours,
            """
            Home Assistant push relay: hours between pushes to a token the provider invalidated (`0`: never); a \
            delivery revives its installation. A reload retries every invalidated token at once.
            """)
        /// Every setting above, in the reference's order.
        public static let all: [any DeclaredSetting] = [
            relay, maximumPerDay, registeredOnly, companionAppIDs, apnsEnvironment, newTokensPerMinute,
            invalidRetryHours,
        ]
    }
}

extension HomeAssistantRelayRoutes {
    package static func settings(appID: String, reader: ConfigReader) throws -> HomeAssistantRelayConfiguration {
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

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

    /// Whether the relay serves this app's push tokens.
    public var relay: Bool
    /// Notifications accepted per push token per UTC day.
    public var maximumPerDay: Int

    /// Creates the settings.
    public init(relay: Bool = false, maximumPerDay: Int = Self.defaultMaximumPerDay) {
        self.relay = relay
        self.maximumPerDay = maximumPerDay
    }

    /// Reads, under `app.<id>.home_assistant`: `relay` (boolean; `false`) and `max_per_day`
    /// (integer, 1 to 1,000,000; `150`).
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    public init(appID: String, reader: ConfigReader) throws {
        let prefix = "app.\(appID).\(HomeAssistantRelayRoutes.settingsKey)"
        relay = try HeraldConfiguration.boolean(reader, "relay", default: false, key: "\(prefix).relay")
        maximumPerDay = try HeraldConfiguration.integer(
            reader, "max_per_day", default: Self.defaultMaximumPerDay, key: "\(prefix).max_per_day")
        guard Self.maximumPerDayRange.contains(maximumPerDay) else {
            throw HeraldConfiguration.invalid("\(prefix).max_per_day", "must be 1 to 1000000")
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

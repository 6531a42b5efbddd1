import Configuration
import Foundation
import HeraldAPI
import HeraldCore

extension GotifyRoutes {
    /// An app's Gotify publishing settings (its application tokens are its publish keys,
    /// `app.<id>.publish_keys`, each bound to a target or to everyone).
    package static let settingsDeclared = PublishConfiguration.Settings(
        dialect: settingsKey, title: settingsTitle, routes: "Gotify's `POST /message`")

    package static func settings(appID: String, reader: ConfigReader) throws -> PublishConfiguration {
        try PublishConfiguration(appID: appID, reader: reader, settings: settingsDeclared)
    }
}

extension DialectSettings {
    /// Gotify publishing's settings, by app.
    public var gotify: [String: PublishConfiguration] {
        get { settings(of: GotifyRoutes.self) }
        set { replace(GotifyRoutes.self, with: newValue) }
    }
}

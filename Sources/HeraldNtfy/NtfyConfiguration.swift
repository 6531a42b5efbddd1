import Configuration
import Foundation
import HeraldAPI
import HeraldCore

extension NtfyRoutes {
    /// An app's ntfy publishing settings (its credentials are its publish keys, `app.<id>.publish_keys`).
    package static let settingsDeclared = PublishConfiguration.Settings(
        dialect: settingsKey, title: settingsTitle, routes: "ntfy's API (`POST /`, `PUT`/`POST /<topic>`)")

    package static func settings(appID: String, reader: ConfigReader) throws -> PublishConfiguration {
        try PublishConfiguration(appID: appID, reader: reader, settings: settingsDeclared)
    }
}

extension DialectSettings {
    /// ntfy publishing's settings, by app.
    public var ntfy: [String: PublishConfiguration] {
        get { settings(of: NtfyRoutes.self) }
        set { replace(NtfyRoutes.self, with: newValue) }
    }
}

import Configuration
import HeraldCore

/// An app's settings for the AOVIS dialect.
public struct AOVISConfiguration: Sendable {
    /// The APNs environment of iOS tokens registered through `POST /api/internal/push/register`
    /// (the AOVIS request does not say; a TestFlight or App Store build is `production`).
    public var apnsEnvironment: PushEnvironment

    /// Creates the settings.
    public init(apnsEnvironment: PushEnvironment = .production) {
        self.apnsEnvironment = apnsEnvironment
    }

    /// Reads, under `app.<id>.aovis`: `apns_environment` (`sandbox` or `production`; `production`).
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    public init(appID: String, reader: ConfigReader) throws {
        let raw = reader.string(forKey: "apns_environment", default: PushEnvironment.production.rawValue)
        guard let environment = PushEnvironment(rawValue: raw) else {
            throw HeraldConfiguration.invalid("app.\(appID).aovis.apns_environment", "must be sandbox or production")
        }
        self.apnsEnvironment = environment
    }
}

extension AOVISRoutes {
    static func settings(appID: String, reader: ConfigReader) throws -> AOVISConfiguration {
        try AOVISConfiguration(appID: appID, reader: reader)
    }
}

extension DialectSettings {
    /// AOVIS's settings, by app.
    public var aovis: [String: AOVISConfiguration] {
        get { settings(of: AOVISRoutes.self) }
        set { replace(AOVISRoutes.self, with: newValue) }
    }
}

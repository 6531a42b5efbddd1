import Configuration
import HeraldCore

/// An app's settings for the AOVIS dialect.
public struct AOVISConfiguration: Sendable {
    /// The APNs environment of iOS tokens registered through `POST /api/internal/push/register`
    /// (the AOVIS request does not say; a TestFlight or App Store build is `production`).
    public var apnsEnvironment: PushEnvironment
    /// Whether tokens registered through the AOVIS route are delivered through AWS SNS (a platform
    /// endpoint per token, `sns_endpoint_arn` back-filled, as the guide's backend does) rather than
    /// straight to APNs and FCM; the app then configures `app.<id>.sns.*`.
    public var deliverThroughSNS: Bool

    /// Creates the settings.
    public init(apnsEnvironment: PushEnvironment = .production, deliverThroughSNS: Bool = false) {
        self.apnsEnvironment = apnsEnvironment
        self.deliverThroughSNS = deliverThroughSNS
    }

    /// Reads, under `app.<id>.aovis`: `apns_environment` (`sandbox` or `production`; `production`) and
    /// `delivery` (`direct` or `sns`; `direct`).
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    public init(appID: String, reader: ConfigReader) throws {
        let raw = reader.string(forKey: "apns_environment", default: PushEnvironment.production.rawValue)
        guard let environment = PushEnvironment(rawValue: raw) else {
            throw HeraldConfiguration.invalid("app.\(appID).aovis.apns_environment", "must be sandbox or production")
        }
        self.apnsEnvironment = environment
        let delivery = reader.string(forKey: "delivery", default: "direct")
        guard delivery == "direct" || delivery == "sns" else {
            throw HeraldConfiguration.invalid("app.\(appID).aovis.delivery", "must be direct or sns")
        }
        self.deliverThroughSNS = delivery == "sns"
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

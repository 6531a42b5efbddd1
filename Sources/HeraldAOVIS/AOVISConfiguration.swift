import Configuration
import HeraldAPI
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

    /// Reads app `appID`'s ``Settings``.
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    public init(appID: String, reader: ConfigReader) throws {
        apnsEnvironment = try reader.value(Settings.apnsEnvironment, app: appID)
        deliverThroughSNS = try reader.value(Settings.delivery, app: appID) == "sns"
    }

    /// An app's AOVIS settings.
    public enum Settings {
        public static let apnsEnvironment = Setting<PushEnvironment>(
            "app.<id>.aovis.apns_environment", choices: [.sandbox, .production], default: .production,
            """
            The APNs environment of iOS tokens registered through the AOVIS route (its request does not say; a \
            TestFlight or App Store build is `production`).
            """)
        public static let delivery = Setting<String>(
            "app.<id>.aovis.delivery", .choice(["direct", "sns"]), default: "direct",
            """
            How tokens registered through the AOVIS route are delivered: straight to APNs and FCM (`direct`), or \
            through AWS SNS (`sns`: a platform endpoint per token, `sns_endpoint_arn` back-filled; the app then \
            configures `app.<id>.sns.*`).
            """)
        /// Every setting above, in the reference's order.
        public static let all: [any DeclaredSetting] = [apnsEnvironment, delivery]
    }
}

extension AOVISRoutes {
    package static func settings(appID: String, reader: ConfigReader) throws -> AOVISConfiguration {
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

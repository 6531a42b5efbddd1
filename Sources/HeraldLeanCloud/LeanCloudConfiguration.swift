import Configuration
import HeraldAPI
import HeraldCore

/// An app's settings for the LeanCloud push API. Without an app id and an app key the dialect is
/// off for the app.
public struct LeanCloudConfiguration: Sendable, Equatable {
    /// The signature timestamp may differ from Herald's clock by at most this much (both ways).
    public static let defaultMaxSignatureSkew: Duration = .seconds(900)

    /// The LeanCloud application id clients send in `X-LC-Id` (or `X-AVOSCloud-Application-Id`).
    public var appID: String?
    /// The app key: creates and updates installations, reads the one it names, and pushes when
    /// ``clientPush`` is on.
    public var appKey: String?
    /// The master key: everything. Nil: no caller has master rights.
    public var masterKey: String?
    /// Whether the app key may push (LeanCloud's "allow client push" switch; off by default).
    public var clientPush: Bool
    /// How far a signature's timestamp may be from Herald's clock.
    public var maxSignatureSkew: Duration

    /// Whether the dialect serves the app.
    public var isEnabled: Bool { appID != nil && appKey != nil }

    /// Creates the settings.
    public init(
        appID: String? = nil, appKey: String? = nil, masterKey: String? = nil, clientPush: Bool = false,
        maxSignatureSkew: Duration = Self.defaultMaxSignatureSkew
    ) {
        self.appID = appID
        self.appKey = appKey
        self.masterKey = masterKey
        self.clientPush = clientPush
        self.maxSignatureSkew = maxSignatureSkew
    }

    /// Reads app `herald`'s ``Settings``.
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    public init(appID herald: String, reader: ConfigReader) throws {
        appID = try reader.value(Settings.appID, app: herald)
        appKey = try reader.value(Settings.appKey, app: herald)
        masterKey = try reader.value(Settings.masterKey, app: herald)
        for (setting, value) in [(Settings.appID, appID), (Settings.appKey, appKey), (Settings.masterKey, masterKey)] {
            guard let value else { continue }
            // A key is compared whole and signed as text: no separators LeanCloud's headers use.
            guard (1...256).contains(value.count), !value.contains(","), !value.contains(where: \.isWhitespace)
            else {
                throw HeraldError.invalidConfiguration(
                    setting.key(app: herald), "must be 1 to 256 characters, no ',' or spaces")
            }
        }
        switch (appID, appKey) {
        case (nil, nil), (_?, _?): break
        case (nil, _):
            throw HeraldError.invalidConfiguration(Settings.appID.key(app: herald), "is required with app_key")
        case (_, nil):
            throw HeraldError.invalidConfiguration(Settings.appKey.key(app: herald), "is required with app_id")
        }
        if masterKey != nil, appID == nil {
            throw HeraldError.invalidConfiguration(Settings.appID.key(app: herald), "is required with master_key")
        }
        if let masterKey, masterKey == appKey {
            throw HeraldError.invalidConfiguration(Settings.masterKey.key(app: herald), "must differ from app_key")
        }
        clientPush = try reader.value(Settings.clientPush, app: herald)
        maxSignatureSkew = .seconds(try reader.value(Settings.signatureSkewSeconds, app: herald))
    }

    /// An app's LeanCloud API settings.
    public enum Settings {
        public static let appID = Setting<String?>(
            "app.<id>.leancloud.app_id", .other("1–256 chars, no `,` or spaces"),
            """
            LeanCloud API: the application id clients send (`X-LC-Id`); set together with `app_key` (none: the API \
            is off for the app).
            """)
        public static let appKey = Setting<String?>(
            "app.<id>.leancloud.app_key", .other("1–256 chars, no `,` or spaces"), secret: true,
            """
            LeanCloud API: the app key, which creates and updates installations, reads the one it names, and pushes \
            when `client_push` is on.
            """)
        public static let masterKey = Setting<String?>(
            "app.<id>.leancloud.master_key", .other("1–256 chars, no `,` or spaces"), secret: true,
            "LeanCloud API: the master key, different from the app key: everything (none: no caller has master rights)."
        )
        public static let clientPush = Setting<Bool>(
            "app.<id>.leancloud.client_push", default: false,
            "LeanCloud API: whether the app key may push (LeanCloud's \"allow client push\" switch).")
        public static let signatureSkewSeconds = Setting<Int>(
            "app.<id>.leancloud.signature_skew_seconds", 1...86_400, unit: "seconds", default: 900,
            "LeanCloud API: how far an `X-LC-Sign` timestamp may be from Herald's clock, both ways.")
        /// Every setting above, in the reference's order.
        public static let all: [any DeclaredSetting] = [appID, appKey, masterKey, clientPush, signatureSkewSeconds]
    }
}

extension LeanCloudRoutes {
    package static func settings(appID: String, reader: ConfigReader) throws -> LeanCloudConfiguration {
        try LeanCloudConfiguration(appID: appID, reader: reader)
    }
}

extension DialectSettings {
    /// The LeanCloud push API's settings, by app.
    public var leanCloud: [String: LeanCloudConfiguration] {
        get { settings(of: LeanCloudRoutes.self) }
        set { replace(LeanCloudRoutes.self, with: newValue) }
    }
}

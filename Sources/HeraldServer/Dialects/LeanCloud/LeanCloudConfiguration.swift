import Configuration
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

    /// Reads, under `app.<id>.leancloud`: `app_id` and `app_key` (both or neither; none: the
    /// dialect is off for the app), `master_key` (secret; optional), `client_push` (boolean;
    /// `false`), `signature_skew_seconds` (integer, 1 to 86400; `900`).
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    public init(appID herald: String, reader: ConfigReader) throws {
        let prefix = "app.\(herald).\(LeanCloudRoutes.settingsKey)"
        appID = reader.string(forKey: "app_id")
        appKey = reader.string(forKey: "app_key", isSecret: true)
        masterKey = reader.string(forKey: "master_key", isSecret: true)
        for (name, value) in [("app_id", appID), ("app_key", appKey), ("master_key", masterKey)] {
            guard let value else { continue }
            // A key is compared whole and signed as text: no separators LeanCloud's headers use.
            guard (1...256).contains(value.count), !value.contains(","), !value.contains(where: \.isWhitespace)
            else {
                throw HeraldConfiguration.invalid("\(prefix).\(name)", "must be 1 to 256 characters, no ',' or spaces")
            }
        }
        switch (appID, appKey) {
        case (nil, nil), (_?, _?): break
        case (nil, _): throw HeraldConfiguration.invalid("\(prefix).app_id", "is required with app_key")
        case (_, nil): throw HeraldConfiguration.invalid("\(prefix).app_key", "is required with app_id")
        }
        if masterKey != nil, appID == nil {
            throw HeraldConfiguration.invalid("\(prefix).app_id", "is required with master_key")
        }
        if let masterKey, masterKey == appKey {
            throw HeraldConfiguration.invalid("\(prefix).master_key", "must differ from app_key")
        }
        clientPush = try HeraldConfiguration.boolean(
            reader, "client_push", default: false, key: "\(prefix).client_push")
        let skew = try HeraldConfiguration.integer(
            reader, "signature_skew_seconds", default: 900, key: "\(prefix).signature_skew_seconds")
        guard (1...86_400).contains(skew) else {
            throw HeraldConfiguration.invalid("\(prefix).signature_skew_seconds", "must be 1 to 86400")
        }
        maxSignatureSkew = .seconds(skew)
    }
}

extension LeanCloudRoutes {
    static func settings(appID: String, reader: ConfigReader) throws -> LeanCloudConfiguration {
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

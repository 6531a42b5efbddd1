import Configuration
import HeraldAPI
import HeraldCore
import HeraldSigV4

/// An app's settings for the SNS-compatible API. Without an access key the dialect is off for the app.
public struct SNSAPIConfiguration: Sendable {
    /// The account id in ARNs when none is configured.
    public static let defaultAccountID = "123456789012"
    /// The region SDKs sign for and ARNs name when none is configured.
    public static let defaultRegion = "us-east-1"

    /// The access key SDK callers sign with; nil turns the API off for the app.
    public var credentials: AWSCredentials?
    /// The region requests must be signed for, and ARNs name.
    public var region: String
    /// The 12-digit account id ARNs name.
    public var accountID: String

    /// Creates the settings.
    public init(
        credentials: AWSCredentials? = nil, region: String = Self.defaultRegion,
        accountID: String = Self.defaultAccountID
    ) {
        self.credentials = credentials
        self.region = region
        self.accountID = accountID
    }

    /// Reads app `appID`'s ``Settings``.
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    public init(appID: String, reader: ConfigReader) throws {
        let key = try reader.value(Settings.accessKeyID, app: appID)
        let secret = try reader.value(Settings.secretAccessKey, app: appID)
        switch (key, secret) {
        case (nil, nil): credentials = nil
        case (let key?, let secret?):
            guard !key.isEmpty, key.count <= 128, !key.contains("/"), !key.contains(" ") else {
                throw HeraldError.invalidConfiguration(
                    Settings.accessKeyID.key(app: appID), "must be 1 to 128 characters without '/' or spaces")
            }
            credentials = AWSCredentials(accessKeyID: key, secretAccessKey: secret)
        case (nil, _):
            throw HeraldError.invalidConfiguration(
                Settings.accessKeyID.key(app: appID), "is required with secret_access_key")
        case (_, nil):
            throw HeraldError.invalidConfiguration(
                Settings.secretAccessKey.key(app: appID), "is required with access_key_id")
        }
        region = try reader.value(Settings.region, app: appID)
        guard !region.isEmpty, region.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
            throw HeraldError.invalidConfiguration(
                Settings.region.key(app: appID), "must be a region name like us-east-1")
        }
        accountID = try reader.value(Settings.accountID, app: appID)
        guard accountID.count == 12, accountID.allSatisfy(\.isASCIIDigit) else {
            throw HeraldError.invalidConfiguration(Settings.accountID.key(app: appID), "must be 12 digits")
        }
    }

    /// An app's SNS-compatible API settings.
    public enum Settings {
        public static let accessKeyID = Setting<String?>(
            "app.<id>.sns_api.access_key_id", .other("1–128 chars, no `/` or spaces"),
            """
            SNS-compatible API: the AWS access key id SDKs sign with; set together with `secret_access_key` (none: \
            the API is off for the app).
            """)
        public static let secretAccessKey = Setting<String?>(
            "app.<id>.sns_api.secret_access_key", .string(minimumLength: 16), secret: true,
            "SNS-compatible API: the AWS secret access key SDKs sign with; set together with `access_key_id`.")
        public static let region = Setting<String>(
            "app.<id>.sns_api.region", .other("region name"), default: SNSAPIConfiguration.defaultRegion,
            "SNS-compatible API: the region requests must be signed for, and ARNs name.")
        public static let accountID = Setting<String>(
            "app.<id>.sns_api.account_id", .other("12 digits"), default: SNSAPIConfiguration.defaultAccountID,
            "SNS-compatible API: the account id ARNs name.")
        /// Every setting above, in the reference's order.
        public static let all: [any DeclaredSetting] = [accessKeyID, secretAccessKey, region, accountID]
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension SNSAPIRoutes {
    package static func settings(appID: String, reader: ConfigReader) throws -> SNSAPIConfiguration {
        try SNSAPIConfiguration(appID: appID, reader: reader)
    }
}

extension DialectSettings {
    /// The SNS-compatible API's settings, by app.
    public var snsAPI: [String: SNSAPIConfiguration] {
        get { settings(of: SNSAPIRoutes.self) }
        set { replace(SNSAPIRoutes.self, with: newValue) }
    }
}

import Configuration
import HeraldCore
import HeraldSNS

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

    /// Reads, under `app.<id>.sns_api`: `access_key_id` and `secret_access_key` (secret; both or
    /// neither; none: the API is off for the app), `region` (`us-east-1`), `account_id` (12 digits;
    /// `123456789012`).
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    public init(appID: String, reader: ConfigReader) throws {
        let key = reader.string(forKey: "access_key_id")
        let secret = reader.string(forKey: "secret_access_key", isSecret: true)
        switch (key, secret) {
        case (nil, nil): credentials = nil
        case (let key?, let secret?):
            guard !key.isEmpty, key.count <= 128, !key.contains("/"), !key.contains(" ") else {
                throw HeraldConfiguration.invalid(
                    "app.\(appID).sns_api.access_key_id", "must be 1 to 128 characters without '/' or spaces")
            }
            guard secret.count >= 16 else {
                throw HeraldConfiguration.invalid(
                    "app.\(appID).sns_api.secret_access_key", "must be at least 16 characters")
            }
            credentials = AWSCredentials(accessKeyID: key, secretAccessKey: secret)
        case (nil, _):
            throw HeraldConfiguration.invalid(
                "app.\(appID).sns_api.access_key_id", "is required with secret_access_key")
        case (_, nil):
            throw HeraldConfiguration.invalid(
                "app.\(appID).sns_api.secret_access_key", "is required with access_key_id")
        }
        region = reader.string(forKey: "region", default: Self.defaultRegion)
        guard !region.isEmpty, region.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
            throw HeraldConfiguration.invalid("app.\(appID).sns_api.region", "must be a region name like us-east-1")
        }
        accountID = reader.string(forKey: "account_id", default: Self.defaultAccountID)
        guard accountID.count == 12, accountID.allSatisfy(\.isASCIIDigit) else {
            throw HeraldConfiguration.invalid("app.\(appID).sns_api.account_id", "must be 12 digits")
        }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension SNSAPIRoutes {
    static func settings(appID: String, reader: ConfigReader) throws -> SNSAPIConfiguration {
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

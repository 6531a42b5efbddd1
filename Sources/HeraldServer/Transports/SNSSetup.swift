import Configuration
import Foundation
import HeraldAPI
import HeraldCore
import HeraldEngine
import HeraldSNS
import HeraldSigV4

extension ProviderConfiguration {
    /// AWS SNS: where SNS is, the credentials, and the app's platform applications.
    public struct SNS: Sendable {
        public var region: String
        /// A URL replacing the region's SNS host (an SNS-compatible server in tests).
        public var endpointURL: String?
        /// Nil: the standard `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` / `AWS_SESSION_TOKEN`.
        public var credentials: AWSCredentials?
        public var applications: SNSTransport.Applications
        /// The APNs topic of installations without a bundle id.
        public var topic: String?
        /// The SNS topic every endpoint is subscribed to, for broadcasts (``BroadcastRoute``).
        public var broadcastTopicARN: String?

        /// Creates SNS settings.
        public init(
            region: String = "us-east-1", endpointURL: String? = nil, credentials: AWSCredentials? = nil,
            applications: SNSTransport.Applications, topic: String? = nil, broadcastTopicARN: String? = nil
        ) {
            self.region = region
            self.endpointURL = endpointURL
            self.credentials = credentials
            self.applications = applications
            self.topic = topic
            self.broadcastTopicARN = broadcastTopicARN
        }
    }

    /// The app's SNS settings; nil when it names no platform application.
    public var sns: SNS? {
        get { settings(of: SNSSetup.self) }
        set { set(newValue, of: SNSSetup.self) }
    }
}

extension ProviderConfiguration.SNS {
    /// An app's AWS SNS settings.
    public enum Settings {
        public static let apnsApplicationARN = Setting<String?>(
            "app.<id>.sns.apns_application_arn", .other("platform application ARN"), defaultText: "none",
            "AWS SNS: the app's `APNS` platform application. With none of the three ARNs, SNS is off for the app.")
        public static let apnsSandboxApplicationARN = Setting<String?>(
            "app.<id>.sns.apns_sandbox_application_arn", .other("platform application ARN"),
            "AWS SNS: the app's `APNS_SANDBOX` platform application.")
        public static let gcmApplicationARN = Setting<String?>(
            "app.<id>.sns.gcm_application_arn", .other("platform application ARN"),
            "AWS SNS: the app's `GCM` (FCM) platform application.")
        public static let region = Setting<String>(
            "app.<id>.sns.region", .text, default: "us-east-1", "The AWS region of SNS.")
        public static let endpointURL = Setting<String?>(
            "app.<id>.sns.endpoint_url", .url(schemes: ["http", "https"]), defaultText: "the region's SNS host",
            "Where SNS is (an SNS-compatible server in tests).")
        public static let accessKeyID = Setting<String?>(
            "app.<id>.sns.access_key_id", .text, defaultText: "the `AWS_*` environment variables",
            "The AWS access key id SNS requests are signed with (SigV4); set together with `secret_access_key`.")
        public static let secretAccessKey = Setting<String?>(
            "app.<id>.sns.secret_access_key", .text, secret: true, defaultText: "the `AWS_*` environment variables",
            "The AWS secret access key; set together with `access_key_id`.")
        public static let sessionToken = Setting<String?>(
            "app.<id>.sns.session_token", .text, secret: true,
            "An AWS session token, for temporary credentials (used only with `access_key_id` and `secret_access_key`).")
        public static let topic = Setting<String?>(
            "app.<id>.sns.topic", .text, "The APNs topic of SNS installations registered without `bundle_id`.")
        public static let broadcastTopicARN = Setting<String?>(
            "app.<id>.sns.broadcast_topic_arn", .other("topic ARN"),
            """
            An SNS topic every endpoint is subscribed to: broadcasts without per-device rules go there in one \
            `Publish`.
            """)
        /// Every setting above, in the reference's order.
        public static let all: [any DeclaredSetting] = [
            apnsApplicationARN, apnsSandboxApplicationARN, gcmApplicationARN, region, endpointURL, accessKeyID,
            secretAccessKey, sessionToken, topic, broadcastTopicARN,
        ]
    }
}

/// AWS SNS mobile push: `app.<id>.sns.*`.
enum SNSSetup: ProviderSetup {
    static let settingsKey = "sns"

    /// Reads the app's ``ProviderConfiguration/SNS/Settings``: the platform applications (none: SNS is
    /// off), where SNS is, the credentials (both or neither: without, the `AWS_*` environment
    /// variables), the default topic and the broadcast topic.
    static func settings(appID: String, reader: ConfigReader) throws -> ProviderConfiguration.SNS? {
        typealias Declared = ProviderConfiguration.SNS.Settings
        let applications = SNSTransport.Applications(
            apns: try reader.value(Declared.apnsApplicationARN, app: appID),
            apnsSandbox: try reader.value(Declared.apnsSandboxApplicationARN, app: appID),
            gcm: try reader.value(Declared.gcmApplicationARN, app: appID))
        guard applications != SNSTransport.Applications() else { return nil }
        for (setting, arn) in [
            (Declared.apnsApplicationARN, applications.apns),
            (Declared.apnsSandboxApplicationARN, applications.apnsSandbox),
            (Declared.gcmApplicationARN, applications.gcm),
        ] {
            if let arn, !(arn.hasPrefix("arn:") && arn.split(separator: ":").count >= 6 && arn.contains(":app/")) {
                throw HeraldError.invalidConfiguration(setting.key(app: appID), "must be a platform application ARN")
            }
        }
        let broadcastTopic = try reader.value(Declared.broadcastTopicARN, app: appID)
        if let broadcastTopic,
            !(broadcastTopic.hasPrefix("arn:") && broadcastTopic.split(separator: ":").count == 6
                && !broadcastTopic.contains("/"))
        {
            throw HeraldError.invalidConfiguration(Declared.broadcastTopicARN.key(app: appID), "must be a topic ARN")
        }
        let keyID = try reader.value(Declared.accessKeyID, app: appID)
        let secret = try reader.value(Declared.secretAccessKey, app: appID)
        guard (keyID == nil) == (secret == nil) else {
            throw HeraldError.invalidConfiguration(
                Declared.secretAccessKey.key(app: appID), "and access_key_id go together")
        }
        var credentials: AWSCredentials?
        if let keyID, let secret {
            credentials = AWSCredentials(
                accessKeyID: keyID, secretAccessKey: secret,
                sessionToken: try reader.value(Declared.sessionToken, app: appID))
        }
        var endpointURL: String?
        if let url = try reader.value(Declared.endpointURL, app: appID) {
            guard let components = URLComponents(string: url), ["http", "https"].contains(components.scheme),
                components.host != nil
            else {
                throw HeraldError.invalidConfiguration(Declared.endpointURL.key(app: appID), "must be an http(s) URL")
            }
            endpointURL = url
        }
        return ProviderConfiguration.SNS(
            region: try reader.value(Declared.region, app: appID), endpointURL: endpointURL,
            credentials: credentials, applications: applications,
            topic: try reader.value(Declared.topic, app: appID), broadcastTopicARN: broadcastTopic)
    }

    static func transport(
        _ settings: ProviderConfiguration.SNS?, appID: String, now: @escaping @Sendable () -> Date
    ) throws -> any Transport {
        guard let settings else { return SNSTransport(client: nil) }
        do {
            let client = try SNSClient(
                configuration: .init(
                    region: settings.region, credentials: settings.credentials, endpoint: settings.endpointURL),
                now: now)
            return SNSTransport(
                client: client, applications: settings.applications, topic: settings.topic,
                broadcastTopic: settings.broadcastTopicARN)
        } catch {
            throw HeraldError.invalidConfiguration("app.\(appID).sns", error.message)
        }
    }
}

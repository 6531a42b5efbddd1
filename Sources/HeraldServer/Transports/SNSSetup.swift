import Configuration
import Foundation
import HeraldCore
import HeraldEngine
import HeraldSNS

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

/// AWS SNS mobile push: `app.<id>.sns.*`.
enum SNSSetup: ProviderSetup {
    static let settingsKey = "sns"

    /// Reads `apns_application_arn`, `apns_sandbox_application_arn`, `gcm_application_arn` (the
    /// platform applications; none: SNS is off), `region` (`us-east-1`), `endpoint_url`,
    /// `access_key_id` + `secret_access_key` (+ `session_token`; both or neither: without, the
    /// `AWS_*` environment variables), `topic`, `broadcast_topic_arn` (a topic for broadcasts).
    static func settings(appID: String, reader: ConfigReader) throws -> ProviderConfiguration.SNS? {
        let prefix = "app.\(appID).sns"
        let applications = SNSTransport.Applications(
            apns: reader.string(forKey: "apns_application_arn"),
            apnsSandbox: reader.string(forKey: "apns_sandbox_application_arn"),
            gcm: reader.string(forKey: "gcm_application_arn"))
        guard applications != SNSTransport.Applications() else { return nil }
        for (key, arn) in [
            ("apns_application_arn", applications.apns), ("apns_sandbox_application_arn", applications.apnsSandbox),
            ("gcm_application_arn", applications.gcm),
        ] {
            if let arn, !(arn.hasPrefix("arn:") && arn.split(separator: ":").count >= 6 && arn.contains(":app/")) {
                throw HeraldConfiguration.invalid("\(prefix).\(key)", "must be a platform application ARN")
            }
        }
        let broadcastTopic = reader.string(forKey: "broadcast_topic_arn")
        if let broadcastTopic,
            !(broadcastTopic.hasPrefix("arn:") && broadcastTopic.split(separator: ":").count == 6
                && !broadcastTopic.contains("/"))
        {
            throw HeraldConfiguration.invalid("\(prefix).broadcast_topic_arn", "must be a topic ARN")
        }
        let keyID = reader.string(forKey: "access_key_id")
        let secret = reader.string(forKey: "secret_access_key", isSecret: true)
        guard (keyID == nil) == (secret == nil) else {
            throw HeraldConfiguration.invalid("\(prefix).secret_access_key", "and access_key_id go together")
        }
        var credentials: AWSCredentials?
        if let keyID, let secret {
            credentials = AWSCredentials(
                accessKeyID: keyID, secretAccessKey: secret,
                sessionToken: reader.string(forKey: "session_token", isSecret: true))
        }
        var endpointURL: String?
        if let url = reader.string(forKey: "endpoint_url") {
            guard let components = URLComponents(string: url), ["http", "https"].contains(components.scheme),
                components.host != nil
            else { throw HeraldConfiguration.invalid("\(prefix).endpoint_url", "must be an http(s) URL") }
            endpointURL = url
        }
        return ProviderConfiguration.SNS(
            region: reader.string(forKey: "region", default: "us-east-1"), endpointURL: endpointURL,
            credentials: credentials, applications: applications, topic: reader.string(forKey: "topic"),
            broadcastTopicARN: broadcastTopic)
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
            throw HeraldConfiguration.invalid("app.\(appID).sns", error.message)
        }
    }
}

import Configuration
import Foundation
import HeraldCore
import HeraldEngine
import HeraldFCM

extension ProviderConfiguration {
    /// FCM credentials and where to reach it.
    public struct FCM: Sendable {
        /// The service-account JSON file.
        public var serviceAccountFile: String
        /// `https://host:port` replacing `fcm.googleapis.com`.
        public var url: String?
        /// PEM trust roots for FCM and the token endpoint.
        public var caFile: String?
        public var connections: Int

        /// Creates FCM settings.
        public init(serviceAccountFile: String, url: String? = nil, caFile: String? = nil, connections: Int = 2) {
            self.serviceAccountFile = serviceAccountFile
            self.url = url
            self.caFile = caFile
            self.connections = connections
        }
    }

    /// The app's FCM settings; nil when it configures none.
    public var fcm: FCM? {
        get { settings(of: FCMSetup.self) }
        set { set(newValue, of: FCMSetup.self) }
    }
}

/// Firebase Cloud Messaging HTTP v1: `app.<id>.fcm.*`.
enum FCMSetup: ProviderSetup {
    static let settingsKey = "fcm"

    /// Reads `service_account_file`, `url`, `ca_file`, `connections` (2). Nil without an account file.
    static func settings(appID: String, reader: ConfigReader) throws -> ProviderConfiguration.FCM? {
        let prefix = "app.\(appID).fcm"
        if let file = reader.string(forKey: "service_account_file") {
            var fcm = ProviderConfiguration.FCM(
                serviceAccountFile: file, url: reader.string(forKey: "url"),
                caFile: reader.string(forKey: "ca_file"))
            fcm.connections = try HeraldConfiguration.integer(
                reader, "connections", default: 2, key: "\(prefix).connections")
            return fcm
        }
        return nil
    }

    static func transport(
        _ settings: ProviderConfiguration.FCM?, appID: String, now: @escaping @Sendable () -> Date
    ) throws -> any Transport {
        guard let settings else { return FCMTransport(client: nil) }
        let prefix = "app.\(appID).fcm"
        guard let bytes = FileManager.default.contents(atPath: settings.serviceAccountFile) else {
            throw HeraldConfiguration.invalid("\(prefix).service_account_file", "cannot be read")
        }
        let account: FCMServiceAccount
        do {
            account = try FCMServiceAccount(json: Array(bytes))
        } catch {
            throw HeraldConfiguration.invalid("\(prefix).service_account_file", "is not usable: \(error.message)")
        }
        var configuration = FCMClient.Configuration(
            account: account, trustRoots: try TransportFactory.trustRoots(settings.caFile, key: "\(prefix).ca_file"),
            connections: settings.connections)
        configuration.requestDuration = EngineMetrics.requestDuration(service: .fcm, appID: appID)
        if let url = settings.url {
            (configuration.host, configuration.port) = try TransportFactory.hostAndPort(url, key: "\(prefix).url")
        }
        return FCMTransport(client: try FCMClient(configuration: configuration, now: now))
    }
}

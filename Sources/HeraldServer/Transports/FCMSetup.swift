import Configuration
import Foundation
import HeraldAPI
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

extension ProviderConfiguration.FCM {
    /// An app's FCM settings.
    public enum Settings {
        public static let serviceAccountFile = Setting<String?>(
            "app.<id>.fcm.service_account_file", .path, "FCM HTTP v1: the service account's JSON key file.")
        public static let url = Setting<String?>(
            "app.<id>.fcm.url", .url(schemes: ["https"]), defaultText: "`https://fcm.googleapis.com`",
            "Where FCM is (a mock in tests).")
        public static let caFile = Setting<String?>(
            "app.<id>.fcm.ca_file", .path, defaultText: "the system's roots",
            "PEM trust roots for FCM and the token endpoint, replacing the system's.")
        public static let connections = Setting<Int>(
            "app.<id>.fcm.connections", 1...64, default: 2, "HTTP/2 connections to FCM.")
        /// Every setting above, in the reference's order.
        public static let all: [any DeclaredSetting] = [serviceAccountFile, url, caFile, connections]
    }
}

/// Firebase Cloud Messaging HTTP v1: `app.<id>.fcm.*`.
enum FCMSetup: ProviderSetup {
    static let settingsKey = "fcm"

    /// Reads the app's ``ProviderConfiguration/FCM/Settings``. Nil without a service account file.
    static func settings(appID: String, reader: ConfigReader) throws -> ProviderConfiguration.FCM? {
        typealias Declared = ProviderConfiguration.FCM.Settings
        if let file = try reader.value(Declared.serviceAccountFile, app: appID) {
            var fcm = ProviderConfiguration.FCM(
                serviceAccountFile: file, url: try reader.value(Declared.url, app: appID),
                caFile: try reader.value(Declared.caFile, app: appID))
            fcm.connections = try reader.value(Declared.connections, app: appID)
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
            throw HeraldError.invalidConfiguration("\(prefix).service_account_file", "cannot be read")
        }
        let account: FCMServiceAccount
        do {
            account = try FCMServiceAccount(json: Array(bytes))
        } catch {
            throw HeraldError.invalidConfiguration("\(prefix).service_account_file", "is not usable: \(error.message)")
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

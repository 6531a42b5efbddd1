import Configuration
import Foundation
import HeraldAPI
import HeraldAPNs
import HeraldCore
import HeraldEngine
import NIOSSL

extension ProviderConfiguration {
    /// APNs credentials and where to reach it.
    public struct APNs: Sendable {
        /// Token auth: the `.p8` key file, its key id and the team id.
        public var keyFile: String?
        public var keyID: String?
        public var teamID: String?
        /// Certificate auth: a `.p12` (with password) or a PEM certificate and key.
        public var p12File: String?
        public var p12Password: String?
        public var certificateFile: String?
        public var certificateKeyFile: String?
        /// The topic (bundle id) for installations registered without one.
        public var topic: String?
        /// `https://host:port` replacing both Apple hosts (a proxy or a mock).
        public var url: String?
        /// Whether the app manages iOS 18 broadcast channels (its key has Apple's broadcast capability).
        public var broadcastChannels = false
        /// `https://host:port` replacing both of Apple's channel management hosts (a mock in tests).
        public var channelsURL: String?
        /// PEM trust roots replacing the system's.
        public var caFile: String?
        public var connections: Int

        /// Creates APNs settings.
        public init(
            keyFile: String? = nil, keyID: String? = nil, teamID: String? = nil, p12File: String? = nil,
            p12Password: String? = nil, certificateFile: String? = nil, certificateKeyFile: String? = nil,
            topic: String? = nil, url: String? = nil, caFile: String? = nil, connections: Int = 2
        ) {
            self.keyFile = keyFile
            self.keyID = keyID
            self.teamID = teamID
            self.p12File = p12File
            self.p12Password = p12Password
            self.certificateFile = certificateFile
            self.certificateKeyFile = certificateKeyFile
            self.topic = topic
            self.url = url
            self.caFile = caFile
            self.connections = connections
        }
    }

    /// The app's APNs settings; nil when it configures none.
    public var apns: APNs? {
        get { settings(of: APNsSetup.self) }
        set { set(newValue, of: APNsSetup.self) }
    }
}

extension ProviderConfiguration.APNs {
    /// An app's APNs settings.
    public enum Settings {
        public static let keyFile = Setting<String?>(
            "app.<id>.apns.key_file", .path, "APNs token auth: the `.p8` key; `key_id` and `team_id` go with it.")
        public static let keyID = Setting<String?>("app.<id>.apns.key_id", .text, "APNs token auth: the key's id.")
        public static let teamID = Setting<String?>("app.<id>.apns.team_id", .text, "APNs token auth: the team id.")
        public static let p12File = Setting<String?>(
            "app.<id>.apns.p12_file", .path, "APNs certificate auth: a `.p12` with the certificate and its key.")
        public static let p12Password = Setting<String?>(
            "app.<id>.apns.p12_password", .text, secret: true, defaultText: "none (empty)",
            "APNs certificate auth: the `.p12`'s password.")
        public static let certificateFile = Setting<String?>(
            "app.<id>.apns.certificate_file", .path,
            "APNs certificate auth from PEM files: the certificate; `certificate_key_file` goes with it.")
        public static let certificateKeyFile = Setting<String?>(
            "app.<id>.apns.certificate_key_file", .path, "APNs certificate auth from PEM files: the private key.")
        public static let topic = Setting<String?>(
            "app.<id>.apns.topic", .text, "The topic (bundle id) of installations registered without `bundle_id`.")
        public static let url = Setting<String?>(
            "app.<id>.apns.url", .url(schemes: ["https"]), defaultText: "Apple's hosts",
            "One host for both environments (a proxy, or a mock in tests).")
        public static let broadcastChannels = Setting<Bool>(
            "app.<id>.apns.broadcast_channels", default: false,
            """
            Whether `/v1/live-activities/channels` manages iOS 18 broadcast channels through APNs' channel \
            management service (the app's key needs Apple's broadcast capability). Off, those routes answer \
            `409 channels_not_enabled`.
            """)
        public static let channelsURL = Setting<String?>(
            "app.<id>.apns.channels_url", .url(schemes: ["https"]),
            defaultText: "Apple's channel management hosts (api-manage-broadcast[.sandbox].push.apple.com)",
            "One host for both environments' Live Activity channel management (a proxy, or a mock in tests).")
        public static let caFile = Setting<String?>(
            "app.<id>.apns.ca_file", .path, defaultText: "the system's roots", "PEM trust roots replacing the system's."
        )
        public static let connections = Setting<Int>(
            "app.<id>.apns.connections", 1...64, default: 2, "HTTP/2 connections per APNs host.")
        /// Every setting above, in the reference's order.
        public static let all: [any DeclaredSetting] = [
            keyFile, keyID, teamID, p12File, p12Password, certificateFile, certificateKeyFile, topic, url,
            broadcastChannels, channelsURL, caFile, connections,
        ]
    }
}

/// APNs: `app.<id>.apns.*`.
enum APNsSetup: ProviderSetup {
    static let settingsKey = "apns"

    /// Reads the app's ``ProviderConfiguration/APNs/Settings``: a key file (token auth), a `.p12` or a PEM
    /// certificate (certificate auth). Nil without a key or certificate.
    static func settings(appID: String, reader: ConfigReader) throws -> ProviderConfiguration.APNs? {
        typealias Declared = ProviderConfiguration.APNs.Settings
        let prefix = "app.\(appID).apns"
        let keyFile = try reader.value(Declared.keyFile, app: appID)
        let p12File = try reader.value(Declared.p12File, app: appID)
        let certificateFile = try reader.value(Declared.certificateFile, app: appID)
        if keyFile != nil || p12File != nil || certificateFile != nil {
            var apns = ProviderConfiguration.APNs(
                keyFile: keyFile, keyID: try reader.value(Declared.keyID, app: appID),
                teamID: try reader.value(Declared.teamID, app: appID), p12File: p12File,
                p12Password: try reader.value(Declared.p12Password, app: appID),
                certificateFile: certificateFile,
                certificateKeyFile: try reader.value(Declared.certificateKeyFile, app: appID),
                topic: try reader.value(Declared.topic, app: appID), url: try reader.value(Declared.url, app: appID),
                caFile: try reader.value(Declared.caFile, app: appID))
            apns.connections = try reader.value(Declared.connections, app: appID)
            apns.broadcastChannels = try reader.value(Declared.broadcastChannels, app: appID)
            apns.channelsURL = try reader.value(Declared.channelsURL, app: appID)
            if keyFile != nil, apns.keyID == nil || apns.teamID == nil {
                throw HeraldError.invalidConfiguration(
                    "\(prefix).key_id", "and apns.team_id are required with apns.key_file")
            }
            if certificateFile != nil, apns.certificateKeyFile == nil {
                throw HeraldError.invalidConfiguration(
                    "\(prefix).certificate_key_file", "is required with apns.certificate_file")
            }
            return apns
        }
        return nil
    }

    static func transport(
        _ settings: ProviderConfiguration.APNs?, appID: String, now: @escaping @Sendable () -> Date
    ) throws -> any Transport {
        guard let settings else { return APNsTransport(production: nil, sandbox: nil, topic: nil) }
        let prefix = "app.\(appID).apns"
        let authentication: APNsConfiguration.Authentication
        do {
            if let keyFile = settings.keyFile, let keyID = settings.keyID, let teamID = settings.teamID {
                let pem = try String(contentsOfFile: keyFile, encoding: .utf8)
                authentication = .token(try APNsSigningKey(teamID: teamID, keyID: keyID, pem: pem))
            } else if let p12 = settings.p12File {
                authentication = try .certificate(p12: p12, password: settings.p12Password ?? "")
            } else if let certificate = settings.certificateFile, let key = settings.certificateKeyFile {
                authentication = try .certificate(pemCertificate: certificate, pemKey: key)
            } else {
                throw HeraldError.invalidConfiguration(prefix, "needs key_file, p12_file or certificate_file")
            }
        } catch let error as HeraldError {
            throw error
        } catch let error as APNsError {
            throw HeraldError.invalidConfiguration("\(prefix).key_file", "holds no usable key: \(error.message)")
        } catch {
            throw HeraldError.invalidConfiguration(prefix, "has credentials that cannot be read: \(error)")
        }
        let roots = try TransportFactory.trustRoots(settings.caFile, key: "\(prefix).ca_file")
        func client(_ environment: APNsConfiguration.Environment) throws -> APNsClient {
            var configuration = APNsConfiguration(
                environment: environment, authentication: authentication, trustRoots: roots,
                connections: settings.connections)
            configuration.requestDuration = EngineMetrics.requestDuration(service: .apns, appID: appID)
            return try APNsClient(configuration: configuration, now: now)
        }
        func channelClient(_ environment: APNsConfiguration.Environment) throws -> APNsChannelClient {
            try APNsChannelClient(
                configuration: APNsConfiguration(
                    environment: environment, authentication: authentication, trustRoots: roots, connections: 1),
                now: now)
        }
        var channels: (APNsChannelClient?, APNsChannelClient?)
        if !settings.broadcastChannels {
            channels = (nil, nil)
        } else if let url = settings.channelsURL {
            let (host, port) = try TransportFactory.hostAndPort(url, key: "\(prefix).channels_url")
            let custom = try channelClient(.custom(host: host, port: port))
            channels = (custom, custom)
        } else {
            channels = (try channelClient(.production), try channelClient(.sandbox))
        }
        if let url = settings.url {
            let (host, port) = try TransportFactory.hostAndPort(url, key: "\(prefix).url")
            let custom = try client(.custom(host: host, port: port))
            return APNsTransport(production: custom, sandbox: custom, topic: settings.topic, channels: channels)
        }
        return APNsTransport(
            production: try client(.production), sandbox: try client(.sandbox), topic: settings.topic,
            channels: channels)
    }
}

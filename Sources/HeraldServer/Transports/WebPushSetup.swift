import Configuration
import Foundation
import HeraldAPI
import HeraldCore
import HeraldEngine
import HeraldWebPush

extension ProviderConfiguration {
    /// Web Push: the app's VAPID key pair and contact, and how to reach push services.
    public struct WebPush: Sendable {
        /// The VAPID key; browsers subscribe with its public half (`applicationServerKey`).
        public var key: VAPIDKey
        /// The VAPID `sub`: a `mailto:` or `https:` contact.
        public var subject: String
        /// PEM trust roots replacing the system's (a mock push service in tests).
        public var caFile: String?
        /// HTTP/2 connections per push service origin.
        public var connections: Int

        /// Creates Web Push settings.
        public init(key: VAPIDKey, subject: String, caFile: String? = nil, connections: Int = 1) {
            self.key = key
            self.subject = subject
            self.caFile = caFile
            self.connections = connections
        }
    }

    /// The app's Web Push settings; nil when it has no VAPID key.
    public var webPush: WebPush? {
        get { settings(of: WebPushSetup.self) }
        set { set(newValue, of: WebPushSetup.self) }
    }
}

extension ProviderConfiguration.WebPush {
    /// An app's Web Push settings.
    public enum Settings {
        public static let privateKeyFile = Setting<String?>(
            "app.<id>.webpush.vapid_private_key_file", .path,
            "Web Push: the VAPID private key (a PEM P-256 key, as `herald vapid` writes it).")
        public static let privateKey = Setting<String?>(
            "app.<id>.webpush.vapid_private_key", .other("base64url"), secret: true,
            "Web Push: the VAPID private key as its base64url scalar, when `vapid_private_key_file` is not set.")
        public static let subject = Setting<String?>(
            "app.<id>.webpush.subject", .other("`mailto:` or `https:` URI"), defaultText: "required with a key",
            "The VAPID `sub`: a contact for push service operators (RFC 8292 §2.1).")
        public static let caFile = Setting<String?>(
            "app.<id>.webpush.ca_file", .path, defaultText: "the system's roots",
            "PEM trust roots for push services, replacing the system's (a mock in tests).")
        public static let connections = Setting<Int>(
            "app.<id>.webpush.connections", 1...16, default: 1, "HTTP/2 connections per push service origin.")
        /// Every setting above, in the reference's order.
        public static let all: [any DeclaredSetting] = [privateKeyFile, privateKey, subject, caFile, connections]
    }
}

/// Web Push with VAPID: `app.<id>.webpush.*`.
enum WebPushSetup: ProviderSetup {
    static let settingsKey = "webpush"

    /// Reads the app's ``ProviderConfiguration/WebPush/Settings``: a VAPID key (from its file, else
    /// inline) and the subject required with it. Nil without a key.
    static func settings(appID: String, reader: ConfigReader) throws -> ProviderConfiguration.WebPush? {
        typealias Declared = ProviderConfiguration.WebPush.Settings
        let key: VAPIDKey
        if let file = try reader.value(Declared.privateKeyFile, app: appID) {
            guard let pem = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw HeraldError.invalidConfiguration(Declared.privateKeyFile.key(app: appID), "cannot be read")
            }
            do {
                key = try VAPIDKey(pem: pem)
            } catch {
                throw HeraldError.invalidConfiguration(Declared.privateKeyFile.key(app: appID), error.message)
            }
        } else if let raw = try reader.value(Declared.privateKey, app: appID) {
            do {
                key = try VAPIDKey(base64URL: raw)
            } catch {
                throw HeraldError.invalidConfiguration(Declared.privateKey.key(app: appID), error.message)
            }
        } else {
            return nil
        }
        guard let subject = try reader.value(Declared.subject, app: appID), VAPIDTokenCache.isValidSubject(subject)
        else {
            throw HeraldError.invalidConfiguration(
                Declared.subject.key(app: appID),
                "must be a mailto: or https: contact (RFC 8292 §2.1) when a VAPID key is set")
        }
        let connections = try reader.value(Declared.connections, app: appID)
        return ProviderConfiguration.WebPush(
            key: key, subject: subject, caFile: try reader.value(Declared.caFile, app: appID), connections: connections)
    }

    static func transport(
        _ settings: ProviderConfiguration.WebPush?, appID: String, now: @escaping @Sendable () -> Date
    ) throws -> any Transport {
        guard let settings else { return WebPushTransport(client: nil) }
        let prefix = "app.\(appID).webpush"
        do {
            var configuration = try WebPushClient.Configuration(
                vapidKey: settings.key, subject: settings.subject,
                trustRoots: try TransportFactory.trustRoots(settings.caFile, key: "\(prefix).ca_file"),
                connectionsPerOrigin: settings.connections)
            configuration.requestDuration = EngineMetrics.requestDuration(service: .webpush, appID: appID)
            return WebPushTransport(client: try WebPushClient(configuration: configuration, now: now))
        } catch let error as HeraldError {
            throw error
        } catch {
            throw HeraldError.invalidConfiguration(prefix, "cannot make a Web Push client: \(error)")
        }
    }
}

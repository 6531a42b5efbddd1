import Configuration
import Foundation
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

/// Web Push with VAPID: `app.<id>.webpush.*`.
enum WebPushSetup: ProviderSetup {
    static let settingsKey = "webpush"

    /// Reads `vapid_private_key_file` (a PEM P-256 key, as `herald vapid` writes it) or
    /// `vapid_private_key` (its base64url scalar, secret), `subject` (`mailto:` or `https:`; required
    /// with a key), `ca_file`, `connections` (1). Nil without a key.
    static func settings(appID: String, reader: ConfigReader) throws -> ProviderConfiguration.WebPush? {
        let prefix = "app.\(appID).webpush"
        let key: VAPIDKey
        if let file = reader.string(forKey: "vapid_private_key_file") {
            guard let pem = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw HeraldConfiguration.invalid("\(prefix).vapid_private_key_file", "cannot be read")
            }
            do {
                key = try VAPIDKey(pem: pem)
            } catch {
                throw HeraldConfiguration.invalid("\(prefix).vapid_private_key_file", error.message)
            }
        } else if let raw = reader.string(forKey: "vapid_private_key", isSecret: true) {
            do {
                key = try VAPIDKey(base64URL: raw)
            } catch {
                throw HeraldConfiguration.invalid("\(prefix).vapid_private_key", error.message)
            }
        } else {
            return nil
        }
        guard let subject = reader.string(forKey: "subject"), VAPIDTokenCache.isValidSubject(subject) else {
            throw HeraldConfiguration.invalid(
                "\(prefix).subject", "must be a mailto: or https: contact (RFC 8292 §2.1) when a VAPID key is set")
        }
        let connections = try HeraldConfiguration.integer(
            reader, "connections", default: 1, key: "\(prefix).connections")
        guard (1...16).contains(connections) else {
            throw HeraldConfiguration.invalid("\(prefix).connections", "must be 1 to 16")
        }
        return ProviderConfiguration.WebPush(
            key: key, subject: subject, caFile: reader.string(forKey: "ca_file"), connections: connections)
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
            throw HeraldConfiguration.invalid(prefix, "cannot make a Web Push client: \(error)")
        }
    }
}

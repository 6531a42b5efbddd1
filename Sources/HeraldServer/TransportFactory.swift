import Foundation
import HeraldAPNs
import HeraldCore
import HeraldEngine
import HeraldFCM
import NIOSSL

/// Builds each app's provider clients from configuration.
public enum TransportFactory {
    /// The transports of every app: one per service Herald delivers through, each with its clients
    /// when the app configures that provider (without, it validates payloads and fails deliveries
    /// with a configuration failure).
    /// - Throws: `HeraldError` `invalid_configuration` for an unreadable key, certificate or account file.
    public static func make(
        _ providers: [String: ProviderConfiguration], now: @escaping @Sendable () -> Date = Date.init
    ) throws -> [String: AppTransports] {
        var result: [String: AppTransports] = [:]
        for (appID, configuration) in providers {
            result[appID] = AppTransports([
                try makeAPNs(configuration.apns, appID: appID, now: now),
                try makeFCM(configuration.fcm, appID: appID, now: now),
            ])
        }
        return result
    }

    private static func makeAPNs(
        _ settings: ProviderConfiguration.APNs?, appID: String, now: @escaping @Sendable () -> Date
    ) throws -> APNsTransport {
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
                throw HeraldConfiguration.invalid(prefix, "needs key_file, p12_file or certificate_file")
            }
        } catch let error as HeraldError {
            throw error
        } catch let error as APNsError {
            throw HeraldConfiguration.invalid("\(prefix).key_file", "holds no usable key: \(error.message)")
        } catch {
            throw HeraldConfiguration.invalid(prefix, "has credentials that cannot be read: \(error)")
        }
        let roots = try trustRoots(settings.caFile, key: "\(prefix).ca_file")
        func client(_ environment: APNsConfiguration.Environment) throws -> APNsClient {
            try APNsClient(
                configuration: APNsConfiguration(
                    environment: environment, authentication: authentication, trustRoots: roots,
                    connections: settings.connections),
                now: now)
        }
        if let url = settings.url {
            let (host, port) = try hostAndPort(url, key: "\(prefix).url")
            let custom = try client(.custom(host: host, port: port))
            return APNsTransport(production: custom, sandbox: custom, topic: settings.topic)
        }
        return APNsTransport(production: try client(.production), sandbox: try client(.sandbox), topic: settings.topic)
    }

    private static func makeFCM(
        _ settings: ProviderConfiguration.FCM?, appID: String, now: @escaping @Sendable () -> Date
    ) throws -> FCMTransport {
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
            account: account, trustRoots: try trustRoots(settings.caFile, key: "\(prefix).ca_file"),
            connections: settings.connections)
        if let url = settings.url {
            (configuration.host, configuration.port) = try hostAndPort(url, key: "\(prefix).url")
        }
        return FCMTransport(client: try FCMClient(configuration: configuration, now: now))
    }

    private static func trustRoots(_ file: String?, key: String) throws -> [NIOSSLCertificate]? {
        guard let file else { return nil }
        do {
            return try NIOSSLCertificate.fromPEMFile(file)
        } catch {
            throw HeraldConfiguration.invalid(key, "is not a readable PEM file: \(error)")
        }
    }

    private static func hostAndPort(_ url: String, key: String) throws -> (String, Int) {
        guard let components = URLComponents(string: url), components.scheme == "https", let host = components.host
        else { throw HeraldConfiguration.invalid(key, "must be an https URL") }
        return (host, components.port ?? 443)
    }
}

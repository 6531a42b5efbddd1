import Foundation
import HeraldAPNs
import HeraldCore
import HeraldEngine
import HeraldFCM
import NIOSSL

/// Builds each app's provider clients from configuration.
public enum TransportFactory {
    /// The clients of every configured app; apps without providers are left out (their deliveries
    /// fail with a configuration failure).
    /// - Throws: `HeraldError` `invalid_configuration` for an unreadable key, certificate or account file.
    public static func make(
        _ providers: [String: ProviderConfiguration], now: @escaping @Sendable () -> Date = Date.init
    ) throws -> [String: AppTransports] {
        var result: [String: AppTransports] = [:]
        for (appID, configuration) in providers {
            let apns = try configuration.apns.map { try makeAPNs($0, appID: appID, now: now) }
            let fcm = try configuration.fcm.map { try makeFCM($0, appID: appID, now: now) }
            if apns != nil || fcm != nil { result[appID] = AppTransports(apns: apns, fcm: fcm) }
        }
        return result
    }

    private static func makeAPNs(
        _ settings: ProviderConfiguration.APNs, appID: String, now: @escaping @Sendable () -> Date
    ) throws -> AppTransports.APNs {
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
            return AppTransports.APNs(production: custom, sandbox: custom, topic: settings.topic)
        }
        return AppTransports.APNs(
            production: try client(.production), sandbox: try client(.sandbox), topic: settings.topic)
    }

    private static func makeFCM(
        _ settings: ProviderConfiguration.FCM, appID: String, now: @escaping @Sendable () -> Date
    ) throws -> FCMClient {
        let prefix = "app.\(appID).fcm"
        guard let bytes = FileManager.default.contents(atPath: settings.serviceAccountFile) else {
            throw HeraldConfiguration.invalid("\(prefix).service_account_file", "cannot be read")
        }
        let account = try FCMServiceAccount(json: Array(bytes))
        var configuration = FCMClient.Configuration(
            account: account, trustRoots: try trustRoots(settings.caFile, key: "\(prefix).ca_file"),
            connections: settings.connections)
        if let url = settings.url {
            (configuration.host, configuration.port) = try hostAndPort(url, key: "\(prefix).url")
        }
        return try FCMClient(configuration: configuration, now: now)
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

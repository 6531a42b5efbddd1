import Foundation
import HeraldAPI
import HeraldCore
import HeraldEngine
import NIOSSL

/// Builds each app's transports from configuration.
public enum TransportFactory {
    /// Every route Herald delivers through: a new one is its ``ProviderSetup`` and a line here.
    static let providers: [any ProviderSetup.Type] = [APNsSetup.self, FCMSetup.self, WebPushSetup.self, SNSSetup.self]

    /// The transports of every app: one per provider, each with its clients when the app configures
    /// that provider (without, it fails deliveries with a configuration failure and refuses no payload).
    /// - Throws: `HeraldError` `invalid_configuration` for an unreadable key, certificate or account file.
    public static func make(
        _ configurations: [String: ProviderConfiguration], now: @escaping @Sendable () -> Date = Date.init
    ) throws -> [String: AppTransports] {
        var result: [String: AppTransports] = [:]
        for (appID, configuration) in configurations {
            result[appID] = AppTransports(
                try providers.map { try $0.makeTransport(configuration, appID: appID, now: now) })
        }
        return result
    }

    static func trustRoots(_ file: String?, key: String) throws -> [NIOSSLCertificate]? {
        guard let file else { return nil }
        do {
            return try NIOSSLCertificate.fromPEMFile(file)
        } catch {
            throw HeraldError.invalidConfiguration(key, "is not a readable PEM file: \(error)")
        }
    }

    static func hostAndPort(_ url: String, key: String) throws -> (String, Int) {
        guard let components = URLComponents(string: url), components.scheme == "https", let host = components.host
        else { throw HeraldError.invalidConfiguration(key, "must be an https URL") }
        return (host, components.port ?? 443)
    }
}

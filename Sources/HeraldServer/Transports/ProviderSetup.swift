import Configuration
import Foundation
import HeraldAPI
import HeraldCore
import HeraldEngine

/// How one service's transport is configured and built for an app. A new route is its client
/// module, its ``Transport`` type, one conforming type here (its settings under
/// `app.<id>.<settingsKey>` and how they become a transport) and one line in
/// ``TransportFactory/providers``.
protocol ProviderSetup: Sendable {
    /// One app's settings of the provider.
    associatedtype Settings: Sendable

    /// The key under `app.<id>` of the provider's settings (`apns`, `fcm`, …).
    static var settingsKey: String { get }

    /// Reads app `appID`'s settings (`app.<id>.<settingsKey>.*`, declared as ``Setting``s near the
    /// settings type) from `reader`; nil when the app does not configure the provider.
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    static func settings(appID: String, reader: ConfigReader) throws -> Settings?

    /// The app's transport: with settings, its clients; without, one that still validates payloads
    /// and fails deliveries with a configuration failure.
    /// - Throws: `HeraldError` `invalid_configuration` for an unreadable key, certificate or file.
    static func transport(
        _ settings: Settings?, appID: String, now: @escaping @Sendable () -> Date
    ) throws -> any Transport
}

extension ProviderSetup {
    static func readSettings(appID: String, reader: ConfigReader) throws -> (any Sendable)? {
        try settings(appID: appID, reader: reader)
    }

    static func makeTransport(
        _ configuration: ProviderConfiguration, appID: String, now: @escaping @Sendable () -> Date
    ) throws -> any Transport {
        try transport(configuration.settings(of: Self.self), appID: appID, now: now)
    }
}

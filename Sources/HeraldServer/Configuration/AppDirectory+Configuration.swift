import Foundation
import HeraldAPI
import HeraldCore

extension AppDirectory {
    /// The directory of `configuration`'s apps (``AppDirectory/init(apps:defaultAppUserTokens:store:now:announce:)``).
    /// - Throws: `HeraldError` for unreadable key files; store errors.
    public init(
        configuration: HeraldConfiguration, store: any InstallationRegistry,
        now: @escaping @Sendable () -> Date = Date.init,
        announce: (AppKeys) -> Void = { _ in }
    ) async throws {
        try await self.init(
            apps: configuration.apps, defaultAppUserTokens: configuration.defaultAppUserTokens, store: store, now: now,
            announce: announce)
    }

    /// Resolves the apps of a reloaded `configuration` (``AppDirectory/reload(apps:defaultAppUserTokens:store:now:)``).
    /// - Throws: `HeraldError` for unreadable key files; store errors. The directory is unchanged then.
    public func reload(
        configuration: HeraldConfiguration, store: any InstallationRegistry,
        now: @escaping @Sendable () -> Date = Date.init
    ) async throws {
        try await reload(
            apps: configuration.apps, defaultAppUserTokens: configuration.defaultAppUserTokens, store: store, now: now)
    }
}

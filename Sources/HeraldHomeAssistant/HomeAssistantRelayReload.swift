import Foundation
import HeraldAPI
import HeraldCore
import Logging

/// What a reload of the configuration changes for the relay: its settings, the APNs environment of
/// the installations it registered, and when invalidated tokens are retried.
struct HomeAssistantRelayReload: Sendable {
    let store: any HeraldStore & RelayUsageStore
    let settings: HomeAssistantRelaySettings
    let now: @Sendable () -> Date
    let logger = Logger(label: "herald.home_assistant")

    /// Takes the reloaded settings; for each relay app, moves the APNs installations the relay
    /// registered to a changed `apns_environment`, and makes every invalidated token's retry due at
    /// once — a reload may have replaced the app's credentials or environment, the usual causes of a
    /// token refused by mistake.
    func apply(_ reload: DialectReload) async {
        let previous = reload.previous.homeAssistant
        let current = reload.current.homeAssistant
        settings.replace(with: current)
        for (appID, relay) in current.sorted(by: { $0.key < $1.key }) where relay.relay {
            do {
                if let before = previous[appID], before.relay, before.apnsEnvironment != relay.apnsEnvironment {
                    let moved = try await store.moveRelayAdopted(
                        appID: appID, from: before.apnsEnvironment, to: relay.apnsEnvironment, now: now())
                    logger.notice(
                        "home assistant relay installations moved to the new APNs environment",
                        metadata: [
                            "herald.app": "\(appID)", "herald.environment": "\(relay.apnsEnvironment.rawValue)",
                            "herald.count": "\(moved)",
                        ])
                }
                try await store.resetRelayRetries(appID: appID)
            } catch {
                logger.error(
                    "home assistant relay not adapted to the reload",
                    metadata: ["herald.app": "\(appID)", "herald.error": "\(type(of: error))"])
            }
        }
    }
}

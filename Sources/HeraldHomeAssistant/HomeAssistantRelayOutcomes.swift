import Foundation
import HeraldCore
import HeraldEngine
import Logging

/// What the provider did with the relay's pushes, told by the engine after each committed page
/// (``Dispatcher/observeCommits(source:_:)``): counted on the token's counters of the day the relay
/// accepted the push (`successful` and `errors` of `rateLimits`), and, for the retry of an invalidated
/// token, a delivery revives its installation.
struct HomeAssistantRelayOutcomes: Sendable {
    let store: any HeraldStore & RelayUsageStore
    let dispatcher: Dispatcher
    let now: @Sendable () -> Date
    let logger = Logger(label: "herald.home_assistant")

    /// Records a committed page of a relay notification (to one device).
    func record(_ notification: PushNotification, _ counts: NotificationCounts) async {
        let delivered = counts.sent
        let failed = counts.failed + counts.invalid + counts.skippedExpired
        guard delivered > 0 || failed > 0 else { return }
        do {
            let appID = notification.appID
            let service: PushService
            let token: String
            var retried: Installation?
            switch notification.target.audience {
            case .installationIDs(let ids):
                guard let installation = try await store.installations(appID: appID, ids: ids).first,
                    case .device(let value) = installation.token
                else { return }
                (service, token) = (installation.service, value)
            case .tokens(let tokens):
                guard let raw = tokens.first else { return }
                (service, token) = (raw.service, raw.token)
                retried = try await store.installation(appID: appID, service: service, token: token)
            default: return
            }
            // Companion commands are not counted, as they are not limited.
            if notification.source == HomeAssistantRelayRoutes.source {
                try await store.countRelayOutcome(
                    appID: appID, service: service, token: token, day: UTCDay(notification.createdAt).key,
                    delivered: delivered, failed: failed)
            }
            if delivered > 0, let installation = retried, !installation.valid {
                var revived = installation
                revived.valid = true
                revived.failureCount = 0
                revived.invalidatedAt = nil
                revived.lastDeliveredAt = now()
                _ = try await dispatcher.registrations.update(revived, from: installation, now: now())
                logger.notice(
                    "home assistant relay revived an invalidated installation: its retry was delivered",
                    metadata: ["herald.installation": "\(installation.id)", "herald.app": "\(appID)"])
            }
        } catch {
            logger.warning(
                "home assistant relay outcome not counted",
                metadata: ["herald.notification": "\(notification.id)", "herald.error": "\(type(of: error))"])
        }
    }
}

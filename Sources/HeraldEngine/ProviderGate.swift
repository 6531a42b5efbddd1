import Foundation
import HeraldCore
import Synchronization

/// Provider-wide pauses: when a provider answers every sender with `Retry-After` (FCM quota, APNs
/// 503), deliveries through that provider for that app wait, and the other providers go on.
final class ProviderGate: Sendable {
    private struct Key: Hashable {
        var appID: String
        var service: PushService
    }

    private let pauses = Mutex<[Key: Date]>([:])

    /// Until when the provider is paused for the app, if it is at `now`.
    func pausedUntil(appID: String, service: PushService, now: Date) -> Date? {
        pauses.withLock { pauses in
            guard let until = pauses[Key(appID: appID, service: service)] else { return nil }
            return until > now ? until : nil
        }
    }

    /// Pauses the provider for the app until `until` (a later pause wins).
    func pause(appID: String, service: PushService, until: Date) {
        pauses.withLock { pauses in
            let key = Key(appID: appID, service: service)
            pauses[key] = max(pauses[key] ?? until, until)
        }
    }
}

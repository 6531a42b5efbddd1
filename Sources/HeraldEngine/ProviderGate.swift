import Foundation
import HeraldCore
import Synchronization

/// Provider-wide pauses: when a provider answers every sender with `Retry-After` (FCM quota, APNs
/// 503), deliveries through that provider for that app wait, and the other providers go on. The
/// pauses live in the store (``ClusterState``), so every node sharing it holds back; this is the
/// node's copy, read again at most every `refreshInterval`.
final class ProviderGate: Sendable {
    private struct Key: Hashable {
        var appID: String
        var service: PushService
    }

    private struct State {
        var pauses: [Key: Date] = [:]
        var refreshedAt: Date?
    }

    private let state = Mutex(State())
    private let refreshInterval: TimeInterval

    /// Creates a gate that reads the store's pauses at most every `refreshInterval` seconds.
    init(refreshInterval: TimeInterval = 1) {
        self.refreshInterval = refreshInterval
    }

    /// Reads the pauses other nodes set, unless the copy is recent.
    func refresh(from store: any ClusterState, now: Date) async throws {
        let due = state.withLock { state in
            state.refreshedAt.map { now.timeIntervalSince($0) >= refreshInterval || $0 > now } ?? true
        }
        guard due else { return }
        let stored = try await store.providerPauses(now: now)
        state.withLock { state in
            state.refreshedAt = now
            state.pauses = state.pauses.filter { $0.value > now }
            for pause in stored {
                let key = Key(appID: pause.appID, service: pause.service)
                state.pauses[key] = max(state.pauses[key] ?? pause.until, pause.until)
            }
        }
    }

    /// Until when the provider is paused for the app, if it is at `now`.
    func pausedUntil(appID: String, service: PushService, now: Date) -> Date? {
        state.withLock { state in
            guard let until = state.pauses[Key(appID: appID, service: service)] else { return nil }
            return until > now ? until : nil
        }
    }

    /// Pauses the provider for the app until `until` (a later pause wins) on this node; the caller
    /// stores it for the others.
    /// - Returns: Whether the pause is new or longer than the one known.
    @discardableResult
    func pause(appID: String, service: PushService, until: Date) -> Bool {
        state.withLock { state in
            let key = Key(appID: appID, service: service)
            if let known = state.pauses[key], known >= until { return false }
            state.pauses[key] = until
            return true
        }
    }
}

import Foundation
import HeraldCore
import Synchronization

/// Provider-wide pauses: when a provider answers every sender with `Retry-After` (FCM quota, APNs
/// 503), or answers nothing at all (down, stalled, TLS failing), deliveries through that provider
/// for that app wait, and the other providers go on. The pauses live in the store
/// (``ClusterState``), so every node sharing it holds back; this is the node's copy, read again at
/// most every `refreshInterval`. An unreachable provider's pause grows with each batch in a row it
/// left unanswered (the streak is this node's own) and the streak ends with its first answer.
/// A pause holds back all of a provider (scope empty) or, for Web Push, the browsers of one push
/// service (scope its origin, ``PushToken/pauseScope``): one app's browsers use several.
final class ProviderGate: Sendable {
    private struct Key: Hashable {
        var appID: String
        var service: PushService
        var scope: String
    }

    private struct State {
        var pauses: [Key: Date] = [:]
        var refreshedAt: Date?
        /// Batches in a row each provider left unanswered.
        var unanswered: [Key: Int] = [:]
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
                let key = Key(appID: pause.appID, service: pause.service, scope: pause.scope)
                state.pauses[key] = max(state.pauses[key] ?? pause.until, pause.until)
            }
        }
    }

    /// Until when the provider is paused for the app, if it is at `now`: all of it, or the part
    /// `scope` names.
    func pausedUntil(appID: String, service: PushService, scope: String = "", now: Date) -> Date? {
        state.withLock { state in
            guard !state.pauses.isEmpty else { return nil }
            var until = state.pauses[Key(appID: appID, service: service, scope: "")]
            if !scope.isEmpty, let part = state.pauses[Key(appID: appID, service: service, scope: scope)] {
                until = max(until ?? part, part)
            }
            guard let until else { return nil }
            return until > now ? until : nil
        }
    }

    /// Pauses the provider (or the part `scope` names) for the app until `until` (a later pause
    /// wins) on this node; the caller stores it for the others.
    /// - Returns: Whether the pause is new or longer than the one known.
    @discardableResult
    func pause(appID: String, service: PushService, scope: String = "", until: Date) -> Bool {
        state.withLock { state in
            let key = Key(appID: appID, service: service, scope: scope)
            if let known = state.pauses[key], known >= until { return false }
            state.pauses[key] = until
            return true
        }
    }

    /// A provider answered none of a batch's pushes: it is paused for the app for `base` doubled
    /// once for each batch in a row before this one that it left unanswered, at most `cap`.
    /// - Returns: Until when it is paused (the caller stores it for the other nodes).
    func unreachable(
        appID: String, service: PushService, scope: String = "", now: Date, base: Duration, cap: Duration
    ) -> Date {
        state.withLock { state in
            let key = Key(appID: appID, service: service, scope: scope)
            let streak = (state.unanswered[key] ?? 0) + 1
            state.unanswered[key] = streak
            let seconds = min(Self.seconds(cap), Self.seconds(base) * pow(2, Double(min(streak, 60) - 1)))
            let until = now.addingTimeInterval(seconds)
            state.pauses[key] = max(state.pauses[key] ?? until, until)
            return until
        }
    }

    /// A provider (or the part `scope` names) answered, whatever it said: its unanswered streak ends.
    func answered(appID: String, service: PushService, scope: String = "") {
        state.withLock { state in
            _ = state.unanswered.removeValue(forKey: Key(appID: appID, service: service, scope: scope))
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}

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
///
/// When an unreachable provider's pause ends, one batch at a time tries it (a probe: half-open,
/// as a circuit breaker is) and only a batch that may wait for it: a retry of waiting devices, never a
/// batch of a fan-out's pipeline, whose wait would hold back the batches after it and so the other
/// providers' devices (docs/reliability.md §1). The others wait `base` more.
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
        /// The unreachable providers a batch is trying now (its probe), until it records their answers.
        var probing: Set<Key> = []
    }

    /// Whether a batch may try a provider whose unreachable pause has ended.
    enum Probe: Sendable {
        /// It may: it is a retry of waiting devices, and no other batch is trying the provider.
        case allowed
        /// It may not: a batch of a fan-out's pipeline.
        case never
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

    /// What a batch may do with a provider now.
    enum Admission: Equatable, Sendable {
        /// Send: the provider is not paused.
        case open
        /// Send, as the probe of a provider left unanswered whose pause has ended (of the part
        /// `scope` names, or all of it): the batch's answers end it, or ``endProbe(appID:service:scope:)``.
        case probe(scope: String)
        /// Wait until then.
        case paused(until: Date)

        /// Until when the batch's devices of the provider wait, if they do.
        var pausedUntil: Date? {
            if case .paused(let until) = self { return until }
            return nil
        }
    }

    /// What a batch may do with the provider for the app at `now`: all of it, or the part `scope`
    /// names. A provider left unanswered whose pause has ended is tried by one batch at a time that
    /// may wait for it (`probe` `.allowed`): the call claims the probe; for the others it is paused
    /// `base` more.
    func admission(
        appID: String, service: PushService, scope: String = "", now: Date, probe: Probe, base: Duration
    ) -> Admission {
        state.withLock { state in
            let whole = Key(appID: appID, service: service, scope: "")
            let part = Key(appID: appID, service: service, scope: scope)
            if !state.pauses.isEmpty {
                var until = state.pauses[whole]
                if !scope.isEmpty, let paused = state.pauses[part] { until = max(until ?? paused, paused) }
                if let until, until > now { return .paused(until: until) }
            }
            guard !state.unanswered.isEmpty else { return .open }
            let key = state.unanswered[part] != nil ? part : whole
            guard state.unanswered[key] != nil else { return .open }
            if case .allowed = probe, state.probing.insert(key).inserted { return .probe(scope: key.scope) }
            return .paused(until: now.addingTimeInterval(Self.seconds(base)))
        }
    }

    /// Ends a probe (the scope ``Admission/probe(scope:)`` named) that recorded no answer (its batch
    /// failed first, or asked the provider nothing): the next batch may try.
    func endProbe(appID: String, service: PushService, scope: String = "") {
        state.withLock { state in
            _ = state.probing.remove(Key(appID: appID, service: service, scope: scope))
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
            state.probing.remove(key)
            let seconds = min(Self.seconds(cap), Self.seconds(base) * pow(2, Double(min(streak, 60) - 1)))
            let until = now.addingTimeInterval(seconds)
            state.pauses[key] = max(state.pauses[key] ?? until, until)
            return until
        }
    }

    /// A provider (or the part `scope` names) answered, whatever it said: its unanswered streak ends.
    func answered(appID: String, service: PushService, scope: String = "") {
        state.withLock { state in
            let key = Key(appID: appID, service: service, scope: scope)
            state.unanswered.removeValue(forKey: key)
            state.probing.remove(key)
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}

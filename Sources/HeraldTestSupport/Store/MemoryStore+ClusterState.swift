import Foundation
import HeraldCore

extension MemoryStore: ClusterState {
    public func acquireToken(
        bucket key: String, capacity: Int, per interval: TimeInterval, now: Date
    ) async throws -> TokenBucketLimiter.Decision {
        change { state in
            let (decision, full) = TokenBucketLimiter.acquire(
                fullAt: state.buckets[key], capacity: capacity, per: interval, now: now)
            if let full { state.buckets[key] = full }
            return decision
        }
    }

    public func pauseProvider(appID: String, service: PushService, scope: String, until: Date) async throws {
        change { state in
            let key = PauseKey(appID: appID, service: service, scope: scope)
            state.pauses[key] = max(state.pauses[key] ?? until, until)
        }
    }

    public func providerPauses(now: Date) async throws -> [ProviderPause] {
        read { state in
            state.pauses.filter { $0.value > now }.map { key, until in
                ProviderPause(appID: key.appID, service: key.service, scope: key.scope, until: until)
            }
        }
    }
}

import Foundation
import HeraldAPI
import HeraldCore
import Synchronization

/// Counts failures per client address with token buckets (``TokenBucketLimiter``'s generic cell
/// rate step): an address that spent its allowance waits before it may try again, whatever it
/// presents then. Successes cost nothing. The console's sign-ins and every surface's refused
/// credentials (``AuthFailureGuard``) are counted this way, in memory: each node counts its own.
final class FailureLimiter: Sendable {
    private let capacity: Int
    private let interval: TimeInterval
    private let buckets = Mutex<[String: Date]>([:])

    init(capacity: Int, per interval: TimeInterval) {
        self.capacity = capacity
        self.interval = interval
    }

    /// Seconds the address must wait before it may try again; nil when it may try now.
    func retryAfter(_ address: String, now: Date) -> Int? {
        buckets.withLock { buckets in
            // A probe: would one more failure fit? Nothing is spent.
            let (decision, _) = TokenBucketLimiter.acquire(
                fullAt: buckets[address], capacity: capacity, per: interval, now: now)
            if case .limited(let retryAfter) = decision { return retryAfter }
            return nil
        }
    }

    /// Records a failure from the address.
    func fail(_ address: String, now: Date) {
        buckets.withLock { buckets in
            let (_, fullAt) = TokenBucketLimiter.acquire(
                fullAt: buckets[address], capacity: capacity, per: interval, now: now)
            if let fullAt { buckets[address] = fullAt }
            // Forget addresses whose allowance is whole again, so memory follows active addresses only.
            if buckets.count > 4096 { buckets = buckets.filter { $0.value > now } }
        }
    }
}

import Foundation
import HeraldCore
import Synchronization

/// The registration limit of each (app, user), kept in this process's memory: with several nodes
/// each node counts its own requests.
final class ArgusAIRegistrationLimiter: Sendable {
    private let limiters = Mutex<[String: TokenBucketLimiter]>([:])

    /// Spends one registration of the user's allowance of `perMinute`.
    func acquire(appID: String, userID: String, perMinute: Int, now: Date) -> TokenBucketLimiter.Decision {
        limiters.withLock { limiters in
            var limiter = limiters[appID] ?? TokenBucketLimiter(capacity: perMinute, per: 60)
            if limiter.capacity != perMinute { limiter = TokenBucketLimiter(capacity: perMinute, per: 60) }
            let decision = limiter.acquire(userID, now: now)
            limiters[appID] = limiter
            return decision
        }
    }
}

import Foundation
import HeraldCore
import Testing

@Suite("Token bucket rate limits")
struct TokenBucketLimiterTests {
    let start = Date(timeIntervalSince1970: 1_766_658_600.123)

    @Test("A burst of capacity, then one request per interval/capacity, with Retry-After in whole seconds")
    func burstThenRefill() {
        var limiter = TokenBucketLimiter(capacity: 3, per: 60)
        for _ in 0..<3 { #expect(limiter.acquire("ann", now: start) == .allowed) }
        #expect(limiter.acquire("ann", now: start) == .limited(retryAfter: 20))
        #expect(limiter.acquire("ann", now: start.addingTimeInterval(19.5)) == .limited(retryAfter: 1))
        #expect(limiter.acquire("ann", now: start.addingTimeInterval(20)) == .allowed)
        #expect(limiter.acquire("ann", now: start.addingTimeInterval(20)) == .limited(retryAfter: 20))
        // A quiet key refills completely, and no further.
        let later = start.addingTimeInterval(3600)
        for _ in 0..<3 { #expect(limiter.acquire("ann", now: later) == .allowed) }
        #expect(limiter.acquire("ann", now: later) == .limited(retryAfter: 20))
    }

    @Test("Keys have their own buckets; refused requests spend nothing")
    func keysAreIndependent() {
        var limiter = TokenBucketLimiter(capacity: 1, per: 10)
        #expect(limiter.acquire("ann", now: start) == .allowed)
        #expect(limiter.acquire("bob", now: start) == .allowed)
        for second in 1...9 {
            #expect(
                limiter.acquire("ann", now: start.addingTimeInterval(Double(second)))
                    == .limited(retryAfter: 10 - second))
        }
        #expect(limiter.acquire("ann", now: start.addingTimeInterval(10)) == .allowed)
    }

    @Test("A clock that steps back refills nothing")
    func clockStepsBack() {
        var limiter = TokenBucketLimiter(capacity: 1, per: 60)
        #expect(limiter.acquire("ann", now: start) == .allowed)
        #expect(limiter.acquire("ann", now: start.addingTimeInterval(-30)) == .limited(retryAfter: 90))
    }

    @Test("Memory follows active keys: full buckets are forgotten")
    func sweepsFullBuckets() {
        var limiter = TokenBucketLimiter(capacity: 5, per: 1)
        for index in 0..<1024 { _ = limiter.acquire("user-\(index)", now: start) }
        #expect(limiter.trackedKeys == 1024)
        // The next new key grows the table past its threshold: the refilled buckets go.
        #expect(limiter.acquire("late", now: start.addingTimeInterval(10)) == .allowed)
        #expect(limiter.trackedKeys == 1)
    }
}

import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@Suite("Retry policy: full-jitter backoff, Retry-After, attempts and expiry")
struct RetryPolicyTests {
    static let lowest: @Sendable (ClosedRange<Double>) -> Double = { $0.lowerBound }
    static let highest: @Sendable (ClosedRange<Double>) -> Double = { $0.upperBound }

    @Test("Defaults: 1 s base, 5 min cap, 5 attempts")
    func defaults() {
        let policy = RetryPolicy()
        #expect(policy.base == .seconds(1))
        #expect(policy.cap == .seconds(300))
        #expect(policy.maxAttempts == 5)
    }

    @Test("Full jitter between zero and base × 2^(attempt − 1)")
    func jitter() {
        let policy = RetryPolicy()
        for (attempt, ceiling) in [(1, 1), (2, 2), (3, 4), (4, 8)] {
            #expect(policy.delay(afterAttempt: attempt, retryAfter: nil, random: Self.lowest) == .zero)
            #expect(policy.delay(afterAttempt: attempt, retryAfter: nil, random: Self.highest) == .seconds(ceiling))
            var range: ClosedRange<Double>?
            _ = policy.delay(afterAttempt: attempt, retryAfter: nil) { offered in
                range = offered
                return offered.lowerBound
            }
            #expect(range == 0...Double(ceiling))
        }
        let middle = policy.delay(afterAttempt: 3, retryAfter: nil) { ($0.lowerBound + $0.upperBound) / 2 }
        #expect(middle == .seconds(2))
        let fine = RetryPolicy(base: .milliseconds(250), cap: .seconds(2), maxAttempts: 10)
        let delays = (1...6).map { fine.delay(afterAttempt: $0, retryAfter: nil, random: Self.highest) }
        #expect(delays == [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(2), .seconds(2)])
    }

    @Test("A random value outside the range offered is clamped into it")
    func clamped() {
        let policy = RetryPolicy()
        #expect(policy.delay(afterAttempt: 2, retryAfter: nil) { _ in 1_000 } == .seconds(2))
        #expect(policy.delay(afterAttempt: 2, retryAfter: nil) { _ in -5 } == .zero)
    }

    @Test("The ceiling stops at the cap, however many attempts")
    func cap() {
        let policy = RetryPolicy(maxAttempts: 100)
        #expect(policy.delay(afterAttempt: 9, retryAfter: nil, random: Self.highest) == .seconds(256))
        #expect(policy.delay(afterAttempt: 10, retryAfter: nil, random: Self.highest) == .seconds(300))
        #expect(policy.delay(afterAttempt: 99, retryAfter: nil, random: Self.highest) == .seconds(300))
        let endless = RetryPolicy(maxAttempts: .max)
        #expect(endless.delay(afterAttempt: 5_000, retryAfter: nil, random: Self.highest) == .seconds(300))
        #expect(endless.delay(afterAttempt: .max - 1, retryAfter: nil, random: Self.highest) == .seconds(300))
        // Attempts below 1 count as the first.
        #expect(policy.delay(afterAttempt: 0, retryAfter: nil, random: Self.highest) == .seconds(1))
        #expect(policy.delay(afterAttempt: -3, retryAfter: nil, random: Self.highest) == .seconds(1))
    }

    @Test("Retry-After is a floor, even above the cap, with the jitter added to it")
    func retryAfter() {
        let policy = RetryPolicy(maxAttempts: 20)
        #expect(policy.delay(afterAttempt: 1, retryAfter: .seconds(10), random: Self.lowest) == .seconds(10))
        #expect(policy.delay(afterAttempt: 4, retryAfter: .seconds(3), random: Self.highest) == .seconds(11))
        #expect(policy.delay(afterAttempt: 4, retryAfter: .seconds(3), random: Self.lowest) == .seconds(3))
        #expect(policy.delay(afterAttempt: 12, retryAfter: .seconds(600), random: Self.highest) == .seconds(900))
        #expect(policy.delay(afterAttempt: 12, retryAfter: .seconds(600), random: Self.lowest) == .seconds(600))
        #expect(policy.delay(afterAttempt: 1, retryAfter: .zero, random: Self.lowest) == .zero)
    }

    @Test("No retry once maxAttempts attempts were made, Retry-After or not")
    func maxAttempts() {
        let policy = RetryPolicy()
        #expect(policy.delay(afterAttempt: 4, retryAfter: nil, random: Self.lowest) != nil)
        #expect(policy.delay(afterAttempt: 5, retryAfter: nil, random: Self.lowest) == nil)
        #expect(policy.delay(afterAttempt: 5, retryAfter: .seconds(1), random: Self.highest) == nil)
        #expect(policy.delay(afterAttempt: 6, retryAfter: nil, random: Self.highest) == nil)
        #expect(RetryPolicy(maxAttempts: 1).delay(afterAttempt: 1, retryAfter: nil, random: Self.highest) == nil)
        #expect(RetryPolicy(maxAttempts: 0).delay(afterAttempt: 1, retryAfter: nil, random: Self.highest) == nil)
    }

    @Test("A seeded generator gives the same schedule twice, inside the bounds")
    func seeded() {
        let policy = RetryPolicy(maxAttempts: 12)
        var first = SeededGenerator(state: 42)
        var second = SeededGenerator(state: 42)
        for attempt in 1..<12 {
            let delay = policy.delay(afterAttempt: attempt, retryAfter: nil, using: &first)
            #expect(delay == policy.delay(afterAttempt: attempt, retryAfter: nil, using: &second))
            let ceiling = min(Duration.seconds(300), .seconds(1 << (attempt - 1)))
            #expect(delay.map { $0 >= .zero && $0 <= ceiling } == true, "attempt \(attempt)")
        }
        #expect(policy.delay(afterAttempt: 12, retryAfter: nil, using: &first) == nil)
    }

    @Test("The next attempt is never at or after the expiry")
    func expiry() {
        let policy = RetryPolicy()
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        #expect(
            policy.nextAttempt(afterAttempt: 2, retryAfter: nil, now: now, expiresAt: nil, random: Self.highest)
                == now.addingTimeInterval(2))
        #expect(
            policy.nextAttempt(
                afterAttempt: 2, retryAfter: nil, now: now, expiresAt: now.addingTimeInterval(2.001),
                random: Self.highest) == now.addingTimeInterval(2))
        #expect(
            policy.nextAttempt(
                afterAttempt: 2, retryAfter: nil, now: now, expiresAt: now.addingTimeInterval(2), random: Self.highest)
                == nil)
        #expect(
            policy.nextAttempt(
                afterAttempt: 2, retryAfter: nil, now: now, expiresAt: now.addingTimeInterval(2), random: Self.lowest)
                == now)
        #expect(
            policy.nextAttempt(
                afterAttempt: 1, retryAfter: .seconds(600), now: now, expiresAt: now.addingTimeInterval(300),
                random: Self.lowest) == nil)
        #expect(
            policy.nextAttempt(
                afterAttempt: 1, retryAfter: .seconds(600), now: now, expiresAt: now.addingTimeInterval(3_600),
                random: Self.lowest) == now.addingTimeInterval(600))
        #expect(
            policy.nextAttempt(afterAttempt: 5, retryAfter: nil, now: now, expiresAt: nil, random: Self.lowest) == nil)
        #expect(
            policy.nextAttempt(afterAttempt: 1, retryAfter: nil, now: now, expiresAt: now, random: Self.lowest) == nil)
    }
}

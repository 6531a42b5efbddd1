import Foundation

/// How long to wait before trying a failed delivery again: exponential backoff with full jitter
/// (a uniform delay between zero and `min(cap, base × 2^(attempt − 1))`), at most `maxAttempts`
/// attempts in all, never sooner than a provider's `Retry-After` (the jitter is added to it, so the
/// devices a provider-wide `Retry-After` held back do not all come back at the same instant, and
/// the ones it refused come back after those it made wait), never past the notification's expiry.
///
/// Pure: the random source and the current time are passed in, so schedules are tested without
/// sleeping.
public struct RetryPolicy: Sendable, Equatable {
    /// The ceiling of the delay after the first attempt; it doubles with each attempt.
    public var base: Duration
    /// The largest ceiling backoff reaches (a provider's `Retry-After` can ask for longer).
    public var cap: Duration
    /// The number of attempts in all, the first one included; no retry is scheduled after the last.
    public var maxAttempts: Int

    /// Creates a policy; the defaults are 1 s doubling up to 5 minutes, 5 attempts.
    public init(base: Duration = .seconds(1), cap: Duration = .seconds(300), maxAttempts: Int = 5) {
        self.base = base
        self.cap = cap
        self.maxAttempts = maxAttempts
    }

    /// The wait before the attempt after attempt number `attempt` (1 for the first), or nil when that
    /// was the last one allowed.
    ///
    /// - Parameters:
    ///   - retryAfter: the provider's `Retry-After`, a floor on the delay even above `cap`; the
    ///     jitter is added to it.
    ///   - random: returns a number in the range it is given (the jittered delay in seconds); a value
    ///     outside the range is clamped into it.
    public func delay(
        afterAttempt attempt: Int, retryAfter: Duration?,
        random: (ClosedRange<Double>) -> Double = { Double.random(in: $0) }
    ) -> Duration? {
        guard attempt < maxAttempts else { return nil }
        let ceiling = ceiling(afterAttempt: attempt)
        let jitter = Duration.seconds(min(max(random(0...ceiling), 0), ceiling))
        guard let retryAfter else { return jitter }
        return retryAfter + jitter
    }

    /// `delay(afterAttempt:retryAfter:random:)` drawing from `generator`.
    public func delay(
        afterAttempt attempt: Int, retryAfter: Duration?, using generator: inout some RandomNumberGenerator
    ) -> Duration? {
        delay(afterAttempt: attempt, retryAfter: retryAfter) { Double.random(in: $0, using: &generator) }
    }

    /// When to make the attempt after attempt number `attempt`, failed at `now`: nil when no attempt is
    /// left, or when the next one would fall at or after `expiresAt` (a notification is never sent
    /// past its expiry).
    public func nextAttempt(
        afterAttempt attempt: Int, retryAfter: Duration?, now: Date, expiresAt: Date?,
        random: (ClosedRange<Double>) -> Double = { Double.random(in: $0) }
    ) -> Date? {
        guard let delay = delay(afterAttempt: attempt, retryAfter: retryAfter, random: random) else { return nil }
        let next = now.addingTimeInterval(Self.seconds(delay))
        if let expiresAt, next >= expiresAt { return nil }
        return next
    }

    /// The backoff ceiling in seconds after attempt `attempt` (attempts below 1 count as the first).
    private func ceiling(afterAttempt attempt: Int) -> Double {
        let base = Self.seconds(self.base)
        let cap = Self.seconds(self.cap)
        guard base > 0, cap > 0 else { return 0 }
        // In floating point: 2^(attempt − 1) overflows Duration's integers for large attempts, while a
        // Double goes to infinity and `min` brings it back to the cap.
        return min(cap, base * pow(2, Double(max(attempt, 1) - 1)))
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}

import Foundation

/// When a webhook delivery is attempted again after a failure: Standard Webhooks' (Svix's) schedule
/// — at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after each failure — and two more
/// attempts a day apart, so an endpoint down for up to about three days still gets every event
/// (docs/webhooks.md, "Retries"). Each delay is drawn within ±20 % (jitter), so the deliveries an
/// outage held back do not all come back in the same second.
public struct WebhookRetrySchedule: Sendable, Equatable {
    /// The delay before each attempt after the first, in order.
    public var delays: [Duration]
    /// The spread of each delay: a delay `d` is drawn from `d × (1 ± jitter)`.
    public var jitter: Double

    /// The default schedule: ten attempts over about 75 hours.
    public static let standard = WebhookRetrySchedule(
        delays: [
            .seconds(5), .seconds(300), .seconds(1_800), .seconds(7_200), .seconds(18_000), .seconds(36_000),
            .seconds(36_000), .seconds(86_400), .seconds(86_400),
        ],
        jitter: 0.2)

    /// Creates a schedule.
    public init(delays: [Duration], jitter: Double) {
        self.delays = delays
        self.jitter = min(max(jitter, 0), 1)
    }

    /// How many attempts a delivery gets in all.
    public var attempts: Int { delays.count + 1 }

    /// When to try again after `attempts` failed attempts, the last at `now`; nil once they are used up.
    public func nextAttempt(after attempts: Int, now: Date, using generator: inout some RandomNumberGenerator) -> Date?
    {
        guard attempts >= 1, attempts <= delays.count else { return nil }
        let delay = delays[attempts - 1].timeInterval
        let factor = jitter > 0 ? Double.random(in: (1 - jitter)...(1 + jitter), using: &generator) : 1
        return now.addingTimeInterval(delay * factor)
    }

    /// ``nextAttempt(after:now:using:)`` with the system's randomness.
    public func nextAttempt(after attempts: Int, now: Date) -> Date? {
        var generator = SystemRandomNumberGenerator()
        return nextAttempt(after: attempts, now: now, using: &generator)
    }
}

import Foundation

/// Per-key request limits as token buckets: a key may spend `capacity` requests at once, and its
/// bucket refills at `capacity` per `interval`. A pure value: the caller passes the time in and keeps
/// the limiter behind its own lock, so tests drive it with any clock.
///
/// Each bucket is kept as one date, the generic cell rate algorithm's theoretical arrival time (ITU-T
/// I.371): the instant the bucket would be full again. No token counts drift with rounding.
public struct TokenBucketLimiter: Sendable {
    /// What the limiter says about one request.
    public enum Decision: Sendable, Equatable {
        /// The request may go ahead; it spent one token.
        case allowed
        /// The bucket is empty: a request succeeds again after this many whole seconds (at least 1).
        case limited(retryAfter: Int)
    }

    /// Requests a key may make at once (the bucket's size), and how many it regains per `interval`.
    public let capacity: Int
    /// The time in which an empty bucket refills completely, in seconds.
    public let interval: TimeInterval
    /// When each key's bucket is full again; keys whose bucket is full may be missing.
    private var fullAt: [String: Date] = [:]
    /// Full buckets are dropped when the table grows past this, so memory follows active keys only.
    private var sweepThreshold = 1024
    /// Clock readings closer than this count as equal (dates are doubles).
    private static let tolerance: TimeInterval = 0.001

    /// Creates a limiter of `capacity` requests per `interval` seconds for each key.
    /// - Precondition: `capacity` and `interval` are positive.
    public init(capacity: Int, per interval: TimeInterval) {
        precondition(capacity > 0 && interval > 0, "A rate limit needs a positive capacity and interval.")
        self.capacity = capacity
        self.interval = interval
    }

    /// How many keys the limiter remembers (keys whose bucket is not known to be full).
    public var trackedKeys: Int { fullAt.count }

    /// Spends one token of `key`'s bucket at `now`, if it has one.
    public mutating func acquire(_ key: String, now: Date) -> Decision {
        let (decision, full) = Self.acquire(fullAt: fullAt[key], capacity: capacity, per: interval, now: now)
        guard let full else { return decision }
        fullAt[key] = full
        if fullAt.count > sweepThreshold {
            fullAt = fullAt.filter { $0.value > now }
            sweepThreshold = max(1024, fullAt.count * 2)
        }
        return .allowed
    }

    /// One bucket's step, for stores that keep buckets in a table: the decision, and the bucket's
    /// new full-again time when a token was spent (nil: leave it).
    /// - Parameter fullAt: When the bucket is full again, as stored; nil when it is full.
    public static func acquire(
        fullAt: Date?, capacity: Int, per interval: TimeInterval, now: Date
    ) -> (Decision, fullAt: Date?) {
        let cost = interval / Double(max(1, capacity))
        // The bucket holds `capacity` tokens: it may be full again up to `capacity - 1` costs ahead.
        let burst = cost * Double(max(1, capacity) - 1)
        let full = max(fullAt ?? now, now)
        let ahead = full.timeIntervalSince(now)
        guard ahead <= burst + tolerance else {
            return (.limited(retryAfter: max(1, Int((ahead - burst - tolerance).rounded(.up)))), nil)
        }
        return (.allowed, full.addingTimeInterval(cost))
    }
}

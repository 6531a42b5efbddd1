import Foundation

/// An activity's budget of high-priority (APNs priority 10) pushes: Apple throttles frequent
/// high-priority Live Activity updates and does not say how far a sender is, so Herald counts them
/// itself — at most `perHour` in the hour that began with the window's first high-priority push;
/// past that, pushes go at priority 5 until the hour is over. Decided here once for both stores.
public struct LiveActivityBudget: Sendable, Equatable {
    /// When the current window began (nil: no high-priority push yet).
    public var windowStart: Date?
    /// High-priority pushes in the window.
    public var count: Int

    /// The default of `app.<id>.live_activities.high_priority_per_hour`.
    public static let defaultPerHour = 10

    /// A budget as stored.
    public init(windowStart: Date?, count: Int) {
        self.windowStart = windowStart
        self.count = count
    }

    /// Takes one high-priority push from the budget at `now` when there is room.
    /// - Returns: Whether the push goes at high priority.
    public mutating func take(perHour: Int, now: Date) -> Bool {
        if let start = windowStart, now.timeIntervalSince(start) < 3600 {
            guard count < perHour else { return false }
            count += 1
            return true
        }
        guard perHour > 0 else { return false }
        windowStart = now
        count = 1
        return true
    }
}

import Foundation

/// The clean-up rules of a policy as of one instant, decided here once for every store: which
/// installations and notifications go (or turn stale), and from which cut-off on the engine's
/// clock. A store only writes each rule in its own SQL (``CleanupRules/Deletion``).
public struct CleanupRules: Sendable, Equatable {
    /// Installations a rule deletes.
    public enum Deletion: Sendable, Equatable {
        /// Invalid installations invalidated before `before`.
        case invalid(before: Date)
        /// Installations with at least `failures` failures (one recorded at least) and no
        /// successful delivery — counted from their creation when they never had one — since `before`.
        case failing(failures: Int, undeliveredBefore: Date)
        /// Installations neither seen nor updated since `before`.
        case unseen(before: Date)
        /// Installations with no successful delivery since `before` (counted from their creation),
        /// however recently they registered again.
        case undelivered(before: Date)

        /// The count of the report the rule's deletions add to.
        public var count: WritableKeyPath<CleanupReport, Int> {
            switch self {
            case .invalid: \.invalidInstallations
            case .failing: \.failingInstallations
            case .unseen: \.unseenInstallations
            case .undelivered: \.undeliveredInstallations
            }
        }
    }

    /// The deletions, in the order they run (each counts what the ones before left).
    public var deletions: [Deletion]
    /// Valid installations neither seen nor updated since this turn invalid (reason `stale`, at
    /// the run's instant) — after the deletions, so what they deleted is not counted again; nil:
    /// none do.
    public var staleBefore: Date?
    /// Final notifications completed (or, never started, created) before this go with their ledgers.
    public var notificationsBefore: Date
    /// Webhook events delivered or given up before this go from the outbox.
    public var webhookEventsBefore: Date
    /// The statuses of final notifications.
    public static let finalStatuses = NotificationStatus.allCases.filter(\.isFinal)

    /// The rules of `policy` as of `now`.
    public init(_ policy: CleanupPolicy, now: Date) {
        func cutoff(_ age: Duration) -> Date { now.addingTimeInterval(-age.timeInterval) }
        var deletions: [Deletion] = [.invalid(before: cutoff(policy.invalidAfter))]
        if let failingAfter = policy.failingAfter {
            deletions.append(.failing(failures: policy.failureThreshold, undeliveredBefore: cutoff(failingAfter)))
        }
        if let unseenAfter = policy.unseenAfter { deletions.append(.unseen(before: cutoff(unseenAfter))) }
        if let undeliveredAfter = policy.undeliveredAfter {
            deletions.append(.undelivered(before: cutoff(undeliveredAfter)))
        }
        self.deletions = deletions
        self.staleBefore = policy.staleAfter.map(cutoff)
        self.notificationsBefore = cutoff(policy.notificationRetention)
        self.webhookEventsBefore = cutoff(policy.webhookRetention)
    }

    /// What a deletion rule is called in an `installation.removed` event's `reason`.
    public static func reason(_ deletion: Deletion) -> String {
        switch deletion {
        case .invalid: "invalid"
        case .failing: "failing"
        case .unseen: "unseen"
        case .undelivered: "undelivered"
        }
    }
}

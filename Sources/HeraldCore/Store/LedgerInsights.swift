import Foundation

/// What the web console reads of the ledger beyond one notification: a device's history, an app's
/// outcomes over time and its providers' recent failures. Read-only, cheap through indexes.
public protocol LedgerInsights: Sendable {
    /// A page of one installation's ledger, newest first: `page.after` is the `sequence` of the last
    /// entry of the previous page (entries older than it follow).
    func deliveries(installationID: String, page: PageRequest) async throws -> [LedgerEntry]

    /// An app's notifications created at or after `since`, their counts summed per hour of creation
    /// (oldest hour first; hours without notifications are missing).
    func outcomeSeries(appID: String, since: Date) async throws -> [OutcomeBucket]

    /// An app's failed and invalid deliveries recorded at or after `since`, grouped by service,
    /// outcome and reason, most frequent first, at most `limit` groups. Only notifications created
    /// at or after `createdSince` are read (the ledger is reached through them).
    func providerFailures(
        appID: String, since: Date, createdSince: Date, limit: Int
    ) async throws
        -> [ProviderFailureSummary]
}

/// One hour of an app's notification outcomes.
public struct OutcomeBucket: Sendable, Equatable {
    /// The start of the hour.
    public var hour: Date
    /// Notifications created in the hour.
    public var notifications: Int
    /// Their counts, summed.
    public var counts: NotificationCounts

    /// Creates a bucket.
    public init(hour: Date, notifications: Int, counts: NotificationCounts) {
        self.hour = hour
        self.notifications = notifications
        self.counts = counts
    }
}

/// A group of recent delivery failures of one service with one reason.
public struct ProviderFailureSummary: Sendable, Equatable {
    public var service: PushService
    /// `failed` or `invalid`.
    public var outcome: DeliveryRecord.Outcome
    /// The provider's (or Herald's) reason, nil when none was recorded.
    public var reason: String?
    public var count: Int
    /// The most recent failure of the group.
    public var lastAt: Date

    /// Creates a summary.
    public init(service: PushService, outcome: DeliveryRecord.Outcome, reason: String?, count: Int, lastAt: Date) {
        self.service = service
        self.outcome = outcome
        self.reason = reason
        self.count = count
        self.lastAt = lastAt
    }
}

extension Identifier {
    /// The smallest id ``make(now:)`` can make at or after `date`: ids compare as strings in time
    /// order, so `id >= lowerBound(date)` selects records made since `date` through an index on id.
    public static func lowerBound(_ date: Date) -> String {
        let milliseconds = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        let hex = String(milliseconds & 0xFFFF_FFFF_FFFF, radix: 16)
        let padded = String(repeating: "0", count: max(0, 12 - hex.count)) + hex
        return "\(padded.prefix(8))-\(padded.suffix(4))-"
    }
}

import Foundation

/// The store's side of dispatch, what the engine needs to take a notification in and fan it out:
/// notifications, the fan-out cursor and ranges, pending deliveries (retries and deferrals), the
/// preferences and badges a page is sent with, the page commit (ledger, counts and the token
/// lifecycle deliveries drive). What the API reads and changes of notifications besides is
/// ``NotificationRecords``. Every method that changes several tables does so in one transaction.
public protocol DispatchLedger: Sendable {
    /// Stores a notification and its job (due at `runAt`) in one transaction. With an idempotency
    /// key already used by the app within `idempotencyWindow`, stores nothing.
    /// - Parameter lease: When given, the job is stored already leased to it (and announced to
    ///   no one), and the lease is granted the job: the engine's in-memory handoff.
    /// - Returns: The stored notification, and whether it is new (false: the earlier one with the key).
    func insertNotification(
        _ notification: PushNotification, runAt: Date, idempotencyWindow: Duration, lease: JobLease?
    ) async throws -> (notification: PushNotification, created: Bool)

    /// One notification of an app.
    func notification(appID: String, id: String) async throws -> PushNotification?

    /// A notification by id, whatever its app (for workers).
    func notification(id: String) async throws -> PushNotification?

    /// The fan-out cursor: the last recipient handled, `done` when the target is exhausted.
    func cursor(notificationID: String) async throws -> String?

    // MARK: Fan-out

    /// The next page of installations a target resolves to, in id order after `after`: valid
    /// installations of the notification's app matching the audience and its filters, read as
    /// much as sending to them needs.
    /// - Throws: `HeraldError` when the target's query is invalid.
    /// - Parameter through: The last key a page may hold (a range's end); nil: to the end.
    func resolve(
        _ target: NotificationTarget, appID: String, after: String?, through: String?, limit: Int
    ) async throws -> [InstallationAddress]

    /// The id of the `skip`-th installation the target resolves to after `after`, in id order: where
    /// a range of `skip` of them ends; nil when fewer are left. For everyone (``NotificationTarget/Audience/all``),
    /// the app's `skip`-th installation, valid or not and whatever the platform and service filters (a
    /// walk of the app's id index alone): a range's bounds need not be exact, only cheap.
    func rangeBoundary(_ target: NotificationTarget, appID: String, after: String?, skip: Int) async throws -> String?

    /// Stores a range of the notification and its job (due at `now`), if the notification's job is
    /// still held by `owner`, in one transaction: that lease renewed to `lockedUntil`, the
    /// notification's cursor `ranging` and its status `sending` (started at `now` unless it was).
    /// The last range (``FanoutRange/through`` nil) sets the cursor `ranged` and releases the
    /// notification's job until `waitUntil`: the commit that finishes the last range left makes it
    /// due at once. False (nothing stored) when the lock was lost.
    func addRange(
        _ range: FanoutRange, jobID: Int64, owner: String, now: Date, lockedUntil: Date, waitUntil: Date
    ) async throws -> Bool

    /// A notification's ranges, in order.
    func fanoutRanges(notificationID: String) async throws -> [FanoutRange]

    /// One range of a notification.
    func fanoutRange(notificationID: String, index: Int) async throws -> FanoutRange?

    /// When a range of the notification is not done, releases its job (held by `owner`) until
    /// `runAt` and answers true; false leaves the job held. One transaction that locks the
    /// notification as a page commit does: a range finishing at the same time either is seen
    /// done here or sees the job released and makes it due.
    func releaseWhileRanging(jobID: Int64, owner: String, notificationID: String, runAt: Date) async throws -> Bool

    /// The first page of each of several targets, and the stored preferences of the installations
    /// on the pages whose request asks for them, read together (in one read transaction where the
    /// store can): the engine works small notifications handed over at the same time as one batch.
    /// Each page is what ``resolve(_:appID:after:limit:)`` answers from the start.
    /// - Throws: `HeraldError` when a target's query is invalid.
    func resolveFirstPages(_ requests: [FirstPageRequest]) async throws -> FirstPages

    /// How many installations the target resolves to now (for dry runs), by service.
    func count(_ target: NotificationTarget, appID: String) async throws -> [PushService: Int]

    /// Pending deliveries of a notification due at `now`: those due longest first and, among those
    /// due at the same instant (a provider pause ending), those with the fewest attempts, so that a
    /// page at a time never keeps serving the same recipients while others wait.
    func duePending(notificationID: String, now: Date, limit: Int) async throws -> [PendingDelivery]

    /// The earliest run time among a notification's pending deliveries.
    func nextPending(notificationID: String) async throws -> Date?

    /// Makes every delivery waiting for this recipient's channel (`offline`) due now, with its
    /// notification's job.
    /// - Returns: How many deliveries were woken.
    func wakeOfflineDeliveries(recipient: String, now: Date) async throws -> Int

    /// Settles a delivery waiting for its direct channel's confirmation (`confirming`): it takes the
    /// settlement's reason (one of ``PendingDelivery/Reason/settlements``) and is due now, with its
    /// notification's job.
    /// - Returns: False when no such delivery waits (settled already, or its page has not committed).
    func settleConfirming(
        notificationID: String, recipient: String, as reason: PendingDelivery.Reason, now: Date
    ) async throws -> Bool

    /// Stored preferences (as JSON) of installations that have any.
    func preferences(installationIDs: [String]) async throws -> [String: Preferences]

    /// Increments the stored badge of each installation by one, atomically, and returns the new values.
    func incrementBadges(installationIDs: [String], now: Date) async throws -> [String: Int]

    /// Writes a page's (or a batch of pending deliveries') results in one transaction, if the job
    /// is still held by `owner`: ledger entries, counts, installation lifecycle, pending
    /// deliveries, the cursor, the status, the job's lease (`lockedUntil`). False (nothing written)
    /// when the lock was lost.
    func commit(_ page: PageCommit) async throws -> Bool

    // MARK: Opens

}

/// A delivery that waits: a retry after a transient failure, a device's local push time, the end
/// of its quiet hours, or a paused provider.
public struct PendingDelivery: Sendable, Equatable {
    /// Why it waits.
    public enum Reason: String, Sendable {
        case retry, localTime = "local_time", quietHours = "quiet_hours", providerPaused = "provider_paused"
        /// A direct-only device is not connected: it waits for its channel (woken when it connects).
        case offline
        /// Written to a direct channel that confirms: it waits for the confirmation, until the
        /// window's end (then it falls back to the device's cloud route).
        case confirming
        /// The channel confirmed it: due now, to be recorded as delivered.
        case confirmed
        /// The channel missed the window and was torn down: due now, to fall back.
        case unconfirmed
        /// The channel closed before it confirmed: due now, to fall back.
        case channelClosed = "channel_closed"
        /// A newer channel of the device replaced the one it waited on: due now, to fall back.
        case channelReplaced = "channel_replaced"
        /// An earlier revision of its Live Activity is still being sent to the device: it waits for
        /// that send's answer (``LiveActivityClaimRule``).
        case ordering

        /// The reasons a delivery that waited for its channel's confirmation is settled with.
        public static let settlements: Set<Reason> = [.confirmed, .unconfirmed, .channelClosed, .channelReplaced]
    }

    public var notificationID: String
    /// The installation id, or `token:<index>` for a raw token of the target.
    public var recipient: String
    public var runAt: Date
    /// Attempts already made.
    public var attempts: Int
    public var reason: Reason

    /// Creates a pending delivery.
    public init(notificationID: String, recipient: String, runAt: Date, attempts: Int, reason: Reason) {
        self.notificationID = notificationID
        self.recipient = recipient
        self.runAt = runAt
        self.attempts = attempts
        self.reason = reason
    }
}

/// What happens to an installation after a delivery.
public enum InstallationEvent: Sendable, Equatable {
    /// Delivered: failures reset, `last_delivered_at` set — to within
    /// ``InstallationEvent/deliveredResolution``: a delivery that soon after the recorded one changes
    /// no row (a broadcast to devices served within the hour rewrites none of them).
    case delivered(at: Date)

    /// How stale `last_delivered_at` may be: what clean-up and the API read it for is days.
    public static let deliveredResolution: TimeInterval = 3600
    /// The provider called the token invalid at `since` (nil: now). An invalidation older than
    /// the installation's last update is ignored (the token was registered again after it).
    case invalidated(reason: String, since: Date?, at: Date)
    /// A failure that counts against the device; `maxFailures` in a row deactivate it.
    case failed(reason: String, at: Date, maxFailures: Int)
    /// The provider rejected the token (``DeliveryOutcome/rejectedToken(reason:)``): with
    /// ``RejectedTokenRule/invalidate`` the installation is invalidated as by `invalidated` (never
    /// deleted), with ``RejectedTokenRule/count`` — and always for an installation registered with
    /// `delete_when_invalid` — it counts as `failed`.
    case rejected(reason: String, at: Date, maxFailures: Int, rule: RejectedTokenRule)
}

/// One transaction's worth of dispatch results.
public struct PageCommit: Sendable {
    public var jobID: Int64
    public var owner: String
    public var notificationID: String
    public var ledger: [DeliveryRecord]
    public var counts: NotificationCounts
    public var installationEvents: [(id: String, event: InstallationEvent)]
    /// Pending deliveries to store or replace.
    public var pending: [PendingDelivery]
    /// Pending deliveries (recipients) that are done.
    public var resolvedPending: [String]
    /// The new fan-out cursor: the last recipient handled, or `done`; nil leaves it.
    public var cursor: String?
    /// The range of the notification the page is part of: the cursor is that range's, and the
    /// commit that makes it `done`, when no other range is left and every range is stored
    /// (`ranged`), makes the notification's job due in the same transaction. Nil: the
    /// notification's own cursor.
    public var range: Int?
    /// The engine's time of the commit: when the notification's job that finishing the last range
    /// makes due is due (nil: the store's clock).
    public var at: Date?
    /// A new status, nil leaves it.
    public var status: NotificationStatus?
    public var startedAt: Date?
    public var completedAt: Date?
    /// The job's lease renewed to this time in the same transaction; nil leaves it.
    public var lockedUntil: Date?
    /// Whether the job is done with this commit: its row goes in the same transaction (the last
    /// commit of a notification, which sets its final status).
    public var finishesJob = false

    /// Creates an empty commit for a job.
    public init(jobID: Int64, owner: String, notificationID: String) {
        self.jobID = jobID
        self.owner = owner
        self.notificationID = notificationID
        self.ledger = []
        self.counts = NotificationCounts()
        self.installationEvents = []
        self.pending = []
        self.resolvedPending = []
    }
}

/// A ledger entry with its position, the cursor of the ledger's pages.
public struct LedgerEntry: Sendable, Equatable {
    public var sequence: Int64
    public var record: DeliveryRecord

    /// Creates an entry.
    public init(sequence: Int64, record: DeliveryRecord) {
        self.sequence = sequence
        self.record = record
    }
}

/// What the clean-up job deletes.
public struct CleanupPolicy: Sendable, Equatable {
    /// Invalid installations invalidated longer ago than this go.
    public var invalidAfter: Duration
    /// Installations with at least `failureThreshold` failures and no delivery within `failingAfter` go;
    /// a nil `failingAfter` keeps them (LeanCloud's rules delete them only once invalid long enough).
    public var failureThreshold: Int
    public var failingAfter: Duration?
    /// Installations not seen (nor updated) within this go; nil keeps them.
    public var unseenAfter: Duration?
    /// Installations with no successful delivery within this (counted from their creation when they
    /// never had one) go, however recently they registered again; nil keeps them. ArgusAI's "tokens
    /// not used in 90 days".
    public var undeliveredAfter: Duration?
    /// Final notifications (and their ledgers) older than this go.
    public var notificationRetention: Duration
    /// Valid installations not seen (nor updated) within this become invalid — not deleted — until
    /// the app registers them again (LeanCloud's 60 days); nil keeps them valid.
    public var staleAfter: Duration?
    /// Webhook events delivered or given up longer ago than this go from the outbox.
    public var webhookRetention: Duration = .seconds(7 * 86_400)

    /// Creates a policy with Herald's defaults.
    public init(
        invalidAfter: Duration = .seconds(30 * 86_400), failureThreshold: Int = 5,
        failingAfter: Duration? = .seconds(7 * 86_400), unseenAfter: Duration? = nil,
        undeliveredAfter: Duration? = nil, notificationRetention: Duration = .seconds(30 * 86_400),
        staleAfter: Duration? = nil
    ) {
        self.staleAfter = staleAfter
        self.invalidAfter = invalidAfter
        self.failureThreshold = failureThreshold
        self.failingAfter = failingAfter
        self.unseenAfter = unseenAfter
        self.undeliveredAfter = undeliveredAfter
        self.notificationRetention = notificationRetention
    }
}

/// What a clean-up run deleted.
public struct CleanupReport: Sendable, Equatable {
    public var invalidInstallations = 0
    public var failingInstallations = 0
    public var unseenInstallations = 0
    public var undeliveredInstallations = 0
    public var notifications = 0
    /// Valid installations made invalid for not being seen within the stale period.
    public var staleInstallations = 0
    /// The installations removed that had provider-side state (an SNS endpoint) to remove too.
    public var removedWithEndpoints: [Installation] = []

    /// Creates a report.
    public init(
        invalidInstallations: Int = 0, failingInstallations: Int = 0, unseenInstallations: Int = 0,
        undeliveredInstallations: Int = 0, notifications: Int = 0
    ) {
        self.invalidInstallations = invalidInstallations
        self.failingInstallations = failingInstallations
        self.unseenInstallations = unseenInstallations
        self.undeliveredInstallations = undeliveredInstallations
        self.notifications = notifications
    }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    public var timeInterval: TimeInterval {
        let parts = components
        return TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
    }
}

/// A target whose first page ``DispatchLedger/resolveFirstPages(_:)`` reads.
public struct FirstPageRequest: Sendable {
    public var target: NotificationTarget
    public var appID: String
    public var limit: Int
    /// Whether the preferences of the page's installations are read too.
    public var withPreferences: Bool

    public init(target: NotificationTarget, appID: String, limit: Int, withPreferences: Bool) {
        self.target = target
        self.appID = appID
        self.limit = limit
        self.withPreferences = withPreferences
    }
}

/// What ``DispatchLedger/resolveFirstPages(_:)`` read: each request's page, in the requests' order,
/// and the stored preferences, by installation id, of those on pages that asked for them.
public struct FirstPages: Sendable {
    public var pages: [[InstallationAddress]]
    public var preferences: [String: Preferences]

    public init(pages: [[InstallationAddress]], preferences: [String: Preferences]) {
        self.pages = pages
        self.preferences = preferences
    }
}

extension DispatchLedger {
    /// The next page of installations a target resolves to after `after`, to the end of the target.
    public func resolve(
        _ target: NotificationTarget, appID: String, after: String?, limit: Int
    ) async throws -> [InstallationAddress] {
        try await resolve(target, appID: appID, after: after, through: nil, limit: limit)
    }

    /// Reads the pages concurrently (each as ``resolve(_:appID:after:limit:)``, on a connection of
    /// its own where the store pools them), then the preferences; a store that can read them all in
    /// one transaction does so instead.
    public func resolveFirstPages(_ requests: [FirstPageRequest]) async throws -> FirstPages {
        var pages = [[InstallationAddress]](repeating: [], count: requests.count)
        try await withThrowingTaskGroup(of: (Int, [InstallationAddress]).self) { group in
            for (index, request) in requests.enumerated() {
                group.addTask {
                    (index, try await resolve(request.target, appID: request.appID, after: nil, limit: request.limit))
                }
            }
            for try await (index, page) in group { pages[index] = page }
        }
        let preferring = zip(requests, pages).filter(\.0.withPreferences).flatMap { $0.1.map(\.installationID) }
        return FirstPages(pages: pages, preferences: try await preferences(installationIDs: preferring))
    }

    /// Stores a notification and its job, due at `runAt`, for any worker to claim.
    public func insertNotification(
        _ notification: PushNotification, runAt: Date, idempotencyWindow: Duration
    ) async throws -> (notification: PushNotification, created: Bool) {
        try await insertNotification(notification, runAt: runAt, idempotencyWindow: idempotencyWindow, lease: nil)
    }
}

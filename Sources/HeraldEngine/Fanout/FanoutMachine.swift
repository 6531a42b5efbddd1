import Foundation
import HeraldCore

/// The decisions of one claimed job's work, with no I/O and no clock: what the job does next
/// (read, send, commit, release, close, cut into ranges, expire) given what the last step found.
/// The dispatcher carries each ``Action`` out and feeds what it found back as an ``Event``;
/// the time comes in with the events.
///
/// A notification's job sends its target page by page in keyset order (a target larger than a
/// range is cut into ranges first, each worked by a job of its own), then works what its pages
/// left pending (retries, local push times, devices offline or confirming on a direct channel)
/// as it falls due, and closes the notification with a final status when nothing waits. An
/// expired notification counts what waits and the rest of its target as expired and closes.
struct FanoutMachine {
    /// The engine's settings the decisions use.
    struct Settings: Equatable, Sendable {
        /// Recipients per range (``EngineConfiguration/rangeSize``); 0: never cut.
        var rangeSize: Int
        /// How long a lease (a commit renews it) holds a job.
        var lease: TimeInterval
    }

    /// What the dispatcher does next; after each (but the last of a job) it feeds the machine
    /// the ``Event`` its comment names.
    enum Action: Equatable, Sendable {
        /// Read the notification → ``Event/notificationRead(_:)``.
        case readNotification(id: String)
        /// Read a range of the notification → ``Event/rangeRead(_:)``.
        case readRange(notificationID: String, index: Int)
        /// Read the notification's cursor → ``Event/cursorRead(_:now:)``.
        case readCursor
        /// Read the notification's last stored range → ``Event/lastRangeRead(_:)``.
        case readLastRange
        /// Read where the range after `after` ends → ``Event/rangeEndRead(_:now:)``.
        case readRangeEnd(after: String?)
        /// Store a range and its job, renewing the notification job's lease to `lockedUntil` and
        /// moving it to `waitUntil`; wake the workers when it is stored → ``Event/rangeAdded(_:)``.
        case addRange(FanoutRange, now: Date, lockedUntil: Date, waitUntil: Date)
        /// Read a batch of the target (with the recipients' preferences when the notification
        /// respects them) → ``Event/batchRead(exhausted:)``.
        case readBatch(after: String?, through: String?)
        /// Send the batch just read, the whole target → ``Event/onlyBatchSent(_:leftPending:)``.
        case sendOnlyBatch
        /// Commit the page of the batch just sent → ``Event/pageCommitted(_:)``.
        case commitPage
        /// Send the target from the batch just read on, pipelined, each page committed in turn; a
        /// range's last page finishes the job → ``Event/targetSent(_:now:)``.
        case sendTarget(range: FanoutRange?)
        /// Send a page of the pending deliveries due now and commit it → ``Event/pendingSent(_:)``.
        case sendDuePending
        /// Read when the next pending delivery is due → ``Event/nextPendingRead(_:now:)``.
        case readNextPending
        /// Release the job until `runAt` unless the notification's ranges are all done →
        /// ``Event/releasedWhileRanging(_:)``.
        case releaseWhileRanging(runAt: Date)
        /// Release the job until `runAt` → ``Event/released``.
        case release(runAt: Date)
        /// Read whether a pending delivery of the notification is due now, as the store compares
        /// times (a settlement written while the job was held) → ``Event/dueRead(_:)``.
        case readDue
        /// Make the notification's job due now and wake the workers → ``Event/madeDue``.
        case makeDue
        /// Read the notification's counts as its pages committed them → ``Event/countsRead(_:)``.
        case readCounts
        /// Set the final status and finish the job in one commit (with the page just sent when
        /// `withPage`) → ``Event/closed(_:)``.
        case close(NotificationStatus, counts: NotificationCounts, withPage: Bool)
        /// Count a page of the pending deliveries as expired at `at` → ``Event/waitingExpired(_:)``.
        case expireWaiting(at: Date)
        /// Count the target's page after `after` as expired → ``Event/pageExpired(committed:cursor:)``.
        case expirePage(after: String?)
        /// Close the notification as expired at `at` and finish the job → ``Event/closed(_:)``.
        case closeExpired(at: Date)
        /// Run the registry's clean-up (it releases or finishes its job). The last action.
        case runCleanup
        /// Log a job of an unknown kind and finish it. The last action.
        case discard(unknownKind: String)
        /// Finish the job: nothing (more) to do. The last action.
        case finish
        /// Log that another worker has the job. The last action.
        case lockLost
        /// Log the ranges the notification was cut into. The last action.
        case rangesCut(count: Int)
        /// Nothing more: the job was released, finished or closed. The last action.
        case stop
    }

    /// What the action before found.
    enum Event: Equatable, Sendable {
        /// The job was claimed: `handed` is its notification when this node's intake handed it
        /// over in memory (new: nothing of it ran), and `firstExhausted` whether its first batch,
        /// already read, is the whole target (nil: not read).
        case claimed(handed: PushNotification?, firstExhausted: Bool?)
        case notificationRead(PushNotification?)
        case rangeRead(FanoutRange?)
        case cursorRead(String?, now: Date)
        case lastRangeRead(FanoutRange?)
        case rangeEndRead(String?, now: Date)
        /// Whether the range was stored (false: the job's lock is lost).
        case rangeAdded(Bool)
        case batchRead(exhausted: Bool)
        case onlyBatchSent(NotificationCounts, leftPending: Bool)
        /// Whether the page committed (false: the job's lock is lost).
        case pageCommitted(Bool)
        case targetSent(TargetOutcome, now: Date)
        case pendingSent(PageOutcome)
        case nextPendingRead(Date?, now: Date)
        /// Whether a pending delivery is due now.
        case dueRead(Bool)
        /// Whether the job was released (false: every range is done).
        case releasedWhileRanging(Bool)
        case released
        case madeDue
        case countsRead(NotificationCounts?)
        /// Whether the closing commit committed (false: the job's lock is lost).
        case closed(Bool)
        case waitingExpired(PageOutcome)
        /// Whether the page committed, and the cursor it committed.
        case pageExpired(committed: Bool, cursor: String?)
    }

    /// How sending a target ended.
    enum TargetOutcome: Equatable, Sendable {
        /// Every page committed: their counts, and whether any left deliveries pending.
        case sent(NotificationCounts, leftPending: Bool)
        /// The worker is stopping: the pages in flight committed, the rest were not sent.
        case stopped
        /// A page did not commit: another worker has the job.
        case lockLost
    }

    /// How a page of pending deliveries ended.
    enum PageOutcome: Equatable, Sendable {
        /// Nothing was due.
        case nothingDue
        case committed
        /// The page did not commit: another worker has the job.
        case lockLost
    }

    /// What the job sends.
    private enum Work: Equatable {
        /// A notification's target from its start.
        case new
        /// A notification's target from its cursor on.
        case resumed
        /// One range of a notification's target.
        case range(FanoutRange)
    }

    private enum State: Equatable {
        case claimed
        case readingNotification(rangeIndex: Int?)
        case readingRange
        case readingCursor
        case readingLastRange
        /// Cutting ranges: reading where the range at `index` (after `after`) ends.
        case findingRangeEnd(index: Int, after: String?)
        /// A new fan-out larger than a batch: reading whether it is larger than a range.
        case measuring
        case addingRange(FanoutRange)
        case readingBatch(Work)
        case sendingOnlyBatch
        case committingOnlyBatch
        case sendingTarget(Work)
        case sendingPending(ranged: Bool)
        case readingNextPending(ranged: Bool)
        case releasingWhileRanging(next: Date?)
        case releasing(thenMakeDue: Bool)
        /// Released: reading whether a pending delivery is due already (a settlement written meanwhile).
        case checkingDue
        case makingDue
        case readingCounts
        case closing
        case expiringWaiting(FanoutCursor, at: Date)
        case expiringRelease(at: Date)
        case expiringPages(at: Date)
        case closingExpired
        case ended
    }

    /// The job worked.
    let job: Job
    let settings: Settings
    /// The job's notification, once read (or handed over).
    private(set) var notification: PushNotification?
    private var state = State.claimed

    /// A machine for a claimed job.
    init(job: Job, settings: Settings) {
        self.job = job
        self.settings = settings
    }

    /// Whether the machine has returned its last action.
    var isEnded: Bool { state == .ended }

    /// The worker is stopping: at a step between pages (storing a range, a page of pending
    /// deliveries) the job is released now for the next worker; nil elsewhere (the step in hand
    /// goes on; sending a target stops by itself and reports ``TargetOutcome/stopped``).
    mutating func stopping(now: Date) -> Action? {
        switch state {
        case .addingRange, .sendingPending:
            state = .releasing(thenMakeDue: false)
            return .release(runAt: now)
        default: return nil
        }
    }

    /// The action after an event.
    mutating func next(_ event: Event) -> Action {
        switch (state, event) {
        case (.claimed, .claimed(let handed, let firstExhausted)):
            return claimed(handed: handed, firstExhausted: firstExhausted)

        case (.readingNotification(let rangeIndex), .notificationRead(let read)):
            guard let read, !read.status.isFinal else { return end(.finish) }
            notification = read
            if let rangeIndex {
                state = .readingRange
                return .readRange(notificationID: read.id, index: rangeIndex)
            }
            state = .readingCursor
            return .readCursor

        case (.readingRange, .rangeRead(let range)):
            guard let range, FanoutCursor(stored: range.cursor) != .done else { return end(.finish) }
            state = .readingBatch(.range(range))
            return .readBatch(after: range.cursor ?? range.after, through: range.through)

        case (.readingCursor, .cursorRead(let stored, let now)):
            return cursorRead(FanoutCursor(stored: stored), now: now)

        case (.readingLastRange, .lastRangeRead(let last)):
            // Cut on after the last range stored (an expired notification too: its ranges count
            // their recipients expired).
            state = .findingRangeEnd(index: (last?.index ?? -1) + 1, after: last?.through)
            return .readRangeEnd(after: last?.through)

        case (.findingRangeEnd(let index, let after), .rangeEndRead(let through, let now)):
            return addRange(index: index, after: after, through: through, now: now)

        case (.measuring, .rangeEndRead(let through, let now)):
            guard through != nil else {
                state = .sendingTarget(.new)
                return .sendTarget(range: nil)
            }
            return addRange(index: 0, after: nil, through: through, now: now)

        case (.addingRange(let range), .rangeAdded(let stored)):
            guard stored else { return end(.lockLost) }
            guard let through = range.through else { return end(.rangesCut(count: range.index + 1)) }
            state = .findingRangeEnd(index: range.index + 1, after: through)
            return .readRangeEnd(after: through)

        case (.readingBatch(let work), .batchRead(let exhausted)):
            return batchRead(work, exhausted: exhausted)

        case (.sendingOnlyBatch, .onlyBatchSent(let counts, let leftPending)):
            guard leftPending else { return close(counts: total(counts), withPage: true) }
            state = .committingOnlyBatch
            return .commitPage

        case (.committingOnlyBatch, .pageCommitted(let committed)):
            guard committed else { return end(.lockLost) }
            return sendPending(ranged: false)

        case (.sendingTarget(let work), .targetSent(let outcome, let now)):
            return targetSent(work, outcome, now: now)

        case (.sendingPending(let ranged), .pendingSent(let outcome)):
            switch outcome {
            case .committed: return .sendDuePending
            case .lockLost: return end(.lockLost)
            case .nothingDue:
                state = .readingNextPending(ranged: ranged)
                return .readNextPending
            }

        case (.readingNextPending(let ranged), .nextPendingRead(let next, let now)):
            guard ranged else { return afterPending(next: next) }
            // The ranges' last commit makes the job due; until then it waits at most a lease (or
            // until the notification expires), and for its own next pending delivery.
            let wait = next.map { min($0, rangesWait(now: now)) } ?? rangesWait(now: now)
            state = .releasingWhileRanging(next: next)
            return .releaseWhileRanging(runAt: wait)

        case (.releasingWhileRanging(let next), .releasedWhileRanging(let released)):
            guard released else { return afterPending(next: next) }
            state = .checkingDue
            return .readDue

        case (.releasing(let thenMakeDue), .released):
            guard thenMakeDue else { return end(.stop) }
            state = .checkingDue
            return .readDue

        case (.checkingDue, .dueRead(let due)):
            // A direct channel's confirmation settled while the job was held: its delivery is due
            // now, and the release just made may have put the job back to the window's end. The
            // store says whether it is due, not a time read back from it: a stored time can read
            // back a rounding later than the instant written (SQLite's seconds since 1970 as a
            // double, PostgreSQL's microseconds), so a settlement stamped with the clock's now
            // could compare later than that same now and leave the job waiting for the window.
            guard due else { return end(.stop) }
            state = .makingDue
            return .makeDue

        case (.makingDue, .madeDue): return end(.stop)

        case (.readingCounts, .countsRead(let counts)):
            return close(counts: counts ?? notification?.counts ?? NotificationCounts(), withPage: false)

        case (.closing, .closed(let committed)): return end(committed ? .stop : .lockLost)

        case (.expiringWaiting(let cursor, let at), .waitingExpired(let outcome)):
            switch outcome {
            case .committed: return .expireWaiting(at: at)
            case .lockLost: return end(.stop)
            case .nothingDue:
                guard cursor != .ranged else {
                    // The ranges count their own recipients expired; the last one makes the job due.
                    state = .expiringRelease(at: at)
                    return .releaseWhileRanging(runAt: at.addingTimeInterval(settings.lease))
                }
                return expirePages(after: cursor, at: at)
            }

        case (.expiringRelease(let at), .releasedWhileRanging(let released)):
            guard !released else { return end(.stop) }
            state = .closingExpired
            return .closeExpired(at: at)

        case (.expiringPages(let at), .pageExpired(let committed, let cursor)):
            guard committed else { return end(.stop) }
            return expirePages(after: FanoutCursor(stored: cursor), at: at)

        case (.closingExpired, .closed): return end(.stop)

        default:
            preconditionFailure("fan-out event \(event) in state \(state)")
        }
    }

    private mutating func claimed(handed: PushNotification?, firstExhausted: Bool?) -> Action {
        switch job.kind {
        case .notification:
            guard let handed else {
                state = .readingNotification(rangeIndex: nil)
                return .readNotification(id: job.reference)
            }
            notification = handed
            if let firstExhausted { return batchRead(.new, exhausted: firstExhausted) }
            state = .readingBatch(.new)
            return .readBatch(after: nil, through: nil)
        case .range:
            guard let (notificationID, index) = FanoutRange.parse(jobReference: job.reference) else {
                return end(.finish)
            }
            state = .readingNotification(rangeIndex: index)
            return .readNotification(id: notificationID)
        case .cleanup: return end(.runCleanup)
        case .unknown(let kind): return end(.discard(unknownKind: kind))
        }
    }

    private mutating func cursorRead(_ cursor: FanoutCursor, now: Date) -> Action {
        if cursor == .ranging {
            state = .readingLastRange
            return .readLastRange
        }
        if let expiresAt = notification?.expiresAt, now >= expiresAt {
            state = .expiringWaiting(cursor, at: now)
            return .expireWaiting(at: now)
        }
        switch cursor {
        case .start, .ranging:
            state = .readingBatch(.new)
            return .readBatch(after: nil, through: nil)
        case .after(let key):
            state = .readingBatch(.resumed)
            return .readBatch(after: key, through: nil)
        case .done: return sendPending(ranged: false)
        case .ranged: return sendPending(ranged: true)
        }
    }

    private mutating func batchRead(_ work: Work, exhausted: Bool) -> Action {
        switch work {
        case .new where exhausted:
            // The one-user case: sent and closed in one commit.
            state = .sendingOnlyBatch
            return .sendOnlyBatch
        case .new where settings.rangeSize > 0 && !(notification?.target.isRawTokens ?? true):
            // A target of installations larger than a range is cut into ranges, for every node's workers.
            state = .measuring
            return .readRangeEnd(after: nil)
        case .new, .resumed:
            state = .sendingTarget(work)
            return .sendTarget(range: nil)
        case .range(let range):
            state = .sendingTarget(work)
            return .sendTarget(range: range)
        }
    }

    private mutating func addRange(index: Int, after: String?, through: String?, now: Date) -> Action {
        let range = FanoutRange(
            notificationID: notification?.id ?? job.reference, index: index, after: after, through: through)
        state = .addingRange(range)
        return .addRange(
            range, now: now, lockedUntil: now.addingTimeInterval(settings.lease), waitUntil: rangesWait(now: now))
    }

    private mutating func targetSent(_ work: Work, _ outcome: TargetOutcome, now: Date) -> Action {
        switch outcome {
        case .stopped:
            state = .releasing(thenMakeDue: false)
            return .release(runAt: now)
        case .lockLost: return end(.stop)
        case .sent(let counts, let leftPending):
            switch work {
            case .range: return end(.stop)
            case .resumed: return sendPending(ranged: false)
            case .new:
                // Nothing pending: the counts are what the pages counted, no need to read them back.
                return leftPending ? sendPending(ranged: false) : close(counts: total(counts), withPage: false)
            }
        }
    }

    private mutating func sendPending(ranged: Bool) -> Action {
        state = .sendingPending(ranged: ranged)
        return .sendDuePending
    }

    /// Nothing pending is due: wait for the next (or until expiry, to close the books), or close.
    private mutating func afterPending(next: Date?) -> Action {
        guard let next else {
            state = .readingCounts
            return .readCounts
        }
        state = .releasing(thenMakeDue: true)
        return .release(runAt: notification?.expiresAt.map { min($0, next) } ?? next)
    }

    private mutating func close(counts: NotificationCounts, withPage: Bool) -> Action {
        state = .closing
        return .close(Self.finalStatus(counts), counts: counts, withPage: withPage)
    }

    private mutating func expirePages(after cursor: FanoutCursor, at: Date) -> Action {
        guard cursor != .done, cursor != .ranged else {
            state = .closingExpired
            return .closeExpired(at: at)
        }
        state = .expiringPages(at: at)
        return .expirePage(after: cursor.stored)
    }

    private mutating func end(_ action: Action) -> Action {
        state = .ended
        return action
    }

    /// The notification's counts with a send's added.
    private func total(_ sent: NotificationCounts) -> NotificationCounts {
        var counts = notification?.counts ?? NotificationCounts()
        counts.add(sent)
        return counts
    }

    /// Until when a notification's job waits for its ranges: the commit that finishes the last one
    /// makes it due, so this is only the latest it looks (a lease), or its expiry.
    private func rangesWait(now: Date) -> Date {
        let wait = now.addingTimeInterval(settings.lease)
        return notification?.expiresAt.map { min($0, wait) } ?? wait
    }

    /// A closed notification's status: failed when it sent nothing and something failed, expired
    /// when it sent nothing and something expired, done otherwise.
    static func finalStatus(_ counts: NotificationCounts) -> NotificationStatus {
        switch (counts.sent, counts.failed, counts.skippedExpired) {
        case (0, 1..., _): .failed
        case (0, 0, 1...): .expired
        default: .done
        }
    }
}

extension NotificationTarget {
    /// Whether the audience is raw tokens: read from the notification itself, no installations to cut.
    fileprivate var isRawTokens: Bool {
        if case .tokens = audience { return true }
        return false
    }
}

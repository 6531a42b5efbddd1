import Foundation
import HeraldCore
import Testing

@testable import HeraldEngine

/// The fan-out's decisions without I/O: each event in each state, and the action that follows.
@Suite("Fan-out state machine")
struct FanoutMachineTests {
    typealias Machine = FanoutMachine
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let lease: TimeInterval = 60

    static func at(_ seconds: TimeInterval) -> Date { start.addingTimeInterval(seconds) }

    static func notification(
        _ audience: NotificationTarget.Audience = .all, expiresAt: Date? = nil, counts: NotificationCounts = .init(),
        status: NotificationStatus = .queued
    ) -> PushNotification {
        PushNotification(
            id: "n-1", appID: "app", target: NotificationTarget(audience: audience),
            payload: NotificationPayload(title: "Hi"), expiresAt: expiresAt, status: status, counts: counts,
            createdAt: start)
    }

    static func machine(_ kind: JobKind = .notification, reference: String = "n-1", rangeSize: Int = 0) -> Machine {
        Machine(
            job: Job(id: 7, kind: kind, reference: reference, attempts: 1),
            settings: .init(rangeSize: rangeSize, lease: lease))
    }

    /// A machine of a notification's job claimed through the store, fed up to its cursor.
    static func claimed(
        _ notification: PushNotification = notification(), cursor: String?, now: Date = start, rangeSize: Int = 0
    ) -> (Machine, Machine.Action) {
        var machine = Self.machine(rangeSize: rangeSize)
        #expect(machine.next(.claimed(handed: nil, firstExhausted: nil)) == .readNotification(id: "n-1"))
        #expect(machine.next(.notificationRead(notification)) == .readCursor)
        let action = machine.next(.cursorRead(cursor, now: now))
        return (machine, action)
    }

    static func counts(sent: Int = 0, failed: Int = 0, expired: Int = 0) -> NotificationCounts {
        var counts = NotificationCounts()
        counts.sent = sent
        counts.failed = failed
        counts.skippedExpired = expired
        return counts
    }

    // MARK: - Job kinds

    @Test("a job of a kind this version does not know is discarded (logged and finished), with its stored name")
    func unknownKind() {
        var machine = Self.machine(.unknown("retired"))
        #expect(machine.next(.claimed(handed: nil, firstExhausted: nil)) == .discard(unknownKind: "retired"))
        #expect(machine.isEnded)
    }

    @Test("the clean-up job runs the clean-up, whatever it was handed")
    func cleanup() {
        var machine = Self.machine(.cleanup, reference: "registry")
        #expect(machine.next(.claimed(handed: Self.notification(), firstExhausted: true)) == .runCleanup)
        #expect(machine.isEnded)
    }

    @Test("job kinds keep their stored names; a name this version does not know is carried")
    func jobKindNames() {
        for kind in [JobKind.notification, .range, .cleanup] { #expect(JobKind(rawValue: kind.rawValue) == kind) }
        #expect([JobKind.notification, .range, .cleanup].map(\.rawValue) == ["notification", "range", "cleanup"])
        #expect(JobKind(rawValue: "sweep") == .unknown("sweep"))
        #expect(JobKind.unknown("sweep").rawValue == "sweep")
    }

    // MARK: - A new notification

    @Test("a handed notification of one page is sent and closed in one commit")
    func onePage() {
        var machine = Self.machine()
        #expect(
            machine.next(.claimed(handed: Self.notification(), firstExhausted: nil))
                == .readBatch(after: nil, through: nil))
        #expect(machine.next(.batchRead(exhausted: true)) == .sendOnlyBatch)
        let sent = Self.counts(sent: 1)
        #expect(machine.next(.onlyBatchSent(sent, leftPending: false)) == .close(.done, counts: sent, withPage: true))
        #expect(machine.next(.closed(true)) == .stop)
        #expect(machine.isEnded)
    }

    @Test("a handed notification whose first batch was read with others' goes straight to sending it")
    func handedWithFirstBatch() {
        var machine = Self.machine()
        #expect(machine.next(.claimed(handed: Self.notification(), firstExhausted: true)) == .sendOnlyBatch)
        var other = Self.machine()
        #expect(other.next(.claimed(handed: Self.notification(), firstExhausted: false)) == .sendTarget(range: nil))
    }

    @Test("one page that leaves a retry: the page commits, then the job waits for the retry and looks again")
    func onePageWithRetry() {
        var machine = Self.machine()
        #expect(machine.next(.claimed(handed: Self.notification(), firstExhausted: true)) == .sendOnlyBatch)
        #expect(machine.next(.onlyBatchSent(Self.counts(), leftPending: true)) == .commitPage)
        #expect(machine.next(.pageCommitted(true)) == .sendDuePending)
        #expect(machine.next(.pendingSent(.nothingDue)) == .readNextPending)
        #expect(machine.next(.nextPendingRead(Self.at(30), now: Self.at(1))) == .release(runAt: Self.at(30)))
        // After the release: nothing settled meanwhile, the job sleeps until the retry.
        #expect(machine.next(.released) == .readDue)
        #expect(machine.next(.dueRead(false)) == .stop)
        #expect(machine.isEnded)
    }

    @Test("a direct channel's confirmation settled while the job was held makes the job due again")
    func settledDuringRelease() {
        var machine = Self.machine()
        _ = machine.next(.claimed(handed: Self.notification(), firstExhausted: true))
        _ = machine.next(.onlyBatchSent(Self.counts(), leftPending: true))
        _ = machine.next(.pageCommitted(true))
        _ = machine.next(.pendingSent(.nothingDue))
        // Waiting for the confirm window's end…
        #expect(machine.next(.nextPendingRead(Self.at(10), now: Self.at(1))) == .release(runAt: Self.at(10)))
        // …but the confirmation came in: its settlement is due now (the store says so).
        #expect(machine.next(.released) == .readDue)
        #expect(machine.next(.dueRead(true)) == .makeDue)
        #expect(machine.next(.madeDue) == .stop)
    }

    @Test("many pages: sent pipelined and closed with the counts the pages committed")
    func manyPages() {
        var (machine, action) = Self.claimed(Self.notification(counts: Self.counts(sent: 2)), cursor: nil)
        #expect(action == .readBatch(after: nil, through: nil))
        #expect(machine.next(.batchRead(exhausted: false)) == .sendTarget(range: nil))
        let outcome = Machine.TargetOutcome.sent(Self.counts(sent: 3, failed: 1), leftPending: false)
        #expect(
            machine.next(.targetSent(outcome, now: Self.at(5)))
                == .close(.done, counts: Self.counts(sent: 5, failed: 1), withPage: false))
        #expect(machine.next(.closed(true)) == .stop)
    }

    @Test("many pages that leave retries: what is due is worked page by page, then the counts are read and closed")
    func manyPagesWithRetries() {
        var (machine, _) = Self.claimed(cursor: nil)
        _ = machine.next(.batchRead(exhausted: false))
        let outcome = Machine.TargetOutcome.sent(Self.counts(sent: 3), leftPending: true)
        #expect(machine.next(.targetSent(outcome, now: Self.at(5))) == .sendDuePending)
        #expect(machine.next(.pendingSent(.committed)) == .sendDuePending)
        #expect(machine.next(.pendingSent(.nothingDue)) == .readNextPending)
        #expect(machine.next(.nextPendingRead(nil, now: Self.at(6))) == .readCounts)
        let stored = Self.counts(sent: 4)
        #expect(machine.next(.countsRead(stored)) == .close(.done, counts: stored, withPage: false))
    }

    @Test("the next retry after the notification expires: the job wakes at expiry to close the books")
    func retryAfterExpiry() {
        var (machine, _) = Self.claimed(Self.notification(expiresAt: Self.at(100)), cursor: "done")
        #expect(machine.next(.pendingSent(.nothingDue)) == .readNextPending)
        #expect(machine.next(.nextPendingRead(Self.at(500), now: Self.at(1))) == .release(runAt: Self.at(100)))
    }

    @Test("final statuses: failed when nothing was sent and something failed, expired when it expired, done else")
    func finalStatus() {
        #expect(Machine.finalStatus(Self.counts(sent: 1, failed: 3)) == .done)
        #expect(Machine.finalStatus(Self.counts(failed: 1, expired: 2)) == .failed)
        #expect(Machine.finalStatus(Self.counts(expired: 2)) == .expired)
        #expect(Machine.finalStatus(Self.counts()) == .done)
    }

    // MARK: - Ranges

    @Test("a target larger than a range is cut into ranges, each stored with a job; the last is open-ended")
    func rangedCut() {
        var (machine, _) = Self.claimed(cursor: nil, rangeSize: 100)
        #expect(machine.next(.batchRead(exhausted: false)) == .readRangeEnd(after: nil))
        let first = FanoutRange(notificationID: "n-1", index: 0, after: nil, through: "k100")
        #expect(
            machine.next(.rangeEndRead("k100", now: Self.at(1)))
                == .addRange(first, now: Self.at(1), lockedUntil: Self.at(61), waitUntil: Self.at(61)))
        #expect(machine.next(.rangeAdded(true)) == .readRangeEnd(after: "k100"))
        let last = FanoutRange(notificationID: "n-1", index: 1, after: "k100", through: nil)
        #expect(
            machine.next(.rangeEndRead(nil, now: Self.at(2)))
                == .addRange(last, now: Self.at(2), lockedUntil: Self.at(62), waitUntil: Self.at(62)))
        #expect(machine.next(.rangeAdded(true)) == .rangesCut(count: 2))
        #expect(machine.isEnded)
    }

    @Test("a target within a range is not cut; raw tokens never are")
    func notCut() {
        var (machine, _) = Self.claimed(cursor: nil, rangeSize: 100)
        _ = machine.next(.batchRead(exhausted: false))
        #expect(machine.next(.rangeEndRead(nil, now: Self.at(1))) == .sendTarget(range: nil))
        let tokens = NotificationTarget.RawToken(token: "t", service: .apns, environment: .production, platform: .ios)
        var (raw, _) = Self.claimed(Self.notification(.tokens([tokens])), cursor: nil, rangeSize: 100)
        #expect(raw.next(.batchRead(exhausted: false)) == .sendTarget(range: nil))
    }

    @Test("a notification that expires before a lease ends waits for its ranges until its expiry")
    func rangesWaitUntilExpiry() {
        var (machine, _) = Self.claimed(Self.notification(expiresAt: Self.at(30)), cursor: nil, rangeSize: 100)
        _ = machine.next(.batchRead(exhausted: false))
        let first = FanoutRange(notificationID: "n-1", index: 0, after: nil, through: "k100")
        #expect(
            machine.next(.rangeEndRead("k100", now: Self.at(1)))
                == .addRange(first, now: Self.at(1), lockedUntil: Self.at(61), waitUntil: Self.at(30)))
    }

    @Test("a cut interrupted by a crash goes on after the last range stored (also when expired)")
    func resumedCut() {
        let expired = Self.notification(expiresAt: Self.at(-1))
        var (machine, action) = Self.claimed(expired, cursor: FanoutRange.ranging)
        #expect(action == .readLastRange)
        let stored = FanoutRange(notificationID: "n-1", index: 1, after: "k100", through: "k200")
        #expect(machine.next(.lastRangeRead(stored)) == .readRangeEnd(after: "k200"))
        let next = FanoutRange(notificationID: "n-1", index: 2, after: "k200", through: nil)
        #expect(
            machine.next(.rangeEndRead(nil, now: Self.at(1)))
                == .addRange(next, now: Self.at(1), lockedUntil: Self.at(61), waitUntil: Self.at(-1)))
        var (fresh, _) = Self.claimed(cursor: FanoutRange.ranging)
        #expect(fresh.next(.lastRangeRead(nil)) == .readRangeEnd(after: nil))
    }

    @Test("a range's job sends its range from its cursor to its end; its last page finishes it")
    func rangeJob() {
        var machine = Self.machine(.range, reference: "n-1#3")
        #expect(machine.next(.claimed(handed: nil, firstExhausted: nil)) == .readNotification(id: "n-1"))
        #expect(machine.next(.notificationRead(Self.notification())) == .readRange(notificationID: "n-1", index: 3))
        let range = FanoutRange(notificationID: "n-1", index: 3, after: "k300", through: "k400", cursor: "k350")
        #expect(machine.next(.rangeRead(range)) == .readBatch(after: "k350", through: "k400"))
        #expect(machine.next(.batchRead(exhausted: false)) == .sendTarget(range: range))
        let outcome = Machine.TargetOutcome.sent(Self.counts(sent: 50), leftPending: true)
        #expect(machine.next(.targetSent(outcome, now: Self.at(1))) == .stop)
    }

    @Test("a range's job with nothing to do is finished: a bad reference, a final notification, a range gone or done")
    func rangeJobWithNothingToDo() {
        var bad = Self.machine(.range, reference: "n-1")
        #expect(bad.next(.claimed(handed: nil, firstExhausted: nil)) == .finish)
        var final = Self.machine(.range, reference: "n-1#0")
        _ = final.next(.claimed(handed: nil, firstExhausted: nil))
        #expect(final.next(.notificationRead(Self.notification(status: .canceled))) == .finish)
        var gone = Self.machine(.range, reference: "n-1#0")
        _ = gone.next(.claimed(handed: nil, firstExhausted: nil))
        _ = gone.next(.notificationRead(Self.notification()))
        #expect(gone.next(.rangeRead(nil)) == .finish)
        var done = Self.machine(.range, reference: "n-1#0")
        _ = done.next(.claimed(handed: nil, firstExhausted: nil))
        _ = done.next(.notificationRead(Self.notification()))
        let range = FanoutRange(notificationID: "n-1", index: 0, after: nil, through: "k1", cursor: "done")
        #expect(done.next(.rangeRead(range)) == .finish)
        #expect(done.isEnded)
    }

    @Test("a notification cut into ranges works its own pending deliveries, then waits for its ranges")
    func rangedNotificationWaits() {
        var (machine, action) = Self.claimed(cursor: FanoutRange.ranged)
        #expect(action == .sendDuePending)
        #expect(machine.next(.pendingSent(.nothingDue)) == .readNextPending)
        #expect(
            machine.next(.nextPendingRead(Self.at(20), now: Self.at(1))) == .releaseWhileRanging(runAt: Self.at(20)))
        #expect(machine.next(.releasedWhileRanging(true)) == .readDue)
        #expect(machine.next(.dueRead(false)) == .stop)

        // Without pending deliveries it waits a lease at most.
        var (idle, _) = Self.claimed(cursor: FanoutRange.ranged)
        _ = idle.next(.pendingSent(.nothingDue))
        #expect(idle.next(.nextPendingRead(nil, now: Self.at(1))) == .releaseWhileRanging(runAt: Self.at(61)))
    }

    @Test("every range done: the notification's job is not released but closes (or waits for its own retries)")
    func rangesDone() {
        var (machine, _) = Self.claimed(cursor: FanoutRange.ranged)
        _ = machine.next(.pendingSent(.nothingDue))
        _ = machine.next(.nextPendingRead(nil, now: Self.at(1)))
        #expect(machine.next(.releasedWhileRanging(false)) == .readCounts)
        var (retrying, _) = Self.claimed(cursor: FanoutRange.ranged)
        _ = retrying.next(.pendingSent(.nothingDue))
        _ = retrying.next(.nextPendingRead(Self.at(300), now: Self.at(1)))
        #expect(retrying.next(.releasedWhileRanging(false)) == .release(runAt: Self.at(300)))
    }

    // MARK: - Resumed

    @Test("a notification resumed at its cursor sends the rest, then works what is pending")
    func resumed() {
        var (machine, action) = Self.claimed(cursor: "k40")
        #expect(action == .readBatch(after: "k40", through: nil))
        #expect(machine.next(.batchRead(exhausted: true)) == .sendTarget(range: nil))
        let outcome = Machine.TargetOutcome.sent(Self.counts(sent: 3), leftPending: false)
        #expect(machine.next(.targetSent(outcome, now: Self.at(1))) == .sendDuePending)
    }

    @Test("a notification closed already (or gone) finishes its job")
    func finalNotification() {
        var machine = Self.machine()
        _ = machine.next(.claimed(handed: nil, firstExhausted: nil))
        #expect(machine.next(.notificationRead(Self.notification(status: .done))) == .finish)
        var gone = Self.machine()
        _ = gone.next(.claimed(handed: nil, firstExhausted: nil))
        #expect(gone.next(.notificationRead(nil)) == .finish)
    }

    // MARK: - Expiry

    @Test("expiry mid-way: what waits counts as expired, then the rest of the target page by page, then it closes")
    func expiryMidway() {
        var (machine, action) = Self.claimed(Self.notification(expiresAt: Self.at(0)), cursor: "k40", now: Self.at(5))
        #expect(action == .expireWaiting(at: Self.at(5)))
        #expect(machine.next(.waitingExpired(.committed)) == .expireWaiting(at: Self.at(5)))
        #expect(machine.next(.waitingExpired(.nothingDue)) == .expirePage(after: "k40"))
        #expect(machine.next(.pageExpired(committed: true, cursor: "k80")) == .expirePage(after: "k80"))
        #expect(machine.next(.pageExpired(committed: true, cursor: "done")) == .closeExpired(at: Self.at(5)))
        #expect(machine.next(.closed(true)) == .stop)
    }

    @Test("expiry before the first page counts the whole target; after the last, only closes")
    func expiryAtEnds() {
        let expired = Self.notification(expiresAt: Self.at(0))
        var (fresh, _) = Self.claimed(expired, cursor: nil, now: Self.at(0))
        #expect(fresh.next(.waitingExpired(.nothingDue)) == .expirePage(after: nil))
        var (sent, _) = Self.claimed(expired, cursor: "done", now: Self.at(0))
        #expect(sent.next(.waitingExpired(.nothingDue)) == .closeExpired(at: Self.at(0)))
    }

    @Test("an expired notification cut into ranges waits for its ranges, which count their own; then closes")
    func expiryRanged() {
        let expired = Self.notification(expiresAt: Self.at(0))
        var (machine, _) = Self.claimed(expired, cursor: FanoutRange.ranged, now: Self.at(5))
        #expect(machine.next(.waitingExpired(.nothingDue)) == .releaseWhileRanging(runAt: Self.at(65)))
        #expect(machine.next(.releasedWhileRanging(true)) == .stop)
        var (last, _) = Self.claimed(expired, cursor: FanoutRange.ranged, now: Self.at(5))
        _ = last.next(.waitingExpired(.nothingDue))
        #expect(last.next(.releasedWhileRanging(false)) == .closeExpired(at: Self.at(5)))
    }

    @Test("expiry that loses the job's lock stops quietly")
    func expiryLockLost() {
        let expired = Self.notification(expiresAt: Self.at(0))
        var (waiting, _) = Self.claimed(expired, cursor: nil)
        #expect(waiting.next(.waitingExpired(.lockLost)) == .stop)
        var (paging, _) = Self.claimed(expired, cursor: nil)
        _ = paging.next(.waitingExpired(.nothingDue))
        #expect(paging.next(.pageExpired(committed: false, cursor: "k1")) == .stop)
        #expect(paging.isEnded)
    }

    // MARK: - Lease lost and stopping

    @Test("a lost lease ends the job: a range not stored, a page or close not committed")
    func leaseLost() {
        var (cutting, _) = Self.claimed(cursor: FanoutRange.ranging)
        _ = cutting.next(.lastRangeRead(nil))
        _ = cutting.next(.rangeEndRead("k1", now: Self.at(1)))
        #expect(cutting.next(.rangeAdded(false)) == .lockLost)

        var pending = Self.machine()
        _ = pending.next(.claimed(handed: Self.notification(), firstExhausted: true))
        _ = pending.next(.onlyBatchSent(Self.counts(), leftPending: true))
        #expect(pending.next(.pageCommitted(false)) == .lockLost)

        var (retrying, _) = Self.claimed(cursor: "done")
        #expect(retrying.next(.pendingSent(.lockLost)) == .lockLost)

        var (closing, _) = Self.claimed(cursor: "done")
        _ = closing.next(.pendingSent(.nothingDue))
        _ = closing.next(.nextPendingRead(nil, now: Self.at(1)))
        _ = closing.next(.countsRead(nil))
        #expect(closing.next(.closed(false)) == .lockLost)

        // The pipeline's pages log it themselves.
        var (sending, _) = Self.claimed(cursor: nil)
        _ = sending.next(.batchRead(exhausted: false))
        #expect(sending.next(.targetSent(.lockLost, now: Self.at(1))) == .stop)
    }

    @Test("stopping between steps releases the job now: while cutting, while working what is pending")
    func stoppingReleases() {
        var (cutting, _) = Self.claimed(cursor: FanoutRange.ranging)
        _ = cutting.next(.lastRangeRead(nil))
        _ = cutting.next(.rangeEndRead("k1", now: Self.at(1)))
        #expect(cutting.stopping(now: Self.at(2)) == .release(runAt: Self.at(2)))
        #expect(cutting.next(.released) == .stop)

        var (pending, _) = Self.claimed(cursor: "done")
        _ = pending.next(.pendingSent(.committed))
        #expect(pending.stopping(now: Self.at(3)) == .release(runAt: Self.at(3)))
        #expect(pending.next(.released) == .stop)
        #expect(pending.isEnded)
    }

    @Test("stopping elsewhere lets the step in hand go on; a target's send stops by itself and is released")
    func stoppingElsewhere() {
        var (machine, action) = Self.claimed(cursor: nil)
        #expect(action == .readBatch(after: nil, through: nil))
        #expect(machine.stopping(now: Self.at(1)) == nil)
        #expect(machine.next(.batchRead(exhausted: false)) == .sendTarget(range: nil))
        #expect(machine.stopping(now: Self.at(1)) == nil)
        #expect(machine.next(.targetSent(.stopped, now: Self.at(2))) == .release(runAt: Self.at(2)))
        #expect(machine.next(.released) == .stop)
    }

    // MARK: - The cursor

    @Test("cursor texts name their states, and a page's cursor is its last key or done")
    func cursor() {
        let texts: [String?] = [nil, "k1", "done", FanoutRange.ranging, FanoutRange.ranged]
        #expect(texts.map(FanoutCursor.init(stored:)) == [.start, .after("k1"), .done, .ranging, .ranged])
        #expect(texts.map { FanoutCursor(stored: $0).stored } == texts)
        #expect(FanoutCursor(pageLast: "k9", exhausted: false) == .after("k9"))
        #expect(FanoutCursor(pageLast: "k9", exhausted: true) == .done)
        #expect(FanoutCursor(pageLast: nil, exhausted: false) == .done)
    }
}

import Foundation
import HeraldCore
import Logging

// Working a claimed job: the fan-out's decisions are ``FanoutMachine``'s; this carries its
// actions out against the store, the providers and the clock, and feeds back what they found.
extension Dispatcher {
    /// Works one claimed job until it is done, must wait (retries, local times), loses its lock,
    /// or the worker is stopping (then the job is released for the next worker).
    /// - Parameter notification: The job's notification as this node accepted it, for a job handed
    ///   over in memory (new, so nothing of it has run): it is not read back from the store.
    public func process(
        _ job: Job, owner: String, notification: PushNotification? = nil, isStopping: @Sendable () -> Bool
    ) async throws {
        try await process(job, owner: owner, notification: notification, first: nil, isStopping: isStopping)
    }

    /// ``process(_:owner:notification:isStopping:)`` for a handed job whose first batch was read
    /// with other handed jobs' (``firstBatches(of:)``); nil reads it here.
    func process(
        _ job: Job, owner: String, notification: PushNotification?, first: Batch?,
        isStopping: @Sendable () -> Bool
    ) async throws {
        heldJobs.hold(job, owner: owner)
        defer { heldJobs.release(job) }
        var machine = FanoutMachine(
            job: job,
            settings: .init(rangeSize: configuration.rangeSize, lease: configuration.lease.timeInterval))
        var work = FanoutWork(job: job, owner: owner, batch: first ?? Batch())
        var action = machine.next(.claimed(handed: notification, firstExhausted: first?.exhausted))
        while true {
            if isStopping(), let release = machine.stopping(now: now()) { action = release }
            guard
                let event = try await perform(
                    action, notification: machine.notification, work: &work, isStopping: isStopping)
            else { return }
            action = machine.next(event)
        }
    }

    /// What carrying a job's actions out holds between them: the batch read last and the page
    /// sent last.
    struct FanoutWork {
        let job: Job
        let owner: String
        var batch: Batch
        var page: PageCommit?
    }

    /// Carries one action out; returns what it found, nil after the job's last action.
    private func perform(
        _ action: FanoutMachine.Action, notification: PushNotification?, work: inout FanoutWork,
        isStopping: @Sendable () -> Bool
    ) async throws -> FanoutMachine.Event? {
        let (job, owner) = (work.job, work.owner)
        switch action {
        case .readNotification(let id):
            return .notificationRead(try await store.notification(id: id))
        case .readRange(let notificationID, let index):
            return .rangeRead(try await store.fanoutRange(notificationID: notificationID, index: index))
        case .runCleanup:
            try await runCleanup(job, owner: owner)
            return nil
        case .discard(let kind):
            logger.error("unknown job kind", metadata: ["herald.job": "\(kind)"])
            try await store.finishJob(id: job.id, owner: owner)
            return nil
        case .finish:
            try await store.finishJob(id: job.id, owner: owner)
            return nil
        case .lockLost:
            logger.warning(
                "job lock lost; another worker has the notification", metadata: notification?.logMetadata ?? [:])
            return nil
        case .stop:
            return nil
        default: break
        }
        guard let notification else { preconditionFailure("the fan-out's \(action) before its notification") }
        let id = notification.id
        switch action {
        case .readCursor:
            let cursor = try await store.cursor(notificationID: id)
            return .cursorRead(cursor, now: now())
        case .readLastRange:
            return .lastRangeRead(try await store.fanoutRanges(notificationID: id).last)
        case .readRangeEnd(let after):
            let end = try await rangeBoundary(of: notification, after: after)
            return .rangeEndRead(end, now: now())
        case .addRange(let range, let now, let lockedUntil, let waitUntil):
            let stored = try await store.addRange(
                range, jobID: job.id, owner: owner, now: now, lockedUntil: lockedUntil, waitUntil: waitUntil)
            if stored { wake() }
            return .rangeAdded(stored)
        case .rangesCut(let count):
            logger.debug(
                "notification cut into ranges",
                metadata: notification.logMetadata.merging(["herald.ranges": "\(count)"], uniquingKeysWith: { $1 }))
            return nil
        case .readBatch(let after, let through):
            work.batch = try await readBatch(of: notification, after: after, through: through)
            return .batchRead(exhausted: work.batch.exhausted)
        case .sendOnlyBatch:
            let page = try await sendOnlyBatch(work.batch, of: notification, job: job, owner: owner)
            work.page = page
            return .onlyBatchSent(page.counts, leftPending: !page.pending.isEmpty)
        case .commitPage:
            guard var page = work.page else { preconditionFailure("the fan-out commits a page it has not sent") }
            page.lockedUntil = leaseEnd()
            return .pageCommitted(try await commitPage(page, of: notification))
        case .sendTarget(let range):
            let outcome = try await sendTarget(
                of: notification, from: work.batch, job: job, owner: owner, range: range, isStopping: isStopping)
            return .targetSent(outcome, now: now())
        case .sendDuePending:
            return .pendingSent(try await sendDuePending(of: notification, job: job, owner: owner))
        case .readNextPending:
            let next = try await store.nextPending(notificationID: id)
            return .nextPendingRead(next, now: now())
        case .readDue:
            return .dueRead(!(try await store.duePending(notificationID: id, now: now(), limit: 1)).isEmpty)
        case .releaseWhileRanging(let runAt):
            return .releasedWhileRanging(
                try await store.releaseWhileRanging(jobID: job.id, owner: owner, notificationID: id, runAt: runAt))
        case .release(let runAt):
            try await store.releaseJob(id: job.id, owner: owner, runAt: runAt, error: nil)
            return .released
        case .makeDue:
            try await store.scheduleJob(kind: .notification, reference: id, runAt: now())
            wake()
            return .madeDue
        case .readCounts:
            return .countsRead(try await store.notification(id: id)?.counts)
        case .close(let status, let counts, let withPage):
            let page = withPage ? work.page : nil
            return .closed(
                try await close(notification, as: status, counts: counts, job: job, owner: owner, with: page))
        case .expireWaiting(let at):
            return .waitingExpired(try await expireWaiting(of: notification, at: at, job: job, owner: owner))
        case .expirePage(let after):
            let (committed, cursor) = try await expirePage(of: notification, after: after, job: job, owner: owner)
            return .pageExpired(committed: committed, cursor: cursor)
        case .closeExpired(let at):
            return .closed(try await closeExpired(notification, at: at, job: job, owner: owner))
        case .readNotification, .readRange, .runCleanup, .discard, .finish, .lockLost, .stop:
            preconditionFailure("carried out above")
        }
    }

    /// Sends a target that is one batch; the page carries the cursor `done`, to commit (or close
    /// the notification with) next.
    private func sendOnlyBatch(
        _ batch: Batch, of notification: PushNotification, job: Job, owner: String
    ) async throws -> PageCommit {
        var page = PageCommit(jobID: job.id, owner: owner, notificationID: notification.id)
        page.status = .sending
        page.startedAt = now()
        page.counts.targeted = batch.recipients.count
        try await deliver(batch.recipients, of: notification, preferences: batch.preferences, into: &page)
        page.cursor = FanoutCursor.done.stored
        return page
    }

    /// Sends a page of what the notification's pages left pending (retries, local times, offline
    /// devices) that is due now, and commits it.
    private func sendDuePending(
        of notification: PushNotification, job: Job, owner: String
    ) async throws -> FanoutMachine.PageOutcome {
        let due = try await store.duePending(notificationID: notification.id, now: now(), limit: configuration.pageSize)
        guard !due.isEmpty else { return .nothingDue }
        let recipients = try await recipients(for: due, of: notification)
        var commit = PageCommit(jobID: job.id, owner: owner, notificationID: notification.id)
        try await deliver(recipients, of: notification, into: &commit)
        let waitingAgain = Set(commit.pending.map(\.recipient))
        commit.resolvedPending = due.map(\.recipient).filter { !waitingAgain.contains($0) }
        commit.lockedUntil = leaseEnd()
        return try await commitPage(commit, of: notification) ? .committed : .lockLost
    }

    /// Sets the final status and finishes the job, in one transaction (with the last page's
    /// outcomes when `page` is given); false when the job's lock is lost.
    private func close(
        _ notification: PushNotification, as status: NotificationStatus, counts: NotificationCounts, job: Job,
        owner: String, with page: PageCommit?
    ) async throws -> Bool {
        var commit = page ?? PageCommit(jobID: job.id, owner: owner, notificationID: notification.id)
        commit.status = status
        commit.completedAt = now()
        commit.finishesJob = true
        guard try await commitPage(commit, of: notification) else { return false }
        EngineMetrics.finished(appID: notification.appID, status: status)
        // A notification of more than a page (a broadcast, a channel) says so at info; the common one
        // to a user's few devices at debug, as its acceptance does: at info, a request logs one line.
        logger.log(
            level: counts.targeted > configuration.pageSize ? .info : .debug,
            "notification done",
            metadata: notification.logMetadata.merging(
                ["herald.sent": "\(counts.sent)", "herald.failed": "\(counts.failed)"], uniquingKeysWith: { $1 }))
        return true
    }

    /// When a lease taken now ends.
    func leaseEnd() -> Date {
        now().addingTimeInterval(configuration.lease.timeInterval)
    }
}

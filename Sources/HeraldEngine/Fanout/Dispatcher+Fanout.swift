import Foundation
import HeraldCore
import Logging

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
        switch job.kind {
        case .notification:
            if let notification {
                try await fanOutNew(notification, job: job, owner: owner, first: first, isStopping: isStopping)
            } else {
                try await fanOut(job, owner: owner, isStopping: isStopping)
            }
        case .range: try await fanOutRange(job, owner: owner, isStopping: isStopping)
        case .cleanup: try await runCleanup(job, owner: owner)
        case .unknown(let kind):
            logger.error("unknown job kind", metadata: ["herald.job": "\(kind)"])
            try await store.finishJob(id: job.id, owner: owner)
        }
    }

    private func fanOut(_ job: Job, owner: String, isStopping: @Sendable () -> Bool) async throws {
        guard let notification = try await store.notification(id: job.reference), !notification.status.isFinal else {
            return try await store.finishJob(id: job.id, owner: owner)
        }
        let cursor = try await store.cursor(notificationID: notification.id)
        if cursor == FanoutRange.ranging {
            // Cut further (an expired notification too: its ranges count their recipients expired).
            let last = try await store.fanoutRanges(notificationID: notification.id).last
            let next = FanoutRange(
                notificationID: notification.id, index: (last?.index ?? -1) + 1, after: last?.through,
                through: try await rangeBoundary(of: notification, after: last?.through))
            return try await cutIntoRanges(notification, from: next, job: job, owner: owner, isStopping: isStopping)
        }
        if let expiresAt = notification.expiresAt, now() >= expiresAt {
            return try await expire(notification, cursor: cursor, job: job, owner: owner)
        }
        if cursor == nil {
            return try await fanOutNew(notification, job: job, owner: owner, isStopping: isStopping)
        }
        let ranged = cursor == FanoutRange.ranged
        if cursor != "done", !ranged {
            let first = try await readBatch(of: notification, after: cursor)
            guard
                try await sendTarget(
                    of: notification, from: first, job: job, owner: owner, isStopping: isStopping) != nil
            else { return }
        }
        try await finishPending(notification, job: job, owner: owner, ranged: ranged, isStopping: isStopping)
    }

    /// Works one range of a notification (a job of kind `range`), from its cursor to its end; the
    /// range's last page finishes the job.
    private func fanOutRange(_ job: Job, owner: String, isStopping: @Sendable () -> Bool) async throws {
        guard let (notificationID, index) = FanoutRange.parse(jobReference: job.reference),
            let notification = try await store.notification(id: notificationID), !notification.status.isFinal,
            let range = try await store.fanoutRange(notificationID: notificationID, index: index),
            range.cursor != "done"
        else { return try await store.finishJob(id: job.id, owner: owner) }
        let first = try await readBatch(of: notification, after: range.cursor ?? range.after, through: range.through)
        _ = try await sendTarget(
            of: notification, from: first, job: job, owner: owner, range: range, isStopping: isStopping)
    }

    /// Cuts a notification's target into ranges of ``EngineConfiguration/rangeSize`` recipients,
    /// from `first` on, each stored with a job any node's worker claims; the last one (open-ended)
    /// releases the notification's job until its ranges are done.
    private func cutIntoRanges(
        _ notification: PushNotification, from first: FanoutRange, job: Job, owner: String,
        isStopping: @Sendable () -> Bool
    ) async throws {
        var range = first
        while true {
            if isStopping() { return try await store.releaseJob(id: job.id, owner: owner, runAt: now(), error: nil) }
            guard
                try await store.addRange(
                    range, jobID: job.id, owner: owner, now: now(), lockedUntil: leaseEnd(),
                    waitUntil: rangesWait(of: notification))
            else {
                return logger.warning(
                    "job lock lost; another worker has the notification", metadata: notification.logMetadata)
            }
            wake()
            guard let through = range.through else { break }
            range = FanoutRange(
                notificationID: notification.id, index: range.index + 1, after: through,
                through: try await rangeBoundary(of: notification, after: through))
        }
        logger.debug(
            "notification cut into ranges",
            metadata: notification.logMetadata.merging(
                ["herald.ranges": "\(range.index + 1)"], uniquingKeysWith: { $1 }))
    }

    /// Until when a notification's job waits for its ranges: the commit that finishes the last one
    /// makes it due, so this is only the latest it looks (a lease), or its expiry.
    private func rangesWait(of notification: PushNotification) -> Date {
        let wait = leaseEnd()
        return notification.expiresAt.map { min($0, wait) } ?? wait
    }

    /// Where the range of ``EngineConfiguration/rangeSize`` recipients after `after` ends (for
    /// everyone, of the app's installations); nil when the rest is smaller.
    private func rangeBoundary(of notification: PushNotification, after: String?) async throws -> String? {
        try await store.rangeBoundary(
            pageTarget(of: notification).target, appID: notification.appID, after: after,
            skip: configuration.rangeSize)
    }

    /// Works a notification whose fan-out starts now (nothing of it has run). A target of one
    /// batch — the one-user case — is sent and closed in one commit; a larger one is sent batch by
    /// batch and closed after. When its pages leave nothing pending, its counts are what the pages
    /// counted, and it closes without reading the pending table or itself again.
    private func fanOutNew(
        _ notification: PushNotification, job: Job, owner: String, first: Batch? = nil,
        isStopping: @Sendable () -> Bool
    ) async throws {
        let first: Batch = if let first { first } else { try await readBatch(of: notification, after: nil) }
        if first.exhausted {
            return try await sendOnlyBatch(first, of: notification, job: job, owner: owner, isStopping: isStopping)
        }
        // A target of installations larger than a range is cut into ranges, for every node's workers.
        if configuration.rangeSize > 0, !notification.target.isRawTokens,
            let through = try await rangeBoundary(of: notification, after: nil)
        {
            let first = FanoutRange(notificationID: notification.id, index: 0, after: nil, through: through)
            return try await cutIntoRanges(notification, from: first, job: job, owner: owner, isStopping: isStopping)
        }
        guard
            let sent = try await sendTarget(
                of: notification, from: first, job: job, owner: owner, isStopping: isStopping)
        else { return }
        if sent.leftPending {
            return try await finishPending(notification, job: job, owner: owner, isStopping: isStopping)
        }
        var counts = notification.counts
        counts.add(sent.counts)
        try await close(notification, counts: counts, job: job, owner: owner)
    }

    /// Sends a target that is one batch and, when nothing is left pending, closes the notification
    /// and finishes its job in the same commit.
    private func sendOnlyBatch(
        _ batch: Batch, of notification: PushNotification, job: Job, owner: String,
        isStopping: @Sendable () -> Bool
    ) async throws {
        var page = PageCommit(jobID: job.id, owner: owner, notificationID: notification.id)
        page.status = .sending
        page.startedAt = now()
        page.counts.targeted = batch.recipients.count
        try await deliver(batch.recipients, of: notification, preferences: batch.preferences, into: &page)
        page.cursor = "done"
        guard page.pending.isEmpty else {
            page.lockedUntil = leaseEnd()
            guard try await commitPage(page, of: notification) else {
                return logger.warning(
                    "job lock lost; another worker has the notification", metadata: notification.logMetadata)
            }
            return try await finishPending(notification, job: job, owner: owner, isStopping: isStopping)
        }
        var counts = notification.counts
        counts.add(page.counts)
        try await close(notification, counts: counts, job: job, owner: owner, with: page)
    }

    /// Works what the notification's pages left pending (retries, local times, offline devices)
    /// that is due, then waits for the next or closes the notification. A notification cut into
    /// ranges (`ranged`) waits for its ranges first.
    private func finishPending(
        _ notification: PushNotification, job: Job, owner: String, ranged: Bool = false,
        isStopping: @Sendable () -> Bool
    ) async throws {
        let metadata = notification.logMetadata

        while true {
            if isStopping() { return try await store.releaseJob(id: job.id, owner: owner, runAt: now(), error: nil) }
            let due = try await store.duePending(
                notificationID: notification.id, now: now(), limit: configuration.pageSize)
            guard !due.isEmpty else { break }
            let recipients = try await recipients(for: due, of: notification)
            var commit = PageCommit(jobID: job.id, owner: owner, notificationID: notification.id)
            try await deliver(recipients, of: notification, into: &commit)
            let waitingAgain = Set(commit.pending.map(\.recipient))
            commit.resolvedPending = due.map(\.recipient).filter { !waitingAgain.contains($0) }
            commit.lockedUntil = leaseEnd()
            guard try await commitPage(commit, of: notification) else {
                return logger.warning("job lock lost; another worker has the notification", metadata: metadata)
            }
        }

        let next = try await store.nextPending(notificationID: notification.id)
        if ranged {
            let wait = next.map { min($0, rangesWait(of: notification)) } ?? rangesWait(of: notification)
            if try await store.releaseWhileRanging(
                jobID: job.id, owner: owner, notificationID: notification.id, runAt: wait)
            {
                return try await rescheduleIfDue(notification)
            }
        }
        if let next {
            // Wake up for the next retry or local time, or at expiry to close the books.
            let runAt = notification.expiresAt.map { min($0, next) } ?? next
            try await store.releaseJob(id: job.id, owner: owner, runAt: runAt, error: nil)
            return try await rescheduleIfDue(notification)
        }
        let counts = try await store.notification(id: notification.id)?.counts ?? notification.counts
        try await close(notification, counts: counts, job: job, owner: owner)
    }

    /// Makes the notification's job due now when one of its pending deliveries is: a direct
    /// channel's confirmation settled while the job was held moves its delivery and the job to now,
    /// and the release just made may have put the job back to the window's end. Read after the
    /// release, so a settlement written later moves the released job itself.
    private func rescheduleIfDue(_ notification: PushNotification) async throws {
        guard let next = try await store.nextPending(notificationID: notification.id), next <= now() else { return }
        try await store.scheduleJob(kind: .notification, reference: notification.id, runAt: now())
        wake()
    }

    /// Sets the final status from the counts and finishes the job, in one transaction (with the
    /// last page's outcomes when `page` is given).
    private func close(
        _ notification: PushNotification, counts: NotificationCounts, job: Job, owner: String,
        with page: PageCommit? = nil
    )
        async throws
    {
        var commit = page ?? PageCommit(jobID: job.id, owner: owner, notificationID: notification.id)
        let status: NotificationStatus =
            switch (counts.sent, counts.failed, counts.skippedExpired) {
            case (0, 1..., _): .failed
            case (0, 0, 1...): .expired
            default: .done
            }
        commit.status = status
        commit.completedAt = now()
        commit.finishesJob = true
        guard try await commitPage(commit, of: notification) else {
            return logger.warning(
                "job lock lost; another worker has the notification", metadata: notification.logMetadata)
        }
        EngineMetrics.finished(appID: notification.appID, status: status)
        logger.info(
            "notification done",
            metadata: notification.logMetadata.merging(
                ["herald.sent": "\(counts.sent)", "herald.failed": "\(counts.failed)"], uniquingKeysWith: { $1 }))
    }

    /// What pages committed: one page's as its child task reports it, or the sum of a target's.
    private struct PageTally: Sendable {
        /// Whether every page committed (false: the job's lock was lost).
        var committed = true
        var counts = NotificationCounts()
        /// Whether any page left deliveries pending (retries, local push times, offline devices).
        var leftPending = false

        mutating func add(_ page: PageTally) {
            committed = committed && page.committed
            counts.add(page.counts)
            leftPending = leftPending || page.leftPending
        }
    }

    /// Sends the target from the cursor on, batch by batch in keyset order, with
    /// ``EngineConfiguration/pipelineDepth`` batches in flight: the next batch is read while the
    /// current ones are on the connections, and a batch goes out as soon as fewer than that many
    /// are sent and not committed. Each batch (a child task) commits its outcomes, counters and
    /// cursor once its last answer is in and the batch before it has committed, so commits keep
    /// target order and what a crash can send twice (sent, not committed) stays within one page.
    /// - Returns: What the pages committed, or nil when the job was released (stopping) or its
    ///   lock was lost.
    /// - Parameter range: The range of the notification the job works (its pages move the range's
    ///   cursor, and the last finishes the job); nil: the notification's whole target.
    private func sendTarget(
        of notification: PushNotification, from first: Batch, job: Job, owner: String, range: FanoutRange? = nil,
        isStopping: @Sendable () -> Bool
    ) async throws -> PageTally? {
        let sequencer = CommitSequencer()
        return try await withThrowingTaskGroup(of: PageTally.self) { group in
            var launched = 0
            var finished = 0
            var sent = PageTally()
            var lockLost: Bool { !sent.committed }
            /// Waits for the oldest batch in flight and adds what it committed.
            func settle() async throws {
                if let page = try await group.next() { sent.add(page) }
                finished += 1
            }
            var batch = first
            while true {
                if isStopping() {
                    while finished < launched { try await settle() }
                    if lockLost { return nil }
                    try await store.releaseJob(id: job.id, owner: owner, runAt: now(), error: nil)
                    return nil
                }
                // Read the next batch while this one is sent: the database and the network overlap.
                // Reading ahead is safe: the cursor only moves when a batch's commit does. The batch
                // that exhausts the target carries the cursor `done` itself.
                let last = batch.last
                let done = last == nil || batch.exhausted
                async let upcoming = self.readBatch(
                    of: notification, after: last, through: range?.through, exhausted: done)
                while launched - finished >= configuration.pipelineDepth, !lockLost { try await settle() }
                if lockLost {
                    _ = try? await upcoming
                    break
                }
                let (index, recipients, preferences, started) = (launched, batch.recipients, batch.preferences, now())
                let pageCursor = batch.exhausted ? "done" : last ?? "done"
                group.addTask {
                    try await self.sendAndCommit(
                        recipients, preferences: preferences, of: notification, job: job, owner: owner,
                        cursor: pageCursor, range: range?.index, started: started, index: index,
                        sequencer: sequencer)
                }
                launched += 1
                batch = try await upcoming
                if done { break }
            }
            while finished < launched { try await settle() }
            return lockLost ? nil : sent
        }
    }

    /// Sends one batch and, in its turn, commits it; not committed when it did not (an earlier
    /// batch did not, or the job's lock is lost). A batch that fails to send still ends its turn,
    /// so the batches after it do not wait for ever.
    private func sendAndCommit(
        _ recipients: [Recipient], preferences: [String: Preferences]?, of notification: PushNotification, job: Job,
        owner: String, cursor: String, range: Int?, started: Date, index: Int, sequencer: CommitSequencer
    ) async throws -> PageTally {
        var page = PageCommit(jobID: job.id, owner: owner, notificationID: notification.id)
        page.range = range
        do {
            page.status = .sending
            page.startedAt = started
            page.counts.targeted = recipients.count
            try await deliver(recipients, of: notification, preferences: preferences, probe: .never, into: &page)
            page.cursor = cursor
        } catch {
            _ = await sequencer.turn(index)
            await sequencer.finish(index, committed: false)
            throw error
        }
        guard await sequencer.turn(index) else {
            await sequencer.finish(index, committed: false)
            return PageTally(committed: false)
        }
        page.lockedUntil = leaseEnd()
        // A range's last page finishes its job (and, the last range left, makes the notification's due).
        page.finishesJob = range != nil && cursor == "done"
        page.at = now()
        let committed: Bool
        do {
            committed = try await commitPage(page, of: notification)
        } catch {
            await sequencer.finish(index, committed: false)
            throw error
        }
        await sequencer.finish(index, committed: committed)
        if !committed {
            logger.warning("job lock lost; another worker has the notification", metadata: notification.logMetadata)
        }
        return PageTally(committed: committed, counts: page.counts, leftPending: !page.pending.isEmpty)
    }

    private func leaseEnd() -> Date {
        now().addingTimeInterval(configuration.lease.timeInterval)
    }

    /// A batch of the target to send: its recipients, its last key and, when the notification
    /// respects preferences, their stored preferences (read with it, so the batch can go out at once).
    struct Batch: Sendable {
        var recipients: [Recipient] = []
        var last: String?
        var preferences: [String: Preferences]?
        /// Whether the target has nothing after this batch.
        var exhausted = true
    }

    /// The batch after a key (nil: from the start) up to `through` (a range's end; nil: the
    /// target's), or an empty one when it is exhausted.
    func readBatch(
        of notification: PushNotification, after key: String?, through: String? = nil, exhausted: Bool = false
    ) async throws -> Batch {
        guard !exhausted else { return Batch() }
        let page = try await nextPage(of: notification, after: key, through: through)
        let preferences =
            notification.respectPreferences
            ? try await store.preferences(installationIDs: page.recipients.compactMap(\.installationID)) : [:]
        return Batch(recipients: page.recipients, last: page.last, preferences: preferences, exhausted: page.exhausted)
    }

    /// The next page of the target after the cursor, the page's last key (nil: the target is
    /// exhausted), and whether the target ends with this page.
    func nextPage(
        of notification: PushNotification, after cursor: String?, through: String? = nil
    ) async throws -> (recipients: [Recipient], last: String?, exhausted: Bool) {
        if let page = tokenPage(of: notification, after: cursor) { return page }
        let (target, broadcast) = pageTarget(of: notification)
        var page = try await store.resolve(
            target, appID: notification.appID, after: cursor, through: through, limit: configuration.batchSize
        ).map { Recipient($0).routed(by: notification.target) }
        // Keyset pages: a short one is the last.
        let exhausted = page.count < configuration.batchSize
        if cursor == nil, let broadcast { page.insert(broadcast, at: 0) }
        return (page, page.last?.key, exhausted)
    }

    /// The target the store resolves pages of, and the broadcast route's recipient: a broadcast
    /// route takes its service's installations in one send, first (on the first page).
    func pageTarget(of notification: PushNotification) -> (target: NotificationTarget, broadcast: Recipient?) {
        var target = notification.target
        let broadcast = transports(of: notification.appID).broadcastRecipient(for: notification)
        if let broadcast {
            target.services = (target.services ?? Set(PushService.allCases)).subtracting([broadcast.service])
        }
        return (target, broadcast)
    }

    /// The next page of a target of raw tokens (nil for a target of installations): read from the
    /// notification itself, no store.
    func tokenPage(
        of notification: PushNotification, after cursor: String?
    ) -> (recipients: [Recipient], last: String?, exhausted: Bool)? {
        guard case .tokens(let tokens) = notification.target.audience else { return nil }
        let start = cursor.flatMap(Recipient.tokenIndex(of:)).map { $0 + 1 } ?? 0
        guard start < tokens.count else { return ([], nil, true) }
        let end = min(tokens.count, start + configuration.batchSize)
        let recipients = (start..<end).compactMap { index -> Recipient? in
            let token = tokens[index]
            return notification.target.admits(token) ? Recipient(rawToken: token, index: index) : nil
        }
        return (recipients, Recipient.key(tokenIndex: end - 1), end == tokens.count)
    }

    /// The recipients of pending deliveries; deleted or invalidated installations drop out.
    func recipients(for due: [PendingDelivery], of notification: PushNotification) async throws -> [Recipient] {
        var result: [Recipient] = []
        let ids = due.filter { Recipient.tokenIndex(of: $0.recipient) == nil }.map(\.recipient)
        var installations: [String: Installation] = [:]
        for installation in try await store.installations(appID: notification.appID, ids: ids) where installation.valid
        {
            installations[installation.id] = installation
        }
        let tokens: [NotificationTarget.RawToken]
        if case .tokens(let list) = notification.target.audience { tokens = list } else { tokens = [] }
        for pending in due {
            var recipient: Recipient?
            if let broadcast = transports(of: notification.appID).broadcastRecipient(for: notification),
                broadcast.key == pending.recipient
            {
                recipient = broadcast
            } else if let index = Recipient.tokenIndex(of: pending.recipient), index < tokens.count {
                recipient = Recipient(rawToken: tokens[index], index: index)
            } else if let installation = installations[pending.recipient] {
                recipient = Recipient(DeliveryTarget(installation)).routed(by: notification.target)
            }
            if var recipient {
                recipient.attempts = pending.attempts
                // What waited for a direct channel's confirmation comes back with its settlement.
                if pending.reason == .confirming || PendingDelivery.Reason.settlements.contains(pending.reason) {
                    recipient.channelSettlement = pending.reason
                }
                // A delivery tried before (or handed to a direct channel that has not taken or
                // confirmed it) already counted this notification in its installation's badge.
                if pending.attempts > 0 || pending.reason == .offline || recipient.channelSettlement != nil,
                    let installation = recipient.installationID.flatMap({ installations[$0] })
                {
                    recipient.countedBadge = installation.badge
                }
                result.append(recipient)
            }
        }
        return result
    }

    /// Applies expiry, local push time, preferences and provider pauses, sends what is left, and
    /// records every outcome in `commit`.
    /// - Parameters:
    ///   - preferences: the recipients' stored preferences when the caller read them; nil reads them here.
    ///   - probe: Whether the batch may try a provider left unanswered whose pause has ended
    ///     (``ProviderGate/Probe``): not a batch of a fan-out's pipeline.
    private func deliver(
        _ recipients: [Recipient], of notification: PushNotification, preferences: [String: Preferences]? = nil,
        probe: ProviderGate.Probe = .allowed, into commit: inout PageCommit
    )
        async throws
    {
        let now = self.now()
        try await gate.refresh(from: store, now: now)
        let planner = try DeliveryPlanner(notification)
        let recorder = outcomeRecorder(for: notification)
        defer { recorder.tally.emit(appID: notification.appID) }
        let recipients = await recordSettlements(recipients, of: notification, into: &commit, now: now)
        var stored = preferences ?? [:]
        if preferences == nil, notification.respectPreferences {
            stored = try await store.preferences(installationIDs: recipients.compactMap(\.installationID))
        }
        // One admission per provider (a Web Push service) for the whole batch: a probe is the batch's.
        var admissions: [PauseTarget: ProviderGate.Admission] = [:]
        defer {
            for case (let target, .probe(let scope)) in admissions {
                gate.endProbe(appID: notification.appID, service: target.service, scope: scope)
            }
        }
        var outgoing: [OutgoingPush] = []
        for recipient in recipients {
            let pause = PauseTarget(recipient)
            let admission =
                admissions[pause]
                ?? gate.admission(
                    appID: notification.appID, service: pause.service, scope: pause.scope, now: now, probe: probe,
                    base: configuration.unreachablePause.base)
            admissions[pause] = admission
            let plan = planner.plan(
                for: recipient, preferences: recipient.installationID.flatMap { stored[$0] },
                pausedUntil: admission.pausedUntil, now: now)
            guard case .send(let soundEnabled) = plan else {
                recorder.record(plan, of: recipient, into: &commit, now: now)
                continue
            }
            outgoing.append(OutgoingPush(recipient: recipient, badge: nil, soundEnabled: soundEnabled))
        }
        guard !outgoing.isEmpty else { return }

        switch notification.payload.badge {
        case .set(let value)?:
            for index in outgoing.indices { outgoing[index].badge = value }
        case .increment?:
            // Each installation counts a notification once, on its first attempt: a retry sends the
            // badge that attempt stored.
            let first = outgoing.filter { $0.recipient.countedBadge == nil }.compactMap(\.recipient.installationID)
            let badges = first.isEmpty ? [:] : try await store.incrementBadges(installationIDs: first, now: now)
            for index in outgoing.indices {
                let recipient = outgoing[index].recipient
                outgoing[index].badge = recipient.countedBadge ?? recipient.installationID.flatMap { badges[$0] } ?? 1
            }
        case nil: break
        }

        // Devices with a direct channel open — on this node or another — (and direct-only ones) are
        // offered to it first, while the rest go to their providers.
        let (sent, results) = await sendWithChannels(outgoing, of: notification, into: &commit, now: now)
        for pause in record(results, of: sent, recorder: recorder, into: &commit, now: now) {
            do {
                try await store.pauseProvider(
                    appID: pause.appID, service: pause.service, scope: pause.scope, until: pause.until)
            } catch {
                logger.warning(
                    "provider pause not shared",
                    metadata: ["herald.service": "\(pause.service.rawValue)", "error": "\(error)"])
            }
        }
    }

    /// The recorder of a notification's outcomes, with the engine's retry and failure rules.
    func outcomeRecorder(for notification: PushNotification) -> OutcomeRecorder {
        OutcomeRecorder(
            notification: notification, retryPolicy: configuration.retryPolicy, maxFailures: configuration.maxFailures,
            rejectedTokens: configuration.rejectedTokens[notification.appID] ?? .invalidate,
            logsSuccesses: logsSuccesses(appID: notification.appID), random: { Double.random(in: $0) })
    }

}

extension NotificationTarget {
    /// Whether the audience is raw tokens: read from the notification itself, no installations to cut.
    fileprivate var isRawTokens: Bool {
        if case .tokens = audience { return true }
        return false
    }
}

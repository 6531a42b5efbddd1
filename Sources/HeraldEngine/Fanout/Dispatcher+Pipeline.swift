import Foundation
import HeraldCore
import Logging

// Sending a target: batches pipelined, each committed in turn.
extension Dispatcher {
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
    /// - Returns: What the pages committed; or that the worker is stopping (the pages in flight
    ///   committed, the job is not released yet), or that a page did not commit (its lock is lost).
    /// - Parameter range: The range of the notification the job works (its pages move the range's
    ///   cursor, and the last finishes the job); nil: the notification's whole target.
    func sendTarget(
        of notification: PushNotification, from first: Batch, job: Job, owner: String, range: FanoutRange?,
        isStopping: @Sendable () -> Bool
    ) async throws -> FanoutMachine.TargetOutcome {
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
                    return lockLost ? .lockLost : .stopped
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
                let pageCursor = FanoutCursor(pageLast: last, exhausted: batch.exhausted)
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
            return lockLost ? .lockLost : .sent(sent.counts, leftPending: sent.leftPending)
        }
    }

    /// Sends one batch and, in its turn, commits it; not committed when it did not (an earlier
    /// batch did not, or the job's lock is lost). A batch that fails to send still ends its turn,
    /// so the batches after it do not wait for ever.
    private func sendAndCommit(
        _ recipients: [Recipient], preferences: [String: Preferences]?, of notification: PushNotification, job: Job,
        owner: String, cursor: FanoutCursor, range: Int?, started: Date, index: Int, sequencer: CommitSequencer
    ) async throws -> PageTally {
        var page = PageCommit(jobID: job.id, owner: owner, notificationID: notification.id)
        page.range = range
        do {
            page.status = .sending
            page.startedAt = started
            page.counts.targeted = recipients.count
            try await deliver(recipients, of: notification, preferences: preferences, probe: .never, into: &page)
            page.cursor = cursor.stored
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
        page.finishesJob = range != nil && cursor == .done
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
}

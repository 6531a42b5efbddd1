import Foundation
import HeraldCore

// An expired notification: what waits, and the rest of its target, counted as expired
// (``FanoutMachine`` decides the order; a notification cut into ranges waits for its ranges,
// which count theirs).
extension Dispatcher {
    /// Counts a page of the notification's pending deliveries (due or not) as expired at `at`.
    func expireWaiting(
        of notification: PushNotification, at: Date, job: Job, owner: String
    ) async throws -> FanoutMachine.PageOutcome {
        let due = try await store.duePending(
            notificationID: notification.id, now: .distantFuture, limit: configuration.pageSize)
        guard !due.isEmpty else { return .nothingDue }
        var commit = PageCommit(jobID: job.id, owner: owner, notificationID: notification.id)
        commit.resolvedPending = due.map(\.recipient)
        let recorder = outcomeRecorder(for: notification)
        for recipient in try await recipients(for: due, of: notification) {
            recorder.record(.expired, of: recipient, into: &commit, now: at)
        }
        // Every waiting delivery counts, also those whose installation is gone since.
        commit.counts.skippedExpired = due.count
        return try await store.commit(commit) ? .committed : .lockLost
    }

    /// Counts the target's page after `cursor` as expired; whether it committed, and the cursor it
    /// committed.
    func expirePage(
        of notification: PushNotification, after cursor: String?, job: Job, owner: String
    ) async throws -> (committed: Bool, cursor: String?) {
        let (page, last, exhausted) = try await nextPage(of: notification, after: cursor)
        var commit = PageCommit(jobID: job.id, owner: owner, notificationID: notification.id)
        commit.counts.targeted = page.count
        commit.counts.skippedExpired = page.count
        commit.cursor = FanoutCursor(pageLast: last, exhausted: exhausted).stored
        return (try await store.commit(commit), commit.cursor)
    }

    /// Closes the notification as expired at `at` and finishes its job; false when the job's lock
    /// is lost.
    func closeExpired(_ notification: PushNotification, at: Date, job: Job, owner: String) async throws -> Bool {
        var commit = PageCommit(jobID: job.id, owner: owner, notificationID: notification.id)
        commit.status = .expired
        commit.completedAt = at
        commit.finishesJob = true
        guard try await store.commit(commit) else { return false }
        EngineMetrics.finished(appID: notification.appID, status: .expired)
        return true
    }
}

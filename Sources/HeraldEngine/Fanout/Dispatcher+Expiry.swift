import Foundation
import HeraldCore

// An expired notification: what waits, and the rest of its target, counted as expired.
extension Dispatcher {
    /// The notification expired: what waits is counted as expired, the rest of the target too (a
    /// notification cut into ranges waits for its ranges, which count theirs).
    /// - Parameter cursor: The notification's fan-out cursor.
    func expire(_ notification: PushNotification, cursor stored: String?, job: Job, owner: String) async throws {
        let at = now()
        while true {
            let due = try await store.duePending(
                notificationID: notification.id, now: .distantFuture, limit: configuration.pageSize)
            guard !due.isEmpty else { break }
            var commit = PageCommit(jobID: job.id, owner: owner, notificationID: notification.id)
            commit.resolvedPending = due.map(\.recipient)
            let recorder = outcomeRecorder(for: notification)
            for recipient in try await recipients(for: due, of: notification) {
                recorder.record(.expired, of: recipient, into: &commit, now: at)
            }
            // Every waiting delivery counts, also those whose installation is gone since.
            commit.counts.skippedExpired = due.count
            guard try await store.commit(commit) else { return }
        }
        if stored == FanoutRange.ranged,
            try await store.releaseWhileRanging(
                jobID: job.id, owner: owner, notificationID: notification.id,
                runAt: at.addingTimeInterval(configuration.lease.timeInterval))
        {
            return
        }
        var cursor = stored
        while cursor != "done", cursor != FanoutRange.ranged {
            let (page, last, exhausted) = try await nextPage(of: notification, after: cursor)
            var commit = PageCommit(jobID: job.id, owner: owner, notificationID: notification.id)
            commit.counts.targeted = page.count
            commit.counts.skippedExpired = page.count
            commit.cursor = exhausted ? "done" : last ?? "done"
            guard try await store.commit(commit) else { return }
            cursor = commit.cursor
        }
        var commit = PageCommit(jobID: job.id, owner: owner, notificationID: notification.id)
        commit.status = .expired
        commit.completedAt = at
        commit.finishesJob = true
        if try await store.commit(commit) {
            EngineMetrics.finished(appID: notification.appID, status: .expired)
        }
    }
}

import Foundation
import HeraldCore

// An expired notification: what waits, and the rest of its target, counted as expired.
extension Dispatcher {
    /// The notification expired: what waits is counted as expired, the rest of the target too.
    func expire(_ notification: PushNotification, job: Job, owner: String) async throws {
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
        var cursor = try await store.cursor(notificationID: notification.id)
        while cursor != "done" {
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

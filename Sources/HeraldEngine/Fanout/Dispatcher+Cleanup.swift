import Foundation
import HeraldCore
import Logging

// The clean-up job: the rules of each app's policy, run every engine.cleanup.interval_hours.
extension Dispatcher {
    func runCleanup(_ job: Job, owner: String) async throws {
        let report = try await store.cleanup(configuration.cleanupPlan, now: now())
        for installation in report.removedWithEndpoints { await registrations.removed(installation) }
        // Ended Live Activities leave the Lock Screen at their dismissal time: their tokens go then.
        let activities = try await liveActivityStore?.forgetDismissedLiveActivities(before: now()) ?? 0
        logger.info(
            "cleanup done",
            metadata: [
                "herald.invalid": "\(report.invalidInstallations)", "herald.failing": "\(report.failingInstallations)",
                "herald.unseen": "\(report.unseenInstallations)",
                "herald.undelivered": "\(report.undeliveredInstallations)",
                "herald.stale": "\(report.staleInstallations)",
                "herald.notifications": "\(report.notifications)", "herald.live_activity_tokens": "\(activities)",
            ])
        if let interval = configuration.cleanupInterval {
            try await store.releaseJob(
                id: job.id, owner: owner, runAt: now().addingTimeInterval(interval.timeInterval), error: nil)
        } else {
            try await store.finishJob(id: job.id, owner: owner)
        }
    }
}

import Foundation
import HeraldCore

extension MemoryStore {
    public func cleanup(_ plan: CleanupPlan, now: Date) async throws -> CleanupReport {
        change { state in
            var report = CleanupReport()
            for (policy, scope) in plan.groups {
                let rules = CleanupRules(policy, now: now)
                state.cleanInstallations(rules: rules, scope: scope, now: now, report: &report)
                report.notifications += state.cleanNotifications(rules: rules, scope: scope)
            }
            // Buckets full again and pauses over hold nothing.
            state.buckets = state.buckets.filter { $0.value >= now }
            state.pauses = state.pauses.filter { $0.value >= now }
            return report
        }
    }
}

extension CleanupPlan.Scope {
    /// Whether the scope holds an app.
    fileprivate func contains(_ appID: String) -> Bool {
        switch self {
        case .only(let ids): ids.contains(appID)
        case .allBut(let ids): !ids.contains(appID)
        }
    }
}

extension CleanupRules.Deletion {
    /// Whether the rule deletes an installation.
    fileprivate func deletes(_ installation: Installation) -> Bool {
        switch self {
        case .invalid(let before):
            return !installation.valid && installation.invalidatedAt.map { $0 < before } == true
        case .failing(let failures, let before):
            let failedOnce = installation.lastFailureAt.map { $0.timeIntervalSince1970 > 0 } == true
            return installation.failureCount >= failures && failedOnce
                && (installation.lastDeliveredAt ?? installation.createdAt) < before
        case .unseen(let before):
            return installation.lastSeenOrUpdated < before
        case .undelivered(let before):
            return (installation.lastDeliveredAt ?? installation.createdAt) < before
        }
    }
}

extension Installation {
    /// When the installation was last seen or updated, whichever is later.
    fileprivate var lastSeenOrUpdated: Date { max(lastSeenAt ?? Date(timeIntervalSince1970: 0), updatedAt) }
}

extension MemoryStore.State {
    /// Applies a policy's installation rules to the apps of `scope`.
    fileprivate mutating func cleanInstallations(
        rules: CleanupRules, scope: CleanupPlan.Scope, now: Date, report: inout CleanupReport
    ) {
        for rule in rules.deletions {
            let removed = installations.values.filter { scope.contains($0.appID) && rule.deletes($0) }
                .sorted { $0.id < $1.id }
            // Installations with provider-side state go back to the engine, which removes it.
            report.removedWithEndpoints += removed.filter { $0.snsEndpointARN != nil }
            for installation in removed { removeInstallation(installation.id) }
            report[keyPath: rule.count] += removed.count
        }
        guard let staleBefore = rules.staleBefore else { return }
        // Invalid, not deleted: registering again makes them valid.
        for (id, installation) in installations
        where installation.valid && installation.lastSeenOrUpdated < staleBefore && scope.contains(installation.appID) {
            installations[id]?.valid = false
            installations[id]?.invalidatedAt = now
            installations[id]?.lastFailureReason = "stale"
            report.staleInstallations += 1
        }
    }

    /// Deletes the final notifications of the apps of `scope` older than the rules' retention, with
    /// their ledgers, pending deliveries and ranges.
    /// - Returns: How many went.
    fileprivate mutating func cleanNotifications(rules: CleanupRules, scope: CleanupPlan.Scope) -> Int {
        let old = notifications.values.map(\.notification).filter {
            $0.status.isFinal && ($0.completedAt ?? $0.createdAt) < rules.notificationsBefore
                && scope.contains($0.appID)
        }
        for notification in old {
            notifications[notification.id] = nil
            ranges[notification.id] = nil
            pending = pending.filter { $0.key.notificationID != notification.id }
        }
        return old.count
    }
}

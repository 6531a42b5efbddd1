import Foundation
import HeraldCore

extension MemoryStore: DispatchLedger {
    public func insertNotification(
        _ notification: PushNotification, runAt: Date, idempotencyWindow: Duration, lease: JobLease?
    ) async throws -> (notification: PushNotification, created: Bool) {
        change { state in
            if let key = notification.idempotencyKey,
                let earlier = state.notifications.values.first(where: {
                    $0.notification.appID == notification.appID && $0.notification.idempotencyKey == key
                })?.notification
            {
                if notification.createdAt.timeIntervalSince(earlier.createdAt) < idempotencyWindow.timeInterval {
                    return (earlier, false)
                }
                // The key is free again once its window has passed.
                state.notifications[earlier.id]?.notification.idempotencyKey = nil
            }
            state.notifications[notification.id] = StoredNotification(notification: notification)
            if let lease {
                // Leased to this node's worker, which has it in memory: no one is told to claim it.
                lease.grant(
                    state.insertJob(kind: .notification, reference: notification.id, runAt: runAt, lease: lease))
            } else {
                state.scheduleJob(kind: .notification, reference: notification.id, runAt: runAt)
            }
            return (notification, true)
        }
    }

    public func notification(appID: String, id: String) async throws -> PushNotification? {
        read { state in state.notifications[id].map(\.notification).flatMap { $0.appID == appID ? $0 : nil } }
    }

    public func notification(id: String) async throws -> PushNotification? {
        read { state in state.notifications[id]?.notification }
    }

    public func cursor(notificationID: String) async throws -> String? {
        read { state in state.notifications[notificationID]?.cursor }
    }

    public func duePending(notificationID: String, now: Date, limit: Int) async throws -> [PendingDelivery] {
        read { state in
            Array(
                state.pending.values.filter { $0.notificationID == notificationID && $0.runAt <= now }
                    .sorted { ($0.runAt, $0.attempts, $0.recipient) < ($1.runAt, $1.attempts, $1.recipient) }
                    .prefix(limit))
        }
    }

    public func nextPending(notificationID: String) async throws -> Date? {
        read { state in state.pending.values.filter { $0.notificationID == notificationID }.map(\.runAt).min() }
    }

    public func wakeOfflineDeliveries(recipient: String, now: Date) async throws -> Int {
        change { state in
            let offline = state.pending.filter { $0.key.recipient == recipient && $0.value.reason == .offline }
            for key in offline.keys { state.pending[key]?.runAt = now }
            for id in Set(offline.keys.map(\.notificationID)) {
                state.scheduleJob(kind: .notification, reference: id, runAt: now)
            }
            return offline.count
        }
    }

    public func settleConfirming(
        notificationID: String, recipient: String, as reason: PendingDelivery.Reason, now: Date
    ) async throws -> Bool {
        change { state in
            let key = PendingKey(notificationID: notificationID, recipient: recipient)
            guard state.pending[key]?.reason == .confirming else { return false }
            state.pending[key]?.reason = reason
            state.pending[key]?.runAt = now
            state.scheduleJob(kind: .notification, reference: notificationID, runAt: now)
            return true
        }
    }

    public func commit(_ page: PageCommit) async throws -> Bool {
        change { state in
            guard state.holds(page.jobID, owner: page.owner) else { return false }
            if let lockedUntil = page.lockedUntil { state.jobs[page.jobID]?.lockedUntil = lockedUntil }
            // Deliveries apply after the other events, as the SQL stores write them (in one statement each).
            for (id, event) in page.installationEvents {
                if case .delivered = event { continue }
                state.apply(event, to: id)
            }
            for (id, event) in page.installationEvents {
                if case .delivered = event { state.apply(event, to: id) }
            }
            for pending in page.pending {
                state.pending[PendingKey(notificationID: pending.notificationID, recipient: pending.recipient)] =
                    pending
            }
            for recipient in page.resolvedPending {
                state.pending[PendingKey(notificationID: page.notificationID, recipient: recipient)] = nil
            }
            if var stored = state.notifications[page.notificationID] {
                stored.ledger += page.ledger
                stored.notification.counts.add(page.counts)
                if page.range == nil, let cursor = page.cursor { stored.cursor = cursor }
                if let status = page.status { stored.notification.status = status }
                stored.notification.startedAt = stored.notification.startedAt ?? page.startedAt
                stored.notification.completedAt = page.completedAt ?? stored.notification.completedAt
                state.notifications[page.notificationID] = stored
            }
            if page.finishesJob { state.jobs[page.jobID] = nil }
            if let range = page.range, let cursor = page.cursor {
                state.moveRange(notificationID: page.notificationID, index: range, to: cursor, at: page.at ?? Date())
            }
            return true
        }
    }

    /// A notification's ledger in order of record (what the API lists as its deliveries).
    public func ledger(notificationID: String) -> [DeliveryRecord] {
        read { state in state.notifications[notificationID]?.ledger ?? [] }
    }
}

extension MemoryStore.State {
    /// What a delivery's outcome does to its installation, as ``InstallationEvent`` documents.
    mutating func apply(_ event: InstallationEvent, to id: String) {
        guard var installation = installations[id] else { return }
        switch event {
        case .delivered(let at):
            // Only a change: failures to reset, or a time further than the resolution from the stored one.
            let last = installation.lastDeliveredAt
            guard
                installation.failureCount != 0 || last == nil
                    || last.map({ $0 < at.addingTimeInterval(-InstallationEvent.deliveredResolution) || $0 > at })
                        == true
            else { return }
            installation.failureCount = 0
            installation.lastDeliveredAt = at
        case .invalidated(let reason, let since, let at):
            // A stale invalidation (older than the installation's last update) changes nothing.
            if since.map({ installation.updatedAt <= $0 }) ?? true {
                installation.valid = false
                installation.invalidatedAt = at
                installation.lastFailureAt = at
                installation.lastFailureReason = reason
            }
            // The ledger keeps the answer; the installation goes when its registration asked for that.
            if !installation.valid && installation.deleteWhenInvalid {
                removeInstallation(id)
                return
            }
        case .failed(let reason, let at, let maxFailures):
            installation.countFailure(reason: reason, at: at, maxFailures: maxFailures)
        case .rejected(let reason, let at, let maxFailures, let rule):
            // Rejected, not gone: invalidated by the app's rule, never deleted; an installation
            // registered with delete_when_invalid counts it as a failure whatever the rule.
            if rule == .invalidate && !installation.deleteWhenInvalid {
                installation.valid = false
                installation.invalidatedAt = at
                installation.lastFailureAt = at
                installation.lastFailureReason = reason
            } else {
                installation.countFailure(reason: reason, at: at, maxFailures: maxFailures)
            }
        }
        installations[id] = installation
    }
}

extension Installation {
    /// One failure more: `maxFailures` in a row deactivate the installation.
    fileprivate mutating func countFailure(reason: String, at: Date, maxFailures: Int) {
        failureCount += 1
        lastFailureAt = at
        lastFailureReason = reason
        if failureCount >= maxFailures {
            if valid { invalidatedAt = at }
            valid = false
        }
    }
}

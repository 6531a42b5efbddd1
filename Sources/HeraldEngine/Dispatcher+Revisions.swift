import Foundation
import HeraldCore

/// What a change or a removal of an updatable notification did.
public enum RevisionOutcome: Sendable {
    /// Still waiting for its push time: its content was replaced where it waits (a change).
    case replaced(PushNotification)
    /// Not sent yet: it was canceled (a removal).
    case canceled(PushNotification)
    /// The next revision: a notification of its own, with its own ledger counts and events.
    case revised(PushNotification)
}

// Changing and removing an updatable notification once it is out (docs/content.md, "Updating and
// deleting"). Its revisions share a counter with Live Activities' revisions (the record
// `#notification/<id>`), whose members are the installations a revision went to: each later
// revision is a notification of its own, sent with the same replacement key, to those members —
// or, while the first is still being sent, to its target — and claimed per device by the Live
// Activities' rule, so no device is sent revision N after N+1.
extension Dispatcher {
    /// How long a removed notification's counter and members are kept for its removal's sends.
    static let removedRevisionsKept: TimeInterval = 86_400

    /// Records the revision counter of a new updatable notification, kept as long as the
    /// notification's record (the app's `notification_retention`, after its push time).
    func createRevisionCounter(for notification: PushNotification, now: Date) async throws {
        guard let store = liveActivityStore, let revision = notification.revision else { return }
        let retention = configuration.cleanupPlan.policy(appID: notification.appID).notificationRetention
        var counter = LiveActivity(
            appID: notification.appID, id: revision.counterID, attributesType: "", revision: 1, createdAt: now,
            updatedAt: now)
        counter.dismissalAt = (notification.notBefore ?? now).addingTimeInterval(retention.timeInterval)
        _ = try await store.createLiveActivity(counter)
    }

    /// Changes an updatable notification's content: in place while it waits for its push time,
    /// else by its next revision.
    /// - Throws: `HeraldError` `not_found`, `notification_not_updatable`, `notification_final` (canceled
    ///   before anything was sent), `notification_removed`, or naming the field at fault.
    public func changeNotification(
        _ change: NotificationChange, id: String, appID: String
    ) async throws -> RevisionOutcome {
        let root = try await updatableNotification(id, appID: appID)
        let now = self.now()
        let send = revisionRequest(of: root, change: change, now: now)
        let checked = try notification(for: send, appID: appID, now: now)
        if root.status == .scheduled, let records = store as? any NotificationRecords {
            var replaced = root
            replaced.payload = checked.payload
            replaced.payload.collapseID = root.payload.collapseID
            replaced.template = checked.template
            if try await records.replaceScheduledNotification(replaced) { return .replaced(replaced) }
        }
        return .revised(try await submitRevision(send, of: root, now: now))
    }

    /// Removes an updatable notification from the devices: cancels what is not sent yet, and sends
    /// the installations it went to a removal (its next revision).
    /// - Throws: `HeraldError` `not_found`, `notification_not_updatable`, `notification_final` (canceled
    ///   before anything was sent), `notification_removed`.
    public func removeNotification(id: String, appID: String) async throws -> RevisionOutcome {
        var root = try await updatableNotification(id, appID: appID)
        let now = self.now()
        if !root.status.isFinal, let records = store as? any NotificationRecords,
            let canceled = try await records.cancelNotification(appID: appID, id: root.id, now: now)
        {
            // What has not gone yet never goes; what has is removed below.
            if canceled.status == .canceled { EngineMetrics.finished(appID: appID, status: .canceled) }
            if root.status == .scheduled, canceled.status == .canceled { return .canceled(canceled) }
            root = canceled
        }
        return .revised(try await submitRevision(revisionRequest(of: root, change: nil, now: now), of: root, now: now))
    }

    /// The notification `id` names, or the first of the revisions it belongs to.
    private func updatableNotification(_ id: String, appID: String) async throws -> PushNotification {
        guard var found = try await store.notification(appID: appID, id: id) else {
            throw HeraldError.notFound("Notification")
        }
        guard let revision = found.revision else {
            throw HeraldError(
                kind: .conflict, code: "notification_not_updatable",
                message: "The notification was not sent with updatable: true: it cannot be changed or removed.")
        }
        if revision.of != found.id {
            guard let first = try await store.notification(appID: appID, id: revision.of) else {
                throw HeraldError.notFound("Notification")
            }
            found = first
        }
        if found.status == .canceled, found.startedAt == nil {
            throw HeraldError(
                kind: .conflict, code: "notification_final",
                message: "The notification was canceled before it was sent: there is nothing to change or remove.")
        }
        return found
    }

    /// The send of the next revision of `root`: `change`'s content, or a removal (nil), with the
    /// root's replacement key, category and source. While the root is still being sent it goes to
    /// the root's target (each recipient joining as it is claimed); after, to the installations
    /// the revisions went to.
    private func revisionRequest(of root: PushNotification, change: NotificationChange?, now: Date) -> SendRequest {
        let key = root.payload.collapseID ?? PushNotification.replacementKey(for: root.id)
        let counter = NotificationRevision.counterID(root.id)
        let target = root.status.isFinal ? NotificationTarget(audience: .liveActivity(counter)) : root.target
        var payload: NotificationPayload
        if let change {
            payload = change.payload
        } else {
            // A data message the app acts on; the direct channel makes it Home Assistant's `clear_notification`.
            payload = NotificationPayload(
                data: [NotificationRevision.removalDataKey: .string(key)], contentAvailable: true, priority: .normal)
        }
        payload.collapseID = key
        var send = SendRequest(
            target: target, payload: payload, source: root.source, category: root.category,
            expiration: root.expiresAt.flatMap { $0 > now ? .at($0) : nil },
            // A removal reaches every device that has the notification, whatever its preferences.
            respectPreferences: change == nil ? false : root.respectPreferences)
        send.template = change?.template
        send.updatable = true
        send.revision = NotificationRevision(of: root.id, number: 2, removal: change == nil)
        return send
    }

    /// Assigns the revision its number and accepts it.
    private func submitRevision(
        _ send: SendRequest, of root: PushNotification, now: Date
    ) async throws -> PushNotification {
        guard let store = liveActivityStore else {
            throw HeraldError.unavailable("This store keeps no revisions of notifications.")
        }
        _ = try notification(for: send, appID: root.appID, now: now)
        let removal = send.revision?.removal ?? false
        let assigned: LiveActivityRevision?
        do {
            assigned = try await store.nextLiveActivityRevision(
                appID: root.appID, id: NotificationRevision.counterID(root.id), end: removal,
                dismissalAt: removal ? now.addingTimeInterval(Self.removedRevisionsKept) : nil,
                wantsHighPriority: false, highPriorityPerHour: 0, now: now)
        } catch let error as HeraldError where error.code == "live_activity_ended" {
            throw HeraldError(
                kind: .conflict, code: "notification_removed",
                message: "The notification was removed from the devices: it cannot be changed or removed again.")
        }
        guard let assigned else {
            throw HeraldError(
                kind: .conflict, code: "notification_not_updatable",
                message: "The notification's recipients are no longer kept (its record's retention has passed).")
        }
        var revision = send
        revision.revision?.number = assigned.revision
        guard case .accepted(let notification, _) = try await submit(revision, appID: root.appID) else {
            throw HeraldError.internal("A revision is never a dry run.")
        }
        return notification
    }
}

import Foundation
import HeraldCore
import Synchronization

/// Accepts events from producers (a camera's classified event, an NVR's detection) and the
/// notification each one causes: event, notification, job and link are committed in one
/// transaction, so an accepted event is durable with its push, and a repeated one (same external
/// id) sends nothing. Every dialect with events goes through it.
public struct EventIntake: Sendable {
    /// What accepting an event did.
    public struct Result: Sendable {
        /// The event as stored; for a repeat, the earlier one.
        public var event: SourceEvent
        /// The event's notification, if it has one.
        public var notification: PushNotification?
        /// Whether the event is new.
        public var created: Bool
    }

    let dispatcher: Dispatcher
    let store: any EngineStore & EventStore

    /// Creates an intake storing through `store` (the dispatcher's) and validating with `dispatcher`.
    public init(dispatcher: Dispatcher, store: any EngineStore & EventStore) {
        self.dispatcher = dispatcher
        self.store = store
    }

    /// Stores a new event and the notification `notify` makes of it (called with the event as
    /// stored, its owners read in the same transaction; nil sends nothing).
    /// - Parameter onlyWithAudience: Store the notification only when its target reaches at least
    ///   one installation; otherwise the event stays without one.
    /// - Throws: `HeraldError` from the store (`event_exists`) or from validating the send request,
    ///   with nothing stored.
    public func accept(
        _ event: SourceEvent, onlyWithAudience: Bool, notify: @escaping @Sendable (SourceEvent) -> SendRequest?
    ) async throws -> Result {
        let now = dispatcher.now()
        let dispatcher = self.dispatcher
        // The notification made here is the one stored with a new event: kept, it need not be read back.
        // A small one goes to a local worker in memory, its job stored leased to them.
        let made = Mutex<(notification: PushNotification, lease: JobLease?)?>(nil)
        let stored: SourceEvent
        let created: Bool
        do {
            (stored, created) = try await store.insertEvent(event) { stored throws(HeraldError) in
                guard let request = notify(stored) else { return nil }
                let notification = try dispatcher.notification(for: request, appID: stored.appID, now: now)
                // The closure runs once per attempt of the write: a lease from an earlier one is let go.
                let lease = made.withLock { made in
                    if let earlier = made?.lease { dispatcher.dropLease(earlier) }
                    let lease = dispatcher.handoffLease(for: notification, now: now)
                    made = (notification, lease)
                    return lease
                }
                return EventNotification(
                    notification: notification, runAt: notification.notBefore ?? now,
                    onlyWithAudience: onlyWithAudience, lease: lease)
            }
        } catch {
            if let lease = made.withLock({ $0?.lease }) { dispatcher.dropLease(lease) }
            throw error
        }
        let kept = made.withLock { $0 }
        var notification: PushNotification?
        if let id = stored.notificationID {
            if created, let kept, kept.notification.id == id {
                notification = kept.notification
            } else {
                notification = try await store.notification(appID: stored.appID, id: id)
            }
        }
        if created, let notification, notification.id == kept?.notification.id {
            dispatcher.accepted(notification, dialect: event.producer, lease: kept?.lease)
        } else {
            if let lease = kept?.lease { dispatcher.dropLease(lease) }
            if created, let notification { dispatcher.accepted(notification, dialect: event.producer, lease: nil) }
        }
        return Result(event: stored, notification: notification, created: created)
    }
}

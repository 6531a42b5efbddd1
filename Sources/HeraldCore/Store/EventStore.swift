import Foundation

/// The store's side of events: source devices (cameras), who owns them, and the events they
/// produce with the notification each one caused. Implemented by the same stores as ``Store``.
public protocol EventStore: Sendable {
    /// Stores a new source device.
    /// - Throws: `HeraldError` `device_exists` (409) when its id or alias already names a device of the app.
    func insertSourceDevice(_ device: SourceDevice) async throws -> SourceDevice

    /// The device of an app whose id, or else whose alias, is `reference`.
    func sourceDevice(appID: String, reference: String) async throws -> SourceDevice?

    /// Creates or replaces a user's ownership of a device (its `createdAt` is kept on a replace).
    /// - Returns: The ownership as stored; nil when the device does not exist.
    func setOwnership(_ ownership: Ownership) async throws -> Ownership?

    /// A user's ownership of a device, active or revoked; nil when there never was one.
    func ownership(appID: String, deviceID: String, userID: String) async throws -> Ownership?

    /// Every ownership of a device, in user order.
    func ownerships(appID: String, deviceID: String) async throws -> [Ownership]

    /// Stores a new event with the device's active owners (read in the same transaction) and, in
    /// that transaction, the notification `notifying` makes of the stored event, with its job,
    /// linked to the event: accepted means durable, and an event never notifies twice. An app's
    /// event with the same external id is returned as it is, and `notifying` is not called.
    /// - Returns: The stored event, and whether it is new (false: the earlier one with the id).
    /// - Throws: `HeraldError` `event_exists` (409) when another event of the app has its record id;
    ///   what `notifying` throws. Nothing is stored then.
    func insertEvent(
        _ event: SourceEvent, notifying: @escaping @Sendable (SourceEvent) throws -> EventNotification?
    ) async throws -> (event: SourceEvent, created: Bool)

    /// One event of an app and producer by the producer's record id or else Herald's id, with
    /// ``SourceEvent/pushSentAt`` read from its notification.
    func event(appID: String, producer: String, id: String) async throws -> SourceEvent?
}

/// The notification an event causes, as the event intake hands it to the store.
public struct EventNotification: Sendable {
    public var notification: PushNotification
    /// When its job first runs.
    public var runAt: Date
    /// Store it only when its target reaches at least one installation; otherwise the event is
    /// stored without a notification (nothing to send).
    public var onlyWithAudience: Bool
    /// When given, its job is stored already leased to it (see ``JobLease``).
    public var lease: JobLease?

    /// Creates the notification of an event.
    public init(notification: PushNotification, runAt: Date, onlyWithAudience: Bool, lease: JobLease? = nil) {
        self.notification = notification
        self.runAt = runAt
        self.onlyWithAudience = onlyWithAudience
        self.lease = lease
    }
}

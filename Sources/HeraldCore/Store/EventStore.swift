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

    /// Stores an event with the device's active owners (read in the same transaction) as its
    /// owners, unless the app already has an event with its external id.
    /// - Returns: The stored event, and whether it is new (false: the earlier one with the id).
    /// - Throws: `HeraldError` `event_exists` (409) when another event of the app has its record id.
    func insertEvent(_ event: SourceEvent) async throws -> (event: SourceEvent, created: Bool)

    /// Records the notification an event caused; an event keeps the first one it is given.
    /// - Returns: The event as stored afterwards; nil when it does not exist.
    func linkEvent(appID: String, id: String, notificationID: String) async throws -> SourceEvent?

    /// One event of an app by its producer's record id or else Herald's id, with
    /// ``SourceEvent/pushSentAt`` read from its notification.
    func event(appID: String, id: String) async throws -> SourceEvent?
}

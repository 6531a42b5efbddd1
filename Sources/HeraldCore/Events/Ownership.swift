import Foundation

/// A user's claim on a ``SourceDevice``: only an active owner may register against the device and
/// is notified of its events; a revoked one is kept for the record.
public struct Ownership: Sendable, Equatable {
    /// Whether the ownership holds (the wire values are AOVIS's `ACTIVE` and `REVOKED`).
    public enum Status: String, Sendable, CaseIterable {
        case active = "ACTIVE"
        case revoked = "REVOKED"
    }

    public var appID: String
    /// The source device's id (never its alias).
    public var deviceID: String
    public var userID: String
    public var status: Status
    public var createdAt: Date
    public var updatedAt: Date

    /// Creates an ownership record.
    public init(
        appID: String, deviceID: String, userID: String, status: Status, createdAt: Date, updatedAt: Date
    ) {
        self.appID = appID
        self.deviceID = deviceID
        self.userID = userID
        self.status = status
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

import Foundation

/// A UnifiedPush / RFC 8030 push endpoint: an unguessable URL (`/up/<secret>`) that an installation
/// hands to one app server, which POSTs encrypted messages to it for Herald to deliver to the device.
/// Its secret is never stored: the store keys the endpoint by the secret's SHA-256 digest
/// (the UnifiedPush dialect's `PushEndpointSecret`), so a copy of the database does not hold
/// working URLs. The record lives here, beside the stores that build it; the protocol of its store
/// is the dialect's (`PushEndpointStore` in `HeraldUnifiedPush`).
public struct PushEndpoint: Sendable, Equatable {
    /// The endpoint's public id (`pe_` and 26 characters): what the API lists and revokes by.
    public var id: String
    public var appID: String
    public var installationID: String
    public var createdAt: Date
    /// When it was revoked; a revoked endpoint answers `410 Gone`.
    public var revokedAt: Date?

    /// Creates an endpoint record.
    public init(id: String, appID: String, installationID: String, createdAt: Date, revokedAt: Date? = nil) {
        self.id = id
        self.appID = appID
        self.installationID = installationID
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}

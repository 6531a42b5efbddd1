import Foundation

/// One object of LeanCloud's `_User` class as Herald keeps it: only what installation queries
/// need (`$inQuery` on an `owner` pointer), its fields (GeoPoints included) as saved. Nothing of
/// LeanCloud's login or sessions. The record lives here, beside the stores that build it; the
/// protocol of its store is the dialect's (`LeanCloudUserStore` in `HeraldLeanCloud`).
public struct LeanCloudUser: Sendable, Equatable {
    public var appID: String
    public var id: String
    /// The saved fields (never `objectId`, `createdAt`, `updatedAt`).
    public var fields: [String: JSONValue]
    public var createdAt: Date
    public var updatedAt: Date

    /// Creates a user record.
    public init(appID: String, id: String, fields: [String: JSONValue], createdAt: Date, updatedAt: Date) {
        self.appID = appID
        self.id = id
        self.fields = fields
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

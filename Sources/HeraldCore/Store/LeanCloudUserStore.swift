import Foundation

/// One object of LeanCloud's `_User` class as Herald keeps it: only what installation queries
/// need (`$inQuery` on an `owner` pointer), its fields (GeoPoints included) as saved. Nothing of
/// LeanCloud's login or sessions.
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

/// The LeanCloud dialect's `_User` records.
public protocol LeanCloudUserStore: Sendable {
    /// Stores a user, replacing the one with its id.
    func putLeanCloudUser(_ user: LeanCloudUser) async throws

    /// One user by id.
    func leanCloudUser(appID: String, id: String) async throws -> LeanCloudUser?

    /// A page of an app's users in id order, after the id `after`.
    func leanCloudUsers(appID: String, after: String?, limit: Int) async throws -> [LeanCloudUser]

    /// The ids of an app's users that a query over their records selects (as
    /// ``InstallationQuery/matches(record:)`` reads a ``QueryRecord``), compiled to the store's
    /// own query: in id order, at most `limit` (an `$inQuery` sub-query).
    /// - Throws: What the store throws.
    func leanCloudUserIDs(appID: String, matching query: InstallationQuery, limit: Int) async throws -> [String]

    /// Deletes a user; false when there was none.
    func deleteLeanCloudUser(appID: String, id: String) async throws -> Bool
}

import Foundation
import HeraldCore

/// The LeanCloud dialect's `_User` records (docs/architecture.md, "Adding a dialect").
///
/// Its records are `HeraldCore`'s (``LeanCloudUser``), as the stores build them; each store implements
/// the methods in its own module and conforms in `HeraldServer` (`DialectStores.swift`), where the
/// stores meet the dialects.
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

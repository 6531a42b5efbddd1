import Foundation

/// A record of a dialect's own table (LeanCloud's `_User`) as an installation query reads it:
/// its id and times as the `id`, `created_at` and `updated_at` columns, its saved JSON fields as
/// attribute paths.
public struct QueryRecord: Sendable, Equatable {
    public var id: String
    /// The saved fields, read by `attributes.<key>` paths.
    public var fields: [String: JSONValue]
    public var createdAt: Date
    public var updatedAt: Date

    /// Creates a record.
    public init(id: String, fields: [String: JSONValue], createdAt: Date, updatedAt: Date) {
        self.id = id
        self.fields = fields
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A selection of installations in the LeanCloud/Parse query language: the `where` object of a
/// send target, parsed and checked once (``init(parsing:field:)``), then compiled by a store to
/// its own query or evaluated in memory with ``matches(_:)``.
///
/// The semantics are Parse's (which are MongoDB's), for every store alike:
/// - A field holds a scalar, an array (`channels`, an array attribute) or nothing (a missing
///   attribute, a null column or attribute). Operators read an array element by element:
///   `$eq` matches when any element equals the value, `$in` when any equals one of the values,
///   `$all` when every value is found, `$lt`…`$gte` and `$regex` when any element satisfies them.
/// - `$eq: null` matches a missing or null field; `$ne` and `$nin` are the exact negations of
///   `$eq` and `$in`, so they also match installations where the field is missing or null.
/// - `$exists: true` matches a field that is present and not null.
/// - Equality is strict on JSON type: the number `3` never equals the string `"3"`, and `true`
///   never equals `1`. Numbers compare numerically, strings by their UTF-8 bytes (binary order),
///   dates by instant.
public enum InstallationQuery: Sendable, Equatable {
    /// Every sub-query matches; `.and([])` matches every installation (the query `{}`).
    case and([InstallationQuery])
    /// At least one sub-query matches; `.or([])` matches none.
    case or([InstallationQuery])
    /// One operator applied to one field.
    case condition(field: QueryField, op: QueryOperator)

    /// Query objects nest at most this deep (the `where` object itself is level 1, each
    /// `$and`/`$or` adds one).
    public static let maxDepth = 8
    /// An `$in`, `$nin` or `$all` array, and an `$and` or `$or` array, holds at most this many items.
    public static let maxArrayValues = 100
    /// A query has at most this many conditions: each operator on a field, and each `$and`/`$or`.
    public static let maxConditions = 50
    /// A `$regex` pattern is at most this many bytes of UTF-8.
    public static let maxPatternLength = 1024
}

extension InstallationQuery {
    /// Whether the query, or one of its sub-queries, has a `$regex` condition.
    public var containsRegex: Bool {
        switch self {
        case .and(let queries), .or(let queries): queries.contains(where: \.containsRegex)
        case .condition(_, .regex): true
        case .condition: false
        }
    }
}

import Foundation

/// What a query condition tests a field for (one `$` operator of the query language).
public enum QueryOperator: Sendable, Equatable {
    /// `$eq`, or a plain value: the field (or an element of it) equals the value; `.null` matches
    /// a missing or null field.
    case equal(QueryValue)
    /// `$ne`: not `.equal`.
    case notEqual(QueryValue)
    /// `$in`: `.equal` to one of the values.
    case `in`([QueryValue])
    /// `$nin`: not `.in`.
    case notIn([QueryValue])
    /// `$all`: `.equal` to every one of the values (for an array field: contains them all).
    case all([QueryValue])
    /// `$exists`: whether the field is present and not null.
    case exists(Bool)
    /// `$lt`, `$lte`, `$gt`, `$gte`: the field (or an element of it) is a number, string or date
    /// that compares so with the value of the same type.
    case compare(Comparison, QueryValue)
    /// `$regex` with `$options`: the field (or an element of it) is a string containing a match.
    case regex(pattern: String, caseInsensitive: Bool)
    /// `$nearSphere`: the field is a GeoPoint at most `maxDistance` radians from the point (any
    /// distance when nil).
    case nearSphere(GeoPoint, maxDistance: Double?)
    /// `$within` `$box`: the field is a GeoPoint inside the box.
    case withinBox(southwest: GeoPoint, northeast: GeoPoint)

    /// An ordering comparison; the raw value is its operator in the query language.
    public enum Comparison: String, Sendable, CaseIterable {
        case lessThan = "$lt"
        case lessThanOrEqual = "$lte"
        case greaterThan = "$gt"
        case greaterThanOrEqual = "$gte"
    }
}

/// A value a query compares fields with.
public enum QueryValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    /// An instant, for the date columns (`created_at`, `last_seen_at`…).
    case date(Date)
}

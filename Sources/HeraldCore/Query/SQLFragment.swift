/// A value a compiled query binds to one parameter; each store converts it to its driver's type.
public enum SQLValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case text(String)
    /// A list of strings (PostgreSQL binds it as an array).
    case texts([String])
}

/// A piece of SQL whose parameters are marked, with their values in order. The marks become the
/// store's placeholders (`?`, `$n`) once the whole statement is built (``rendered(placeholder:)``).
public struct SQLFragment: Sendable, Equatable {
    /// Where a parameter goes in ``sql``.
    public static let marker: Character = "\u{1}"

    /// The SQL text, with a ``marker`` for each parameter.
    public var sql: String
    /// The parameters' values, in order.
    public var values: [SQLValue]

    /// Literal SQL and the values of the marks it holds.
    public init(_ sql: String, _ values: [SQLValue] = []) {
        self.sql = sql
        self.values = values
    }

    public static func + (lhs: SQLFragment, rhs: SQLFragment) -> SQLFragment {
        SQLFragment(lhs.sql + rhs.sql, lhs.values + rhs.values)
    }

    /// One parameter bound to `value`, with an optional cast after it (`::numeric`).
    public static func bound(_ value: SQLValue, cast: String = "") -> SQLFragment {
        SQLFragment(String(marker) + cast, [value])
    }

    public static func bound(_ text: String) -> SQLFragment { .bound(.text(text)) }

    public static func bound(_ integer: Int) -> SQLFragment { .bound(.integer(Int64(integer))) }

    /// `NOT (…)`.
    public var negated: SQLFragment { SQLFragment("NOT ") + parenthesized }

    public var parenthesized: SQLFragment { SQLFragment("(") + self + SQLFragment(")") }

    /// The parts separated by commas.
    public static func list(_ parts: [SQLFragment]) -> SQLFragment {
        guard let first = parts.first else { return SQLFragment("") }
        return parts.dropFirst().reduce(first) { $0 + SQLFragment(", ") + $1 }
    }

    /// The parts joined by `AND`/`OR` in parentheses, or `empty` when there are none.
    public static func joined(_ parts: [SQLFragment], by separator: String, empty: SQLFragment) -> SQLFragment {
        guard let first = parts.first else { return empty }
        guard parts.count > 1 else { return first }
        return parts.dropFirst().reduce(first) { $0 + SQLFragment(" \(separator) ") + $1 }.parenthesized
    }

    /// The SQL with each mark replaced by `placeholder(n)` for the n-th parameter (from 0).
    public func rendered(placeholder: (Int) -> String) -> String {
        var sql = ""
        var index = 0
        for character in self.sql {
            if character == Self.marker {
                sql += placeholder(index)
                index += 1
            } else {
                sql.append(character)
            }
        }
        return sql
    }
}

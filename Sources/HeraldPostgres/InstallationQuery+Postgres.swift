import Foundation
import HeraldCore
import PostgresNIO

extension InstallationQuery {
    /// The query as a boolean SQL expression over the `installations` table, for a `WHERE` clause
    /// whose earlier parameters end at `firstParameter - 1`; its placeholders are numbered from
    /// `firstParameter` on. Values and attribute keys are always bound.
    ///
    /// The expression is never NULL, so it can be negated safely, and selects exactly the
    /// installations ``InstallationQuery/matches(_:)`` accepts: types compare strictly (a number
    /// never equals a string or a boolean, an integer equals the same double), a missing key reads
    /// as null, a path never walks into an array, and a field that holds an array matches when
    /// one of its elements does. Equality is containment (`@>`), which the `jsonb_path_ops` GIN
    /// index on `attributes` serves.
    func postgresCondition(firstParameter: Int) -> (sql: String, values: [SQLBind]) {
        postgresFragment(over: .installations).numbered(from: firstParameter)
    }

    /// The query as a boolean SQL expression over `table`'s columns, its parameters still marked.
    func postgresFragment(over table: PostgresQueryTable) -> PostgresFragment {
        PostgresQueryCompiler(table: table).expression(self)
    }
}

/// Where a query's fields live in a table: the columns it names, and the JSON column its attribute
/// paths read.
struct PostgresQueryTable: Sendable {
    /// The `jsonb` object column attribute paths read.
    var attributes: String
    /// Whether the table has the `channels` `jsonb` array column.
    var hasChannels: Bool
    /// The SQL a column reads, nil for one the table lacks: a field every record is missing.
    var column: @Sendable (QueryField.Column) -> String?

    /// The `installations` table.
    static let installations = PostgresQueryTable(attributes: "attributes", hasChannels: true) {
        // What deliveries write lives in a table of its own (see PostgresMigrations.v12InstallationDeliveries).
        $0 == .lastDeliveredAt ? PostgresStore.lastDelivered() : $0.installationColumn
    }

    /// A dialect's table of JSON records (`id`, `fields`, `created_at`, `updated_at`), as
    /// ``InstallationQuery/matches(record:)`` reads a record.
    static let records = PostgresQueryTable(attributes: "fields", hasChannels: false) { $0.recordColumn }
}

/// A piece of SQL whose parameters are marked, with their values in order; the marks become `$n`
/// once the whole expression is built.
struct PostgresFragment {
    static let marker: Character = "\u{1}"

    var sql: String
    var values: [SQLBind]

    init(_ sql: String, _ values: [SQLBind] = []) {
        self.sql = sql
        self.values = values
    }

    static var `true`: PostgresFragment { PostgresFragment("TRUE") }
    static var `false`: PostgresFragment { PostgresFragment("FALSE") }

    static func + (lhs: PostgresFragment, rhs: PostgresFragment) -> PostgresFragment {
        PostgresFragment(lhs.sql + rhs.sql, lhs.values + rhs.values)
    }

    /// One parameter bound to `value`, with an optional cast (`::numeric`).
    static func bound(_ value: SQLBind, cast: String = "") -> PostgresFragment {
        PostgresFragment(String(marker) + cast, [value])
    }

    var negated: PostgresFragment { PostgresFragment("NOT ") + parenthesized }

    /// The SQL with its marks numbered `$firstParameter`, `$firstParameter + 1`…, and its values.
    func numbered(from firstParameter: Int) -> (sql: String, values: [SQLBind]) {
        var sql = ""
        var index = firstParameter
        for character in self.sql {
            if character == Self.marker {
                sql += "$\(index)"
                index += 1
            } else {
                sql.append(character)
            }
        }
        return (sql, values)
    }

    /// The parts separated by commas.
    static func list(_ parts: [PostgresFragment]) -> PostgresFragment {
        guard let first = parts.first else { return PostgresFragment("") }
        return parts.dropFirst().reduce(first) { $0 + PostgresFragment(", ") + $1 }
    }

    var parenthesized: PostgresFragment { PostgresFragment("(") + self + PostgresFragment(")") }

    /// The parts joined by `AND`/`OR` in parentheses, or `empty` when there are none.
    static func joined(_ parts: [PostgresFragment], by separator: String, empty: PostgresFragment) -> PostgresFragment {
        guard let first = parts.first else { return empty }
        guard parts.count > 1 else { return first }
        return parts.dropFirst().reduce(first) { $0 + PostgresFragment(" \(separator) ") + $1 }.parenthesized
    }
}

/// Compiles a query tree to PostgreSQL over `jsonb`. Every fragment it returns is TRUE or FALSE, never NULL.
struct PostgresQueryCompiler {
    var table: PostgresQueryTable

    func expression(_ query: InstallationQuery) -> PostgresFragment {
        switch query {
        case .and(let queries): .joined(queries.map(expression), by: "AND", empty: .true)
        case .or(let queries): .joined(queries.map(expression), by: "OR", empty: .false)
        case .condition(.column(.channels), let op) where table.hasChannels: Self.channels(op)
        case .condition(.column(let column), let op): scalar(column).condition(op)
        case .condition(.attribute(let path), let op): Attribute(path, in: table.attributes).condition(op)
        }
    }

    /// A column of the table; one it lacks reads as NULL, the field missing.
    private func scalar(_ column: QueryField.Column) -> Column {
        guard let name = table.column(column) else {
            let type =
                switch column.kind {
                case .string: "text"
                case .integer: "bigint"
                case .boolean: "boolean"
                case .date: "float8"
                case .strings: "jsonb"
                }
            return Column(name: "NULL::\(type)", kind: column.kind, isNullable: true)
        }
        return Column(name: name, kind: column.kind, isNullable: column.isNullable)
    }

    /// `ORDER BY` terms for `order`, then the id (see ``QueryOrder``), without the keywords.
    func orderBy(_ order: [QueryOrder<QueryField>]) -> PostgresFragment {
        var terms: [PostgresFragment] = []
        for key in order {
            switch key.field {
            case .column(.channels): continue  // Arrays tie.
            case .column(let column):
                guard let name = table.column(column) else { continue }
                terms.append(
                    Column(name: name, kind: column.kind, isNullable: column.isNullable).orderBy(key.descending))
            case .attribute(let path):
                terms += Attribute(path, in: table.attributes).orderBy(key.descending)
            }
        }
        terms.append(PostgresFragment("id"))
        return .list(terms)
    }

    /// Equality and membership, built from a field's equality test; nil for the other operators.
    static func membership(
        _ op: QueryOperator, equal: (QueryValue) -> PostgresFragment
    ) -> PostgresFragment? {
        switch op {
        case .equal(let value): equal(value)
        case .notEqual(let value): equal(value).negated
        case .in(let values): .joined(values.map(equal), by: "OR", empty: .false)
        case .notIn(let values): PostgresFragment.joined(values.map(equal), by: "OR", empty: .false).negated
        case .all(let values): .joined(values.map(equal), by: "AND", empty: .true)
        case .exists, .compare, .regex, .nearSphere, .withinBox: nil
        }
    }

    /// `~` or `~*` against a bound pattern.
    static func regex(_ pattern: String, _ caseInsensitive: Bool) -> PostgresFragment {
        PostgresFragment(caseInsensitive ? " ~* " : " ~ ") + .bound(pattern)
    }

    /// A number's exact decimal text, compared as `numeric`.
    static func numeric(_ number: JSONNumber) -> PostgresFragment {
        .bound(number.description, cast: "::numeric")
    }

    // MARK: Scalar columns

    /// A scalar column (or an expression): a value of another type than the column's never
    /// matches; a null column is the field missing.
    struct Column {
        var name: String
        var kind: QueryField.Column.Kind
        var isNullable: Bool

        init(name: String, kind: QueryField.Column.Kind, isNullable: Bool) {
            self.name = name
            self.kind = kind
            self.isNullable = isNullable
        }

        /// An `ORDER BY` term: one type per column, so nulls first ascending, last descending.
        func orderBy(_ descending: Bool) -> PostgresFragment {
            PostgresFragment(name + collation + (descending ? " DESC NULLS LAST" : " ASC NULLS FIRST"))
        }

        func condition(_ op: QueryOperator) -> PostgresFragment {
            membership(op, equal: equal) ?? other(op)
        }

        /// The operators other than equality and membership.
        private func other(_ op: QueryOperator) -> PostgresFragment {
            switch op {
            case .equal, .notEqual, .in, .notIn, .all: .false
            case .exists(let exists):
                isNullable
                    ? PostgresFragment(exists ? "\(name) IS NOT NULL" : "\(name) IS NULL") : (exists ? .true : .false)
            case .compare(let comparison, let value):
                // Booleans have no order.
                if case .bool = value {
                    .false
                } else {
                    operand(value).map {
                        guarded(PostgresFragment("\(name)\(collation) \(comparison.sqlOperator) ") + $0)
                    } ?? .false
                }
            case .regex(let pattern, let caseInsensitive):
                kind == .string ? guarded(PostgresFragment(name) + regex(pattern, caseInsensitive)) : .false
            case .nearSphere, .withinBox: .false
            }
        }

        /// Byte order for text, as Swift compares UTF-8.
        private var collation: String { kind == .string ? " COLLATE \"C\"" : "" }

        private func equal(_ value: QueryValue) -> PostgresFragment {
            guard value != .null else { return isNullable ? PostgresFragment("\(name) IS NULL") : .false }
            return operand(value).map { guarded(PostgresFragment("\(name) = ") + $0) } ?? .false
        }

        /// The value bound as the column's type; nil when it is of another type (never equal, no order).
        private func operand(_ value: QueryValue) -> PostgresFragment? {
            switch (kind, value) {
            case (.string, .string(let string)): .bound(string)
            case (.integer, .number(let number)): numeric(number)
            case (.boolean, .bool(let bool)): .bound(bool)
            case (.date, .date(let date)): .bound(date.timeIntervalSince1970, cast: "::float8")
            default: nil
            }
        }

        /// A comparison that would be NULL on a NULL column is FALSE there instead.
        private func guarded(_ comparison: PostgresFragment) -> PostgresFragment {
            isNullable
                ? PostgresFragment("(\(name) IS NOT NULL AND ") + comparison + PostgresFragment(")")
                : comparison.parenthesized
        }
    }

    // MARK: Arrays

    /// A test on the elements of the `channels` array (always present, strings only).
    static func channels(_ op: QueryOperator) -> PostgresFragment {
        func anyElement(_ predicate: PostgresFragment) -> PostgresFragment {
            PostgresFragment("EXISTS (SELECT 1 FROM jsonb_array_elements_text(channels) AS c(value) WHERE ")
                + predicate + PostgresFragment(")")
        }
        func member(of values: [QueryValue]) -> PostgresFragment {
            let names: [String] = values.compactMap { if case .string(let name) = $0 { name } else { nil } }
            guard !names.isEmpty else { return .false }
            return PostgresFragment("channels ?| ") + .bound(names, cast: "::text[]")
        }
        func equal(_ value: QueryValue) -> PostgresFragment { member(of: [value]) }
        switch op {
        case .equal(let value): return equal(value)
        case .notEqual(let value): return equal(value).negated
        case .in(let values): return member(of: values)
        case .notIn(let values): return member(of: values).negated
        case .all(let values): return .joined(values.map(equal), by: "AND", empty: .true)
        case .exists(let exists): return exists ? .true : .false
        case .compare(let comparison, let value):
            guard case .string(let string) = value else { return .false }
            return anyElement(PostgresFragment("value COLLATE \"C\" \(comparison.sqlOperator) ") + .bound(string))
        case .regex(let pattern, let caseInsensitive):
            return anyElement(PostgresFragment("value") + regex(pattern, caseInsensitive))
        case .nearSphere, .withinBox: return .false
        }
    }

    // MARK: Attributes

    /// A value in a `jsonb` object column (`attributes`), at a path of validated keys.
    struct Attribute {
        var keys: [String]
        /// The `jsonb` column.
        var attributes: String

        init(_ keys: [String], in attributes: String) {
            self.keys = keys
            self.attributes = attributes
        }

        /// `ORDER BY` terms in ``QueryOrder``'s order: the type's rank (missing or null, numbers,
        /// strings, booleans, arrays and objects), then the value within its type.
        func orderBy(_ descending: Bool) -> [PostgresFragment] {
            let direction = PostgresFragment(descending ? " DESC" : " ASC")
            let type = PostgresFragment("jsonb_typeof") + value
            return [
                PostgresFragment("(CASE ") + type
                    + PostgresFragment(
                        " WHEN 'number' THEN 1 WHEN 'string' THEN 2 WHEN 'boolean' THEN 3 WHEN 'array' THEN 4"
                            + " WHEN 'object' THEN 4 ELSE 0 END)") + direction,
                PostgresFragment("(CASE WHEN ") + type + PostgresFragment(" = 'number' THEN (") + value
                    + PostgresFragment(" #>> '{}')::numeric END)") + direction,
                PostgresFragment("(CASE WHEN ") + type + PostgresFragment(" = 'string' THEN (") + value
                    + PostgresFragment(" #>> '{}') END) COLLATE \"C\"") + direction,
                PostgresFragment("(CASE WHEN ") + type + PostgresFragment(" = 'boolean' THEN (") + value
                    + PostgresFragment(" #>> '{}')::boolean END)") + direction,
            ]
        }

        func condition(_ op: QueryOperator) -> PostgresFragment {
            membership(op, equal: equal) ?? other(op)
        }

        /// The operators other than equality and membership.
        private func other(_ op: QueryOperator) -> PostgresFragment {
            switch op {
            case .equal, .notEqual, .in, .notIn, .all: .false
            case .exists(let exists): exists ? present : present.negated
            case .compare(let comparison, let value):
                switch value {
                case .string(let string):
                    anyElement(
                        PostgresFragment(
                            "jsonb_typeof(e) = 'string' AND (e #>> '{}') COLLATE \"C\" \(comparison.sqlOperator) ")
                            + .bound(string))
                case .number(let number):
                    anyElement(
                        PostgresFragment(
                            "jsonb_typeof(e) = 'number' AND (e #>> '{}')::numeric \(comparison.sqlOperator) ")
                            + numeric(number))
                case .null, .bool, .date: .false
                }
            case .regex(let pattern, let caseInsensitive):
                anyElement(
                    PostgresFragment("jsonb_typeof(e) = 'string' AND (e #>> '{}')") + regex(pattern, caseInsensitive))
            case .nearSphere(let center, let maxDistance):
                maxDistance.map { distance in
                    PostgresFragment("COALESCE(herald_geo_distance(") + value + PostgresFragment(", ")
                        + .bound(center.latitude) + PostgresFragment(", ") + .bound(center.longitude)
                        + PostgresFragment(") <= ") + .bound(distance) + PostgresFragment(", FALSE)")
                }
                    ?? (PostgresFragment("(herald_geo_distance(") + value + PostgresFragment(", 0, 0) IS NOT NULL)"))
            case .withinBox(let southwest, let northeast):
                PostgresFragment("herald_geo_within(") + value + PostgresFragment(", ") + .bound(southwest.latitude)
                    + PostgresFragment(", ") + .bound(southwest.longitude) + PostgresFragment(", ")
                    + .bound(northeast.latitude) + PostgresFragment(", ") + .bound(northeast.longitude)
                    + PostgresFragment(")")
            }
        }

        /// The value at the path (`attributes -> k1 -> k2`): `->` with a text key is NULL on an
        /// array, so a path never indexes into one, as the oracle reads it.
        private var value: PostgresFragment {
            keys.reduce(PostgresFragment("(\(attributes)")) {
                $0 + PostgresFragment(" -> ") + .bound($1, cast: "::text")
            }
                + PostgresFragment(")")
        }

        /// Present and not null; JSON null and a missing key both read as missing.
        private var present: PostgresFragment {
            PostgresFragment("COALESCE(jsonb_typeof") + value + PostgresFragment(", 'null') <> 'null'")
        }

        /// Equality with one value: null is the field missing; otherwise containment of the value,
        /// or of an array holding it (a field that is an array matches by one of its elements).
        /// jsonb compares by type, and numbers by value (1 equals 1.0).
        private func equal(_ value: QueryValue) -> PostgresFragment {
            let json: JSONValue
            switch value {
            case .null: return present.negated
            case .date: return .false
            case .bool(let bool): json = .bool(bool)
            case .number(let number): json = .number(number)
            case .string(let string): json = .string(string)
            }
            return PostgresFragment("(\(attributes) @> ") + .bound(document(json), cast: "::jsonb")
                + PostgresFragment(" OR \(attributes) @> ") + .bound(document(.array([json])), cast: "::jsonb")
                + PostgresFragment(")")
        }

        /// `{"k1": {"k2": leaf}}`, as JSON text.
        private func document(_ leaf: JSONValue) -> String {
            let nested = keys.reversed().reduce(leaf) { inner, key in JSONValue.object([key: inner]) }
            return String(decoding: nested.serialized(), as: UTF8.self)
        }

        /// Whether the value, or one of its elements when it is an array, satisfies `predicate`
        /// (over `e`, one jsonb element). An object has no elements (its members are not the field's values).
        private func anyElement(_ predicate: PostgresFragment) -> PostgresFragment {
            PostgresFragment("EXISTS (SELECT 1 FROM herald_query_elements") + value + PostgresFragment(" AS e WHERE ")
                + predicate + PostgresFragment(")")
        }
    }
}

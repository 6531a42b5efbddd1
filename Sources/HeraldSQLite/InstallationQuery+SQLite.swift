import Foundation
import GRDB
import HeraldCore

extension InstallationQuery {
    /// The query as a boolean SQL expression over the `installations` table, with its arguments,
    /// for a `WHERE` clause (`WHERE app_id = ? AND <condition>`). Values are always bound, and
    /// attribute paths (bound too) are built from keys the parser validated.
    ///
    /// The expression is never NULL, so it can be negated safely, and selects exactly the
    /// installations ``InstallationQuery/matches(_:)`` accepts. A `$regex` condition calls
    /// ``regexpFunction``, which the connection must have (see there).
    public func sqliteCondition() -> (sql: String, arguments: StatementArguments) {
        sqliteFragment(over: .installations).statement
    }

    /// The query as a boolean SQL expression over `table`'s columns (see ``sqliteCondition()``).
    func sqliteFragment(over table: SQLiteQueryTable) -> SQLFragment {
        SQLiteQueryCompiler(table: table).expression(self)
    }

    /// `herald_regexp(pattern, options, value)`: 1 when `value` is text containing a match of
    /// `pattern` (options `"i"` for case-insensitive, `""` otherwise), else 0. SQLite has no
    /// regular expressions of its own; add the function to every connection that runs queries:
    ///
    /// ```swift
    /// configuration.prepareDatabase { db in db.add(function: InstallationQuery.regexpFunction) }
    /// ```
    public static let regexpFunction = DatabaseFunction("herald_regexp", argumentCount: 3, pure: true) { values in
        guard case .string(let pattern) = values[0].storage, case .string(let options) = values[1].storage,
            case .string(let text) = values[2].storage
        else { return false }
        return QueryRegex.matches(pattern, caseInsensitive: options.contains("i"), in: text)
    }

    /// `herald_geo_distance(geopoint_json, latitude, longitude)`: the great-circle distance in radians
    /// from a stored GeoPoint object (JSON text) to the point, or NULL when the value is not one.
    /// Add it to every connection that runs queries, like ``regexpFunction``.
    public static let geoDistanceFunction = DatabaseFunction("herald_geo_distance", argumentCount: 3, pure: true) {
        values in
        guard let point = geoPoint(values[0]), let latitude = Double.fromDatabaseValue(values[1]),
            let longitude = Double.fromDatabaseValue(values[2])
        else { return nil }
        return GeoPoint.distance(point.latitude, point.longitude, latitude, longitude)
    }

    /// `herald_geo_within(geopoint_json, south, west, north, east)`: 1 when a stored GeoPoint object
    /// lies in the box, else 0.
    public static let geoWithinFunction = DatabaseFunction("herald_geo_within", argumentCount: 5, pure: true) {
        values in
        guard let point = geoPoint(values[0]),
            let south = Double.fromDatabaseValue(values[1]), let west = Double.fromDatabaseValue(values[2]),
            let north = Double.fromDatabaseValue(values[3]), let east = Double.fromDatabaseValue(values[4]),
            let southwest = GeoPoint(latitude: south, longitude: west),
            let northeast = GeoPoint(latitude: north, longitude: east)
        else { return false }
        return point.isWithin(southwest: southwest, northeast: northeast)
    }

    private static func geoPoint(_ value: DatabaseValue) -> GeoPoint? {
        guard case .string(let text) = value.storage, let json = try? JSONValue.parse(Array(text.utf8)) else {
            return nil
        }
        return GeoPoint(json: json)
    }
}

/// Where a query's fields live in a table: the columns it names, and the JSON column its attribute
/// paths read.
struct SQLiteQueryTable: Sendable {
    /// The JSON object column attribute paths read.
    var attributes: String
    /// Whether the table has the `channels` JSON array column.
    var hasChannels: Bool
    /// The SQL a column reads (a column name or an expression), nil for one the table lacks: a
    /// field every record is missing.
    var column: @Sendable (QueryField.Column) -> String?

    /// The `installations` table.
    static let installations = SQLiteQueryTable(attributes: "attributes", hasChannels: true) { $0.installationColumn }

    /// A dialect's table of JSON records (`id`, `fields`, `created_at`, `updated_at`), as
    /// ``InstallationQuery/matches(record:)`` reads a record.
    static let records = SQLiteQueryTable(attributes: "fields", hasChannels: false) { $0.recordColumn }
}

/// A piece of SQL with the arguments of its placeholders, in order.
struct SQLFragment {
    var sql: String
    var arguments: [DatabaseValue]

    init(_ sql: String, _ arguments: [DatabaseValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }

    /// The SQL and its arguments, for a statement.
    var statement: (sql: String, arguments: StatementArguments) { (sql, StatementArguments(arguments)) }

    static let `true` = SQLFragment("1")
    static let `false` = SQLFragment("0")

    static func + (lhs: SQLFragment, rhs: SQLFragment) -> SQLFragment {
        SQLFragment(lhs.sql + rhs.sql, lhs.arguments + rhs.arguments)
    }

    /// One placeholder bound to `value`.
    static func bound(_ value: some DatabaseValueConvertible) -> SQLFragment {
        SQLFragment("?", [value.databaseValue])
    }

    /// `NOT (…)`.
    var negated: SQLFragment { SQLFragment("NOT ") + parenthesized }

    var parenthesized: SQLFragment { SQLFragment("(") + self + SQLFragment(")") }

    /// The parts separated by commas.
    static func list(_ parts: [SQLFragment]) -> SQLFragment {
        guard let first = parts.first else { return SQLFragment("") }
        return parts.dropFirst().reduce(first) { $0 + SQLFragment(", ") + $1 }
    }

    /// The parts joined by `AND`/`OR` in parentheses, or `empty` when there are none.
    static func joined(_ parts: [SQLFragment], by separator: String, empty: SQLFragment) -> SQLFragment {
        guard let first = parts.first else { return empty }
        guard parts.count > 1 else { return first }
        let body = parts.dropFirst().reduce(first) { $0 + SQLFragment(" \(separator) ") + $1 }
        return body.parenthesized
    }
}

/// Compiles a query tree to SQLite (with JSON1). Every fragment it returns is 0 or 1, never NULL.
struct SQLiteQueryCompiler {
    var table: SQLiteQueryTable

    func expression(_ query: InstallationQuery) -> SQLFragment {
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
        table.column(column).map { Column(name: $0, kind: column.kind, isNullable: column.isNullable) }
            ?? Column(name: "NULL", kind: column.kind, isNullable: true)
    }

    /// `ORDER BY` terms for `order`, then the id (see ``QueryOrder``), without the keywords.
    func orderBy(_ order: [QueryOrder<QueryField>]) -> SQLFragment {
        var terms: [SQLFragment] = []
        for key in order {
            let direction = key.descending ? " DESC" : ""
            switch key.field {
            case .column(.channels): continue  // Arrays tie.
            case .column(let column):
                // One type per column: nulls first ascending, last descending, as SQLite sorts them.
                if let name = table.column(column) { terms.append(SQLFragment(name + direction)) }
            case .attribute(let path):
                let attribute = Attribute(path, in: table.attributes)
                terms.append(attribute.typeRank + SQLFragment(direction))
                terms.append(attribute.sortValue + SQLFragment(direction))
            }
        }
        terms.append(SQLFragment("id"))
        return .list(terms)
    }

    /// The value as SQLite stores it in a column: booleans as 1/0, dates as seconds since 1970.
    static func databaseValue(_ value: QueryValue) -> DatabaseValue {
        switch value {
        case .null: .null
        case .bool(let bool): bool.databaseValue
        case .number(let number): number.integerValue?.databaseValue ?? number.doubleValue.databaseValue
        case .string(let string): string.databaseValue
        case .date(let date): date.timeIntervalSince1970.databaseValue
        }
    }

    static func regexArguments(_ pattern: String, _ caseInsensitive: Bool) -> SQLFragment {
        .bound(pattern) + SQLFragment(", ") + .bound(caseInsensitive ? "i" : "")
    }

    // MARK: Scalar columns

    /// A scalar column (or an expression) of one kind; a null column is the field missing, and a
    /// value of another type never equals it nor orders against it (SQLite itself would convert
    /// `'5'` to `5` for an integer column, and read `true` as `1`).
    struct Column {
        var name: String
        var kind: QueryField.Column.Kind
        var isNullable: Bool

        init(name: String, kind: QueryField.Column.Kind, isNullable: Bool) {
            self.name = name
            self.kind = kind
            self.isNullable = isNullable
        }

        func condition(_ op: QueryOperator) -> SQLFragment {
            switch op {
            case .equal(let value): equal(value)
            case .notEqual(let value): equal(value).negated
            case .in(let values): member(of: values)
            case .notIn(let values): member(of: values).negated
            case .all(let values): .joined(values.map(equal), by: "AND", empty: .true)
            case .exists(let exists):
                isNullable ? SQLFragment(exists ? "\(name) IS NOT NULL" : "\(name) IS NULL") : (exists ? .true : .false)
            case .compare(let comparison, let value):
                // Booleans have no order.
                if kind == .boolean {
                    .false
                } else {
                    operand(value).map {
                        guardedNotNull(SQLFragment("\(name) \(comparison.sqlOperator) ") + .bound($0))
                    } ?? .false
                }
            case .regex(let pattern, let caseInsensitive):
                kind == .string
                    ? SQLFragment("herald_regexp(") + regexArguments(pattern, caseInsensitive)
                        + SQLFragment(", \(name))")
                    : .false
            case .nearSphere, .withinBox: .false
            }
        }

        private func equal(_ value: QueryValue) -> SQLFragment { member(of: [value]) }

        private func member(of values: [QueryValue]) -> SQLFragment {
            var parts: [SQLFragment] = []
            let present = values.compactMap(operand)
            if !present.isEmpty {
                let marks = SQLFragment.list(present.map { .bound($0) })
                parts.append(guardedNotNull(SQLFragment("\(name) IN (") + marks + SQLFragment(")")))
            }
            if values.contains(.null), isNullable { parts.append(SQLFragment("\(name) IS NULL")) }
            return .joined(parts, by: "OR", empty: .false)
        }

        /// The value as the column stores it; nil when it is of another type (or null).
        private func operand(_ value: QueryValue) -> DatabaseValue? {
            switch (kind, value) {
            case (.string, .string), (.integer, .number), (.boolean, .bool), (.date, .date): databaseValue(value)
            default: nil
            }
        }

        /// A comparison that would be NULL on a NULL column is 0 there instead.
        private func guardedNotNull(_ comparison: SQLFragment) -> SQLFragment {
            isNullable ? (SQLFragment("(\(name) IS NOT NULL AND ") + comparison + SQLFragment(")")) : comparison
        }
    }

    // MARK: Arrays

    /// A test on the elements of the `channels` JSON array (always present, never null).
    static func channels(_ op: QueryOperator) -> SQLFragment {
        func anyElement(_ predicate: SQLFragment) -> SQLFragment {
            SQLFragment("EXISTS (SELECT 1 FROM json_each(channels) WHERE type = 'text' AND ") + predicate
                + SQLFragment(")")
        }
        /// Whether an element equals one of the values (channel names are strings, so nothing else matches).
        func member(of values: [QueryValue]) -> SQLFragment {
            let names = values.filter { if case .string = $0 { true } else { false } }
            guard !names.isEmpty else { return .false }
            return anyElement(
                SQLFragment("value IN (") + .list(names.map { .bound(databaseValue($0)) }) + SQLFragment(")"))
        }
        func equal(_ value: QueryValue) -> SQLFragment { member(of: [value]) }
        switch op {
        case .equal(let value): return equal(value)
        case .notEqual(let value): return equal(value).negated
        case .in(let values): return member(of: values)
        case .notIn(let values): return member(of: values).negated
        case .all(let values): return .joined(values.map(equal), by: "AND", empty: .true)
        case .exists(let exists): return exists ? .true : .false
        case .compare(let comparison, let value):
            guard case .string = value else { return .false }
            return anyElement(SQLFragment("value \(comparison.sqlOperator) ") + .bound(databaseValue(value)))
        case .regex(let pattern, let caseInsensitive):
            return anyElement(
                SQLFragment("herald_regexp(") + regexArguments(pattern, caseInsensitive) + SQLFragment(", value)"))
        case .nearSphere, .withinBox: return .false
        }
    }

    /// A value in a JSON object column (`attributes`), at a path of validated keys.
    struct Attribute {
        /// The JSON path, as in `$."profile"."level"`.
        var path: String
        /// The JSON column.
        var attributes: String

        init(_ keys: [String], in attributes: String) {
            path = "$" + keys.map { ".\"\($0)\"" }.joined()
            self.attributes = attributes
        }

        /// The rank of the value's type in ``QueryOrder``'s order: missing or null, numbers,
        /// strings, booleans, arrays and objects.
        var typeRank: SQLFragment {
            SQLFragment("(CASE json_type(\(attributes), ") + .bound(path)
                + SQLFragment(
                    ") WHEN 'integer' THEN 1 WHEN 'real' THEN 1 WHEN 'text' THEN 2 WHEN 'false' THEN 3"
                        + " WHEN 'true' THEN 3 WHEN 'array' THEN 4 WHEN 'object' THEN 4 ELSE 0 END)")
        }

        /// The value within its type (booleans as 0 and 1); NULL for arrays and objects, which tie.
        var sortValue: SQLFragment {
            SQLFragment("(CASE WHEN json_type(\(attributes), ") + .bound(path)
                + SQLFragment(") IN ('integer', 'real', 'text', 'true', 'false') THEN json_extract(\(attributes), ")
                + .bound(path) + SQLFragment(") END)")
        }

        func condition(_ op: QueryOperator) -> SQLFragment {
            switch op {
            case .equal(let value): equal(value)
            case .notEqual(let value): equal(value).negated
            case .in(let values): member(of: values)
            case .notIn(let values): member(of: values).negated
            case .all(let values): .joined(values.map(equal), by: "AND", empty: .true)
            case .exists(let exists): exists ? present : present.negated
            case .compare(let comparison, let value):
                switch value {
                case .string:
                    anyElement(
                        SQLFragment("type = 'text' AND value \(comparison.sqlOperator) ")
                            + .bound(databaseValue(value)))
                case .number:
                    anyElement(
                        SQLFragment("type IN ('integer', 'real') AND value \(comparison.sqlOperator) ")
                            + .bound(databaseValue(value)))
                case .null, .bool, .date: .false
                }
            case .regex(let pattern, let caseInsensitive):
                anyElement(
                    SQLFragment("type = 'text' AND herald_regexp(") + regexArguments(pattern, caseInsensitive)
                        + SQLFragment(", value)"))
            case .nearSphere(let center, let maxDistance):
                maxDistance.map { distance in
                    SQLFragment("COALESCE(herald_geo_distance(") + object + SQLFragment(", ") + .bound(center.latitude)
                        + SQLFragment(", ") + .bound(center.longitude) + SQLFragment(") <= ") + .bound(distance)
                        + SQLFragment(", 0)")
                }
                    ?? (SQLFragment("herald_geo_distance(") + object + SQLFragment(", 0, 0) IS NOT NULL"))
            case .withinBox(let southwest, let northeast):
                SQLFragment("herald_geo_within(") + object + SQLFragment(", ") + .bound(southwest.latitude)
                    + SQLFragment(", ") + .bound(southwest.longitude) + SQLFragment(", ") + .bound(northeast.latitude)
                    + SQLFragment(", ") + .bound(northeast.longitude) + SQLFragment(")")
            }
        }

        /// The value at the path as JSON text when it is an object (a GeoPoint), else NULL.
        private var object: SQLFragment {
            SQLFragment("(CASE json_type(\(attributes), ") + .bound(path)
                + SQLFragment(") WHEN 'object' THEN json_extract(\(attributes), ")
                + .bound(path) + SQLFragment(") END)")
        }

        /// Present and not null; JSON null and a missing key both read as NULL here.
        private var present: SQLFragment {
            SQLFragment("COALESCE(json_type(\(attributes), ") + .bound(path) + SQLFragment("), 'null') <> 'null'")
        }

        private func equal(_ value: QueryValue) -> SQLFragment { member(of: [value]) }

        /// Whether the field equals one of the values: null for a missing or null field, else
        /// one `json_each` pass for all the others.
        private func member(of values: [QueryValue]) -> SQLFragment {
            var parts: [SQLFragment] = []
            let predicates = values.compactMap(equalityPredicate)
            if !predicates.isEmpty { parts.append(anyElement(.joined(predicates, by: "OR", empty: .false))) }
            if values.contains(.null) { parts.append(present.negated) }
            return .joined(parts, by: "OR", empty: .false)
        }

        /// Type-strict equality of an element with a non-null value. SQL reads JSON `true` as
        /// the integer 1, so the JSON type is compared as well as the value: a number never
        /// equals a string or a boolean. Nil when no element can equal the value.
        private func equalityPredicate(_ value: QueryValue) -> SQLFragment? {
            switch value {
            case .string: SQLFragment("(type = 'text' AND value = ") + .bound(databaseValue(value)) + SQLFragment(")")
            case .number:
                SQLFragment("(type IN ('integer', 'real') AND value = ") + .bound(databaseValue(value))
                    + SQLFragment(")")
            case .bool(let bool): SQLFragment(bool ? "type = 'true'" : "type = 'false'")
            case .null, .date: nil
            }
        }

        /// Whether the value at the path, or one of its elements when it is an array, satisfies
        /// `predicate` (over json_each's `type` and `value`). `json_each` on an object would walk
        /// its members, which are not the field's values, so objects are excluded first.
        private func anyElement(_ predicate: SQLFragment) -> SQLFragment {
            SQLFragment("(json_type(\(attributes), ") + .bound(path)
                + SQLFragment(") IS NOT 'object' AND EXISTS (SELECT 1 FROM json_each(\(attributes), ") + .bound(path)
                + SQLFragment(") WHERE ") + predicate + SQLFragment("))")
        }
    }
}

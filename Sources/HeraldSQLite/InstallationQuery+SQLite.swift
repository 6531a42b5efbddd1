import Foundation
import GRDB
import HeraldCore

extension InstallationQuery {
    /// The query as a boolean SQL expression over the `installations` table, with its arguments,
    /// for a `WHERE` clause (`WHERE app_id = ? AND <condition>`). Values are always bound, and
    /// attribute paths (bound too) are built from keys the parser validated.
    ///
    /// The expression is never NULL, so it can be negated safely, and selects exactly the
    /// installations ``InstallationQuery/matches(_:)`` accepts (see ``QueryCompiler``). A `$regex`
    /// condition calls ``regexpFunction``, which the connection must have (see there).
    public func sqliteCondition() -> (sql: String, arguments: StatementArguments) {
        SQLiteQueryDialect.compiler.expression(self, over: .installations).statement
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

extension QueryTable {
    /// The `installations` table.
    static let installations = QueryTable(attributes: "attributes", hasChannels: true) { $0.installationColumn }
}

extension SQLFragment {
    /// The SQL with `?` placeholders, and its arguments.
    var statement: (sql: String, arguments: StatementArguments) {
        (rendered { _ in "?" }, StatementArguments(values.map(\.databaseValue)))
    }
}

extension SQLValue {
    /// The value as SQLite binds it: booleans as 1 and 0; a list, which SQLite has no type for,
    /// as its JSON text.
    var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .bool(let bool): bool.databaseValue
        case .integer(let integer): integer.databaseValue
        case .double(let double): double.databaseValue
        case .text(let text): text.databaseValue
        case .texts(let texts):
            String(decoding: JSONValue.array(texts.map(JSONValue.string)).serialized(), as: UTF8.self).databaseValue
        }
    }
}

/// SQLite's spelling of a query (with JSON1): JSON access through `json_type`, `json_extract` and
/// `json_each` over JSON paths (`$."profile"."level"`, bound), regular expressions and GeoPoints
/// through Herald's functions (``InstallationQuery/regexpFunction``…), booleans as 1 and 0. Text
/// compares by its bytes already (`BINARY`).
struct SQLiteQueryDialect: QueryDialect {
    static let compiler = QueryCompiler(SQLiteQueryDialect())

    var trueLiteral: String { "1" }
    var falseLiteral: String { "0" }
    var byteOrder: String { "" }

    func missingColumn(_ kind: QueryField.Column.Kind) -> String { "NULL" }

    func orderTerm(_ column: String, kind: QueryField.Column.Kind, descending: Bool) -> String {
        // SQLite sorts nulls first ascending, last descending.
        column + (descending ? " DESC" : "")
    }

    /// The value as SQLite stores it in a column: booleans as 1/0, dates as seconds since 1970.
    func bound(_ value: QueryValue) -> SQLFragment {
        switch value {
        case .null: .bound(.null)
        case .bool(let bool): .bound(.bool(bool))
        case .number(let number): .bound(number.integerValue.map(SQLValue.integer) ?? .double(number.doubleValue))
        case .string(let string): .bound(.text(string))
        case .date(let date): .bound(.double(date.timeIntervalSince1970))
        }
    }

    func regex(_ subject: String, pattern: String, caseInsensitive: Bool) -> SQLFragment {
        SQLFragment("herald_regexp(") + .bound(pattern) + SQLFragment(", ") + .bound(caseInsensitive ? "i" : "")
            + SQLFragment(", \(subject))")
    }

    func channelElement(where predicate: SQLFragment) -> SQLFragment {
        SQLFragment("EXISTS (SELECT 1 FROM json_each(channels) WHERE type = 'text' AND ") + predicate
            + SQLFragment(")")
    }

    func channelsContain(anyOf names: [String]) -> SQLFragment {
        channelElement(where: SQLFragment("value IN (") + .list(names.map { .bound($0) }) + SQLFragment(")"))
    }

    /// The JSON path, as in `$."profile"."level"`, bound.
    private func path(_ attribute: QueryAttribute) -> SQLFragment {
        .bound("$" + attribute.keys.map { ".\"\($0)\"" }.joined())
    }

    func type(of attribute: QueryAttribute) -> SQLFragment {
        SQLFragment("json_type(\(attribute.column), ") + path(attribute) + SQLFragment(")")
    }

    /// `json_each` on an object would walk its members, which are not the field's values, so
    /// objects are excluded first.
    func element(of attribute: QueryAttribute, where predicate: SQLFragment) -> SQLFragment {
        SQLFragment("(") + type(of: attribute) + SQLFragment(" IS NOT 'object' AND EXISTS (SELECT 1 FROM json_each(")
            + SQLFragment("\(attribute.column), ") + path(attribute) + SQLFragment(") WHERE ") + predicate
            + SQLFragment("))")
    }

    var elementIsText: String { "type = 'text'" }
    var elementText: String { "value" }
    var elementIsNumber: String { "type IN ('integer', 'real')" }
    var elementNumber: String { "value" }

    /// One `json_each` pass for all the values. SQL reads JSON `true` as the integer 1, so the JSON
    /// type is compared as well as the value.
    func attribute(_ attribute: QueryAttribute, equalsAnyOf values: [QueryValue]) -> SQLFragment {
        let predicates = values.compactMap { value -> SQLFragment? in
            switch value {
            case .string: SQLFragment("(\(elementIsText) AND value = ") + bound(value) + SQLFragment(")")
            case .number: SQLFragment("(\(elementIsNumber) AND value = ") + bound(value) + SQLFragment(")")
            case .bool(let bool): SQLFragment(bool ? "type = 'true'" : "type = 'false'")
            case .null, .date: nil
            }
        }
        return element(of: attribute, where: .joined(predicates, by: "OR", empty: SQLFragment(falseLiteral)))
    }

    /// The value as JSON text when it is an object (a GeoPoint), else NULL.
    func geoPoint(_ attribute: QueryAttribute) -> SQLFragment {
        SQLFragment("(CASE ") + type(of: attribute) + SQLFragment(" WHEN 'object' THEN json_extract(")
            + SQLFragment("\(attribute.column), ") + path(attribute) + SQLFragment(") END)")
    }

    /// The type's rank, then the value within its type (booleans as 0 and 1; NULL for arrays and
    /// objects, which tie).
    func orderTerms(_ attribute: QueryAttribute, descending: Bool) -> [SQLFragment] {
        let direction = SQLFragment(descending ? " DESC" : "")
        return [
            SQLFragment("(CASE ") + type(of: attribute)
                + SQLFragment(
                    " WHEN 'integer' THEN 1 WHEN 'real' THEN 1 WHEN 'text' THEN 2 WHEN 'false' THEN 3"
                        + " WHEN 'true' THEN 3 WHEN 'array' THEN 4 WHEN 'object' THEN 4 ELSE 0 END)") + direction,
            SQLFragment("(CASE WHEN ") + type(of: attribute)
                + SQLFragment(" IN ('integer', 'real', 'text', 'true', 'false') THEN json_extract(")
                + SQLFragment("\(attribute.column), ") + path(attribute) + SQLFragment(") END)") + direction,
        ]
    }
}

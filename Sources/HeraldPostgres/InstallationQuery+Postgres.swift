import Foundation
import HeraldCore
import PostgresNIO

extension InstallationQuery {
    /// The query as a boolean SQL expression over the `installations` table, for a `WHERE` clause
    /// whose earlier parameters end at `firstParameter - 1`; its placeholders are numbered from
    /// `firstParameter` on. Values and attribute keys are always bound.
    ///
    /// The expression is never NULL, so it can be negated safely, and selects exactly the
    /// installations ``InstallationQuery/matches(_:)`` accepts (see ``QueryCompiler``). Equality on
    /// an attribute is containment (`@>`), which the `jsonb_path_ops` GIN index on `attributes` serves.
    func postgresCondition(firstParameter: Int) -> (sql: String, values: [SQLBind]) {
        PostgresQueryDialect.compiler.expression(self, over: .installations).numbered(from: firstParameter)
    }
}

extension QueryTable {
    /// The `installations` table.
    static let installations = QueryTable(attributes: "attributes", hasChannels: true) {
        // What deliveries write lives in a table of its own (see PostgresMigrations.v12InstallationDeliveries).
        $0 == .lastDeliveredAt ? PostgresStore.lastDelivered() : $0.installationColumn
    }
}

extension SQLFragment {
    /// The SQL with its marks numbered `$firstParameter`, `$firstParameter + 1`…, and its values.
    func numbered(from firstParameter: Int) -> (sql: String, values: [SQLBind]) {
        (rendered { "$\(firstParameter + $0)" }, values.map(\.bind))
    }
}

extension SQLValue {
    /// The value as PostgresNIO binds it.
    var bind: SQLBind {
        switch self {
        case .null: nil
        case .bool(let bool): bool
        case .integer(let integer): Int(integer)
        case .double(let double): double
        case .text(let text): text
        case .texts(let texts): texts
        }
    }
}

/// PostgreSQL's spelling of a query over `jsonb`: a path is `attributes -> $1::text -> $2::text`
/// (`->` with a text key is NULL on an array, so a path never indexes into one), equality is
/// containment (`@>`), channel membership is `?|`, numbers compare as `numeric` (bound as their
/// exact decimal text), text in byte order (`COLLATE "C"`), regular expressions are `~` and `~*`,
/// and an attribute's elements come from `herald_query_elements` (see PostgresMigrations).
struct PostgresQueryDialect: QueryDialect {
    static let compiler = QueryCompiler(PostgresQueryDialect())

    var trueLiteral: String { "TRUE" }
    var falseLiteral: String { "FALSE" }
    var byteOrder: String { " COLLATE \"C\"" }

    func missingColumn(_ kind: QueryField.Column.Kind) -> String {
        switch kind {
        case .string: "NULL::text"
        case .integer: "NULL::bigint"
        case .boolean: "NULL::boolean"
        case .date: "NULL::float8"
        case .strings: "NULL::jsonb"
        }
    }

    func orderTerm(_ column: String, kind: QueryField.Column.Kind, descending: Bool) -> String {
        column + (kind == .string ? byteOrder : "") + (descending ? " DESC NULLS LAST" : " ASC NULLS FIRST")
    }

    /// Numbers as their exact decimal text, compared as `numeric`; dates as seconds since 1970.
    func bound(_ value: QueryValue) -> SQLFragment {
        switch value {
        case .null: .bound(.null)
        case .bool(let bool): .bound(.bool(bool))
        case .number(let number): .bound(.text(number.description), cast: "::numeric")
        case .string(let string): .bound(.text(string))
        case .date(let date): .bound(.double(date.timeIntervalSince1970), cast: "::float8")
        }
    }

    func regex(_ subject: String, pattern: String, caseInsensitive: Bool) -> SQLFragment {
        SQLFragment(subject + (caseInsensitive ? " ~* " : " ~ ")) + .bound(pattern)
    }

    func channelElement(where predicate: SQLFragment) -> SQLFragment {
        SQLFragment("EXISTS (SELECT 1 FROM jsonb_array_elements_text(channels) AS c(value) WHERE ") + predicate
            + SQLFragment(")")
    }

    func channelsContain(anyOf names: [String]) -> SQLFragment {
        SQLFragment("channels ?| ") + .bound(.texts(names), cast: "::text[]")
    }

    /// The value at the path: `(attributes -> $1::text -> $2::text)`.
    private func value(_ attribute: QueryAttribute) -> SQLFragment {
        attribute.keys.reduce(SQLFragment("(\(attribute.column)")) {
            $0 + SQLFragment(" -> ") + .bound(.text($1), cast: "::text")
        } + SQLFragment(")")
    }

    func type(of attribute: QueryAttribute) -> SQLFragment {
        SQLFragment("jsonb_typeof") + value(attribute)
    }

    func element(of attribute: QueryAttribute, where predicate: SQLFragment) -> SQLFragment {
        SQLFragment("EXISTS (SELECT 1 FROM herald_query_elements") + value(attribute) + SQLFragment(" AS e WHERE ")
            + predicate + SQLFragment(")")
    }

    var elementIsText: String { "jsonb_typeof(e) = 'string'" }
    var elementText: String { "(e #>> '{}')" }
    var elementIsNumber: String { "jsonb_typeof(e) = 'number'" }
    var elementNumber: String { "(e #>> '{}')::numeric" }

    /// Containment of each value, or of an array holding it (a field that is an array matches by
    /// one of its elements): jsonb compares by type, and numbers by value (1 equals 1.0).
    func attribute(_ attribute: QueryAttribute, equalsAnyOf values: [QueryValue]) -> SQLFragment {
        /// `{"k1": {"k2": leaf}}`, as JSON text.
        func document(_ leaf: JSONValue) -> SQLValue {
            let nested = attribute.keys.reversed().reduce(leaf) { inner, key in JSONValue.object([key: inner]) }
            return .text(String(decoding: nested.serialized(), as: UTF8.self))
        }
        let column = attribute.column
        let containments = values.compactMap { value -> SQLFragment? in
            let json: JSONValue
            switch value {
            case .bool(let bool): json = .bool(bool)
            case .number(let number): json = .number(number)
            case .string(let string): json = .string(string)
            case .null, .date: return nil
            }
            return SQLFragment("(\(column) @> ") + .bound(document(json), cast: "::jsonb")
                + SQLFragment(" OR \(column) @> ") + .bound(document(.array([json])), cast: "::jsonb")
                + SQLFragment(")")
        }
        return .joined(containments, by: "OR", empty: SQLFragment(falseLiteral))
    }

    func geoPoint(_ attribute: QueryAttribute) -> SQLFragment { value(attribute) }

    func orderTerms(_ attribute: QueryAttribute, descending: Bool) -> [SQLFragment] {
        let direction = SQLFragment(descending ? " DESC" : " ASC")
        let value = value(attribute)
        let type = type(of: attribute)
        return [
            SQLFragment("(CASE ") + type
                + SQLFragment(
                    " WHEN 'number' THEN 1 WHEN 'string' THEN 2 WHEN 'boolean' THEN 3 WHEN 'array' THEN 4"
                        + " WHEN 'object' THEN 4 ELSE 0 END)") + direction,
            SQLFragment("(CASE WHEN ") + type + SQLFragment(" = 'number' THEN (") + value
                + SQLFragment(" #>> '{}')::numeric END)") + direction,
            SQLFragment("(CASE WHEN ") + type + SQLFragment(" = 'string' THEN (") + value
                + SQLFragment(" #>> '{}') END) COLLATE \"C\"") + direction,
            SQLFragment("(CASE WHEN ") + type + SQLFragment(" = 'boolean' THEN (") + value
                + SQLFragment(" #>> '{}')::boolean END)") + direction,
        ]
    }
}

import Foundation
import HeraldCore
import Testing

/// The shared query compiler without a database: the SQL and values it emits, through a dialect
/// that spells every hook recognisably, so each test shows what the compiler decides (structure,
/// nulls, types, negation) apart from what a store spells. The stores' suites show their own
/// dialects' SQL (`QuerySQLTests` in HeraldSQLiteTests and HeraldPostgresTests).
@Suite("Query compiler")
struct QueryCompilerTests {
    /// Spells each hook as a call naming it, with its operands.
    struct Spelled: QueryDialect {
        var trueLiteral: String { "T" }
        var falseLiteral: String { "F" }
        var byteOrder: String { " BYTES" }
        func missingColumn(_ kind: QueryField.Column.Kind) -> String { "MISSING" }
        func orderTerm(_ column: String, kind: QueryField.Column.Kind, descending: Bool) -> String {
            column + (descending ? " DOWN" : " UP")
        }
        func bound(_ value: QueryValue) -> SQLFragment {
            switch value {
            case .null: .bound(.null)
            case .bool(let bool): .bound(.bool(bool))
            case .number(let number): .bound(.double(number.doubleValue), cast: "::n")
            case .string(let string): .bound(.text(string))
            case .date(let date): .bound(.double(date.timeIntervalSince1970), cast: "::d")
            }
        }
        func regex(_ subject: String, pattern: String, caseInsensitive: Bool) -> SQLFragment {
            SQLFragment("regex(\(subject), ") + .bound(pattern) + SQLFragment(caseInsensitive ? ", i)" : ")")
        }
        func channelElement(where predicate: SQLFragment) -> SQLFragment {
            SQLFragment("channel(") + predicate + SQLFragment(")")
        }
        func channelsContain(anyOf names: [String]) -> SQLFragment {
            SQLFragment("channels_any(") + .bound(.texts(names)) + SQLFragment(")")
        }
        private func path(_ attribute: QueryAttribute) -> String {
            ([attribute.column] + attribute.keys).joined(separator: ".")
        }
        func type(of attribute: QueryAttribute) -> SQLFragment { SQLFragment("type(\(path(attribute)))") }
        func element(of attribute: QueryAttribute, where predicate: SQLFragment) -> SQLFragment {
            SQLFragment("element(\(path(attribute)), ") + predicate + SQLFragment(")")
        }
        var elementIsText: String { "is_text" }
        var elementText: String { "text" }
        var elementIsNumber: String { "is_number" }
        var elementNumber: String { "number" }
        func attribute(_ attribute: QueryAttribute, equalsAnyOf values: [QueryValue]) -> SQLFragment {
            SQLFragment("equals(\(path(attribute)), ") + .list(values.map(bound)) + SQLFragment(")")
        }
        func geoPoint(_ attribute: QueryAttribute) -> SQLFragment { SQLFragment("geo(\(path(attribute)))") }
        func orderTerms(_ attribute: QueryAttribute, descending: Bool) -> [SQLFragment] {
            [SQLFragment("rank(\(path(attribute)))"), SQLFragment("value(\(path(attribute)))")]
        }
    }

    private let compiler = QueryCompiler(Spelled())
    private static let installations = QueryTable(attributes: "attributes", hasChannels: true) {
        $0.installationColumn
    }

    private func compile(_ json: String, over table: QueryTable = installations) -> (String, [SQLValue]) {
        let query: InstallationQuery
        do {
            query = try InstallationQuery(parsing: JSONValue.parse(Array(json.utf8)))
        } catch {
            Issue.record(error)
            return ("", [])
        }
        return compile(query, over: table)
    }

    /// For a condition the parser refuses (a value of the wrong type for the field): the stores
    /// get such conditions from other parsers (a dialect's) and must still match nothing.
    private func compile(_ query: InstallationQuery, over table: QueryTable = installations) -> (String, [SQLValue]) {
        let fragment = compiler.expression(query, over: table)
        return (fragment.rendered { "$\($0 + 1)" }, fragment.values)
    }

    private func condition(_ column: QueryField.Column, _ op: QueryOperator) -> InstallationQuery {
        .condition(field: .column(column), op: op)
    }

    @Test("A nullable column: one IN for the values, IS NULL for null, each guarded against NULL")
    func nullableColumn() throws {
        #expect(
            compile(#"{"user_id": {"$in": ["a", "b", null]}}"#)
                == ("((user_id IS NOT NULL AND user_id IN ($1, $2)) OR user_id IS NULL)", [.text("a"), .text("b")]))
        #expect(
            compile(#"{"user_id": {"$ne": null}}"#) == ("NOT (user_id IS NULL)", []))
        #expect(compile(#"{"user_id": {"$exists": false}}"#) == ("user_id IS NULL", []))
        #expect(
            compile(#"{"locale": {"$regex": "^fr", "$options": "i"}}"#)
                == ("(locale IS NOT NULL AND regex(locale, $1, i))", [.text("^fr")]))
    }

    @Test("Types compare strictly: a value of another type than the column's matches nothing")
    func strictTypes() throws {
        #expect(compile(condition(.badge, .equal(.string("5")))) == ("F", []))
        #expect(compile(condition(.badge, .notIn([.string("5"), .null]))) == ("NOT (F)", []))
        #expect(compile(condition(.valid, .compare(.greaterThan, .bool(false)))) == ("F", []))
        #expect(compile(#"{"platform": {"$exists": true}}"#) == ("T", []))
        #expect(compile(#"{"badge": {"$gte": 2}}"#) == ("badge >= $1::n", [.double(2)]))
        #expect(
            compile(#"{"app_version": {"$lt": "2.0"}}"#)
                == ("(app_version IS NOT NULL AND app_version BYTES < $1)", [.text("2.0")]))
    }

    @Test("A column the table lacks is the field missing")
    func missingColumn() throws {
        #expect(
            compile(#"{"user_id": {"$in": ["a", null]}}"#, over: .records)
                == ("((MISSING IS NOT NULL AND MISSING IN ($1)) OR MISSING IS NULL)", [.text("a")]))
        #expect(compile(#"{"channels": "news"}"#, over: .records) == ("F", []))
    }

    @Test("Channels: membership through the dialect, only strings, $all one test per name")
    func channels() throws {
        #expect(
            compile(condition(.channels, .in([.string("a"), .number(1)]))) == ("channels_any($1)", [.texts(["a"])]))
        #expect(compile(condition(.channels, .equal(.number(1)))) == ("F", []))
        #expect(
            compile(#"{"channels": {"$all": ["a", "b"]}}"#)
                == ("(channels_any($1) AND channels_any($2))", [.texts(["a"]), .texts(["b"])]))
        #expect(
            compile(#"{"channels": {"$gt": "m"}}"#) == ("channel(value BYTES > $1)", [.text("m")]))
    }

    @Test("Attributes: null is missing, dates never match, comparisons on one element of the value's type")
    func attributes() throws {
        #expect(
            compile(#"{"attributes.level": {"$in": [1, null, "x"]}}"#)
                == (
                    "(equals(attributes.level, $1::n, $2) OR NOT (COALESCE(type(attributes.level), 'null') <> 'null'))",
                    [.double(1), .text("x")]
                ))
        #expect(
            compile(#"{"vip": {"$exists": true}}"#) == ("COALESCE(type(attributes.vip), 'null') <> 'null'", []))
        #expect(
            compile(#"{"attributes.a.b": {"$lte": 3}}"#)
                == ("element(attributes.a.b, is_number AND number <= $1::n)", [.double(3)]))
        #expect(
            compile(#"{"tag": {"$regex": "x"}}"#) == (
                "element(attributes.tag, is_text AND regex(text, $1))", [.text("x")]
            ))
        #expect(compile(.condition(field: .attribute(["tag"]), op: .compare(.greaterThan, .bool(true)))) == ("F", []))
    }

    @Test("GeoPoints: a distance bound or any point, and a box")
    func geoPoints() throws {
        let home = QueryField.attribute(["home"])
        let point = try #require(GeoPoint(latitude: 1, longitude: 2))
        let corner = try #require(GeoPoint(latitude: 3, longitude: 4))
        func compile(_ op: QueryOperator) -> (String, [SQLValue]) {
            let fragment = compiler.expression(.condition(field: home, op: op), over: Self.installations)
            return (fragment.rendered { "$\($0 + 1)" }, fragment.values)
        }
        #expect(
            compile(.nearSphere(point, maxDistance: 0.5))
                == (
                    "COALESCE(herald_geo_distance(geo(attributes.home), $1, $2) <= $3, F)",
                    [.double(1), .double(2), .double(0.5)]
                ))
        #expect(
            compile(.nearSphere(point, maxDistance: nil))
                == ("(herald_geo_distance(geo(attributes.home), 0, 0) IS NOT NULL)", []))
        #expect(
            compile(.withinBox(southwest: point, northeast: corner))
                == (
                    "herald_geo_within(geo(attributes.home), $1, $2, $3, $4)",
                    [.double(1), .double(2), .double(3), .double(4)]
                ))
        #expect(compile(.compare(.lessThan, .date(Date(timeIntervalSince1970: 0)))) == ("F", []))
    }

    @Test("And, or, and their empty forms; placeholders number across the whole expression")
    func combinations() throws {
        #expect(
            compile(#"{"$or": [{"platform": "ios"}, {"badge": 1}], "locale": "fr"}"#)
                == (
                    "((platform IN ($1) OR badge IN ($2::n)) AND (locale IS NOT NULL AND locale IN ($3)))",
                    [.text("ios"), .double(1), .text("fr")]
                ))
        #expect(compiler.expression(InstallationQuery.and([]), over: Self.installations).sql == "T")
        #expect(compiler.expression(InstallationQuery.or([]), over: Self.installations).sql == "F")
    }

    @Test("Order: columns and attribute terms through the dialect, arrays skipped, the id last")
    func order() {
        let order: [QueryOrder<QueryField>] = [
            QueryOrder(.column(.badge), descending: true), QueryOrder(.column(.channels)),
            QueryOrder(.attribute(["level"])),
        ]
        #expect(
            compiler.orderBy(order, over: Self.installations).sql
                == "badge DOWN, rank(attributes.level), value(attributes.level), id")
        #expect(compiler.orderBy([QueryOrder(.column(.userID))], over: .records).sql == "id")
    }

    @Test("Notification queries read each field's expression")
    func notifications() {
        let query = NotificationQuery.and([
            .condition(field: .failedOrInvalid, op: .compare(.greaterThan, .number(0))),
            .condition(field: .source, op: .equal(.null)),
        ])
        let fragment = compiler.expression(query)
        #expect(
            fragment.sql.replacingOccurrences(of: "\u{1}", with: "?")
                == "((failed + invalid) > ?::n AND source IS NULL)")
        #expect(
            compiler.orderBy([QueryOrder(NotificationQuery.Field.changedAt, descending: true)])
                == "COALESCE(completed_at, started_at, created_at) DOWN, id")
    }
}

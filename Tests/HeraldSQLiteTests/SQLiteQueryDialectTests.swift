import Foundation
import GRDB
import HeraldCore
import Testing

@testable import HeraldSQLite

/// The SQL the shared compiler emits in SQLite's dialect, without a database: the shapes the
/// listings' and audiences' indexes and JSON1 functions rely on. Whether the SQL selects the right
/// rows is `InstallationQuerySQLiteTests`' and the conformance suite's to show.
@Suite("Query SQL in SQLite's dialect")
struct SQLiteQueryDialectTests {
    private func compile(_ json: String, over table: QueryTable = .installations) -> (String, [SQLValue]) {
        let query: InstallationQuery
        do {
            query = try InstallationQuery(parsing: JSONValue.parse(Array(json.utf8)))
        } catch {
            Issue.record(error)
            return ("", [])
        }
        let fragment = SQLiteQueryDialect.compiler.expression(query, over: table)
        return (fragment.statement.sql, fragment.values)
    }

    @Test("Columns: one IN over bound values, booleans as 1 and 0, dates as seconds")
    func columns() throws {
        #expect(
            compile(#"{"user_id": {"$in": ["a", null]}}"#)
                == ("((user_id IS NOT NULL AND user_id IN (?)) OR user_id IS NULL)", [.text("a")]))
        #expect(
            compile(#"{"$and": [{"valid": true}, {"badge": {"$gt": 1.5}}]}"#) == (
                "(valid IN (?) AND badge > ?)", [.bool(true), .double(1.5)]
            ))
        #expect(
            compile(#"{"created_at": {"$lt": "2026-01-01T00:00:00Z"}}"#)
                == ("created_at < ?", [.double(1_767_225_600)]))
        #expect(SQLValue.bool(true).databaseValue == 1.databaseValue)
        #expect(
            compile(#"{"device_model": {"$regex": "x"}}"#)
                == ("(device_model IS NOT NULL AND herald_regexp(?, ?, device_model))", [.text("x"), .text("")]))
    }

    @Test("Channels and attributes through json_each, the path bound")
    func json() throws {
        #expect(
            compile(#"{"channels": {"$in": ["a", "b"]}}"#)
                == (
                    "EXISTS (SELECT 1 FROM json_each(channels) WHERE type = 'text' AND value IN (?, ?))",
                    [.text("a"), .text("b")]
                ))
        let path = SQLValue.text(#"$."profile"."level""#)
        #expect(
            compile(#"{"attributes.profile.level": {"$in": [3, true]}}"#)
                == (
                    "(json_type(attributes, ?) IS NOT 'object' AND EXISTS (SELECT 1 FROM json_each(attributes, ?)"
                        + " WHERE ((type IN ('integer', 'real') AND value = ?) OR type = 'true')))",
                    [path, path, .integer(3)]
                ))
        #expect(
            compile(#"{"attributes.profile.level": {"$exists": false}}"#)
                == ("NOT (COALESCE(json_type(attributes, ?), 'null') <> 'null')", [path]))
        #expect(compile(#"{"vip": true}"#, over: .records).0.contains("json_each(fields, ?)"))
    }

    @Test("Order: a column as SQLite sorts it, an attribute by type rank then value, the id last")
    func order() {
        let order: [QueryOrder<QueryField>] = [
            QueryOrder(.column(.badge), descending: true), QueryOrder(.attribute(["n"])),
        ]
        let sql = SQLiteQueryDialect.compiler.orderBy(order, over: .installations).statement.sql
        #expect(sql.hasPrefix("badge DESC, (CASE json_type(attributes, ?) WHEN 'integer' THEN 1"))
        #expect(sql.hasSuffix("THEN json_extract(attributes, ?) END), id"))
        #expect(
            SQLiteQueryDialect.compiler.orderBy([QueryOrder(NotificationQuery.Field.changedAt, descending: true)])
                == "COALESCE(completed_at, started_at, created_at) DESC, id")
    }
}

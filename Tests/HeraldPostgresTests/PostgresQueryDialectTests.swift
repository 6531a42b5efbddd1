import Foundation
import HeraldCore
import Testing

@testable import HeraldPostgres

/// The SQL the shared compiler emits in PostgreSQL's dialect, without a database: the shapes the
/// indexes rely on (containment for the `jsonb_path_ops` GIN index on `attributes`, `?|` on
/// `channels`) and the placeholders numbered after the statement's own. Whether the SQL selects the
/// right rows is `InstallationQueryPostgresTests`' and the conformance suite's to show.
@Suite("Query SQL in PostgreSQL's dialect")
struct PostgresQueryDialectTests {
    private func compile(_ json: String) -> (String, [SQLValue]) {
        let query: InstallationQuery
        do {
            query = try InstallationQuery(parsing: JSONValue.parse(Array(json.utf8)))
        } catch {
            Issue.record(error)
            return ("", [])
        }
        let fragment = PostgresQueryDialect.compiler.expression(query, over: .installations)
        return (fragment.numbered(from: 2).sql, fragment.values)
    }

    @Test("Columns: numbers as numeric text, text in byte order, placeholders from the first given")
    func columns() throws {
        #expect(
            compile(#"{"$and": [{"badge": {"$in": [1, 2.5]}}, {"app_version": {"$gte": "2"}}]}"#)
                == (
                    #"(badge IN ($2::numeric, $3::numeric) AND (app_version IS NOT NULL AND app_version COLLATE "C" >= $4))"#,
                    [.text("1"), .text("2.5"), .text("2")]
                ))
        #expect(
            compile(#"{"locale": {"$regex": "^fr", "$options": "i"}}"#)
                == ("(locale IS NOT NULL AND locale ~* $2)", [.text("^fr")]))
        #expect(compile(#"{"valid": {"$ne": false}}"#) == ("NOT (valid IN ($2))", [.bool(false)]))
    }

    @Test("Channels by ?|, attributes by containment, elements through herald_query_elements")
    func json() throws {
        #expect(compile(#"{"channels": {"$in": ["a", "b"]}}"#) == ("channels ?| $2::text[]", [.texts(["a", "b"])]))
        #expect(
            compile(#"{"attributes.profile.level": 3}"#)
                == (
                    "(attributes @> $2::jsonb OR attributes @> $3::jsonb)",
                    [.text(#"{"profile":{"level":3}}"#), .text(#"{"profile":{"level":[3]}}"#)]
                ))
        #expect(
            compile(#"{"attributes.level": {"$lt": 3}}"#)
                == (
                    "EXISTS (SELECT 1 FROM herald_query_elements(attributes -> $2::text) AS e"
                        + " WHERE jsonb_typeof(e) = 'number' AND (e #>> '{}')::numeric < $3::numeric)",
                    [.text("level"), .text("3")]
                ))
    }

    @Test("Order: nulls placed as the order says, text in byte order, the id last")
    func order() {
        let order: [QueryOrder<QueryField>] = [
            QueryOrder(.column(.userID), descending: true), QueryOrder(.column(.badge)),
        ]
        #expect(
            PostgresQueryDialect.compiler.orderBy(order, over: .installations).sql
                == #"user_id COLLATE "C" DESC NULLS LAST, badge ASC NULLS FIRST, id"#)
        #expect(
            PostgresQueryDialect.compiler.orderBy([QueryOrder(NotificationQuery.Field.createdAt)])
                == "created_at ASC NULLS FIRST, id")
    }
}

import GRDB
import HeraldCore

extension NotificationQuery {
    /// The query as a boolean SQL expression over the `notifications` table, never NULL.
    func sqliteFragment() -> SQLFragment {
        switch self {
        case .and(let queries): .joined(queries.map { $0.sqliteFragment() }, by: "AND", empty: .true)
        case .or(let queries): .joined(queries.map { $0.sqliteFragment() }, by: "OR", empty: .false)
        case .condition(let field, let op):
            SQLiteQueryCompiler.Column(
                name: field.sqlExpression, kind: field.kind, isNullable: field.isNullable
            ).condition(op)
        }
    }

    /// `ORDER BY` terms for `order`, then the id (see ``QueryOrder``), without the keywords. Each
    /// field holds one type: nulls first ascending, last descending, as SQLite sorts them.
    static func sqliteOrderBy(_ order: [QueryOrder<Field>]) -> String {
        (order.map { $0.field.sqlExpression + ($0.descending ? " DESC" : "") } + ["id"]).joined(separator: ", ")
    }
}

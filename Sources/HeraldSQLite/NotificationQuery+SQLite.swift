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
                name: field.sqliteExpression, kind: field.kind, isNullable: field.isNullable
            ).condition(op)
        }
    }

    /// `ORDER BY` terms for `order`, then the id (see ``QueryOrder``), without the keywords. Each
    /// field holds one type: nulls first ascending, last descending, as SQLite sorts them.
    static func sqliteOrderBy(_ order: [QueryOrder<Field>]) -> String {
        (order.map { $0.field.sqliteExpression + ($0.descending ? " DESC" : "") } + ["id"]).joined(separator: ", ")
    }
}

extension NotificationQuery.Field {
    /// The column, or the expression, holding the field: times as seconds since 1970.
    fileprivate var sqliteExpression: String {
        switch self {
        case .failedOrInvalid: "(failed + invalid)"
        case .changedAt: "COALESCE(completed_at, started_at, created_at)"
        case .id, .status, .source, .targeted, .sent, .failed, .invalid, .createdAt, .startedAt, .completedAt,
            .notBefore, .expiresAt:
            rawValue
        }
    }
}

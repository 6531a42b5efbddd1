import HeraldCore
import PostgresNIO

extension NotificationQuery {
    /// The query as a boolean SQL expression over the `notifications` table, never NULL, its
    /// parameters still marked.
    func postgresFragment() -> PostgresFragment {
        switch self {
        case .and(let queries): .joined(queries.map { $0.postgresFragment() }, by: "AND", empty: .true)
        case .or(let queries): .joined(queries.map { $0.postgresFragment() }, by: "OR", empty: .false)
        case .condition(let field, let op): field.postgresColumn.condition(op)
        }
    }

    /// `ORDER BY` terms for `order`, then the id (see ``QueryOrder``), without the keywords.
    static func postgresOrderBy(_ order: [QueryOrder<Field>]) -> String {
        (order.map { $0.field.postgresColumn.orderBy($0.descending).sql } + ["id"]).joined(separator: ", ")
    }
}

extension NotificationQuery.Field {
    /// The column, or the expression, holding the field: times as seconds since 1970.
    fileprivate var postgresColumn: PostgresQueryCompiler.Column {
        PostgresQueryCompiler.Column(name: sqlExpression, kind: kind, isNullable: isNullable)
    }
}

import Foundation
import HeraldCore
import PostgresNIO

/// The listings a dialect queries (its installation and push classes): each query compiled to one
/// SQL statement, so a page costs what its rows cost rather than a walk through the whole app.
extension PostgresStore {
    public func installations(
        appID: String, matching query: InstallationQuery, order: [QueryOrder<QueryField>], skip: Int, limit: Int
    ) async throws -> [Installation] {
        let compiler = PostgresQueryDialect.compiler
        let (condition, values) =
            (SQLFragment("app_id = ") + .bound(appID) + SQLFragment(" AND ")
            + compiler.expression(query, over: .installations).parenthesized + SQLFragment(" ORDER BY ")
            + compiler.orderBy(order, over: .installations)
            + SQLFragment(" LIMIT ") + .bound(limit) + SQLFragment(" OFFSET ") + .bound(skip))
            .numbered(from: 1)
        return try await read { connection in try await self.fetchInstallations(connection, where: condition, values) }
    }

    public func countInstallations(appID: String, matching query: InstallationQuery) async throws -> Int {
        let (sql, values) =
            (SQLFragment("SELECT count(*) AS n FROM installations WHERE app_id = ") + .bound(appID)
            + SQLFragment(" AND ") + PostgresQueryDialect.compiler.expression(query, over: .installations).parenthesized)
            .numbered(from: 1)
        return try await count(sql, values)
    }

    public func notifications(
        appID: String, matching query: NotificationQuery, order: [QueryOrder<NotificationQuery.Field>], skip: Int,
        limit: Int
    ) async throws -> [PushNotification] {
        let (sql, values) =
            (SQLFragment("SELECT \(Self.notificationColumns) FROM notifications WHERE app_id = ") + .bound(appID)
            + SQLFragment(" AND ") + PostgresQueryDialect.compiler.expression(query).parenthesized
            + SQLFragment(" ORDER BY \(PostgresQueryDialect.compiler.orderBy(order)) LIMIT ") + .bound(limit)
            + SQLFragment(" OFFSET ") + .bound(skip)).numbered(from: 1)
        return try await read { connection in try await connection.rows(sql, values) }.map(decodeNotification)
    }

    public func countNotifications(appID: String, matching query: NotificationQuery) async throws -> Int {
        let (sql, values) =
            (SQLFragment("SELECT count(*) AS n FROM notifications WHERE app_id = ") + .bound(appID)
            + SQLFragment(" AND ") + PostgresQueryDialect.compiler.expression(query).parenthesized).numbered(from: 1)
        return try await count(sql, values)
    }

    private func count(_ sql: String, _ values: [SQLBind]) async throws -> Int {
        let rows = try await read { connection in try await connection.rows(sql, values) }
        return try rows.first?.get("n", as: Int.self) ?? 0
    }
}

import Foundation
import HeraldCore
import PostgresNIO

/// The listings a dialect queries (its installation and push classes): each query compiled to one
/// SQL statement, so a page costs what its rows cost rather than a walk through the whole app.
extension PostgresStore {
    public func installations(
        appID: String, matching query: InstallationQuery, order: [QueryOrder<QueryField>], skip: Int, limit: Int
    ) async throws -> [Installation] {
        let compiler = PostgresQueryCompiler(table: .installations)
        let (condition, values) =
            (PostgresFragment("app_id = ") + .bound(appID) + PostgresFragment(" AND ")
            + compiler.expression(query).parenthesized + PostgresFragment(" ORDER BY ") + compiler.orderBy(order)
            + PostgresFragment(" LIMIT ") + .bound(limit) + PostgresFragment(" OFFSET ") + .bound(skip))
            .numbered(from: 1)
        return try await read { connection in try await self.fetchInstallations(connection, where: condition, values) }
    }

    public func countInstallations(appID: String, matching query: InstallationQuery) async throws -> Int {
        let (sql, values) =
            (PostgresFragment("SELECT count(*) AS n FROM installations WHERE app_id = ") + .bound(appID)
            + PostgresFragment(" AND ") + query.postgresFragment(over: .installations).parenthesized)
            .numbered(from: 1)
        return try await count(sql, values)
    }

    public func notifications(
        appID: String, matching query: NotificationQuery, order: [QueryOrder<NotificationQuery.Field>], skip: Int,
        limit: Int
    ) async throws -> [PushNotification] {
        let (sql, values) =
            (PostgresFragment("SELECT \(Self.notificationColumns) FROM notifications WHERE app_id = ") + .bound(appID)
            + PostgresFragment(" AND ") + query.postgresFragment().parenthesized
            + PostgresFragment(" ORDER BY \(NotificationQuery.postgresOrderBy(order)) LIMIT ") + .bound(limit)
            + PostgresFragment(" OFFSET ") + .bound(skip)).numbered(from: 1)
        return try await read { connection in try await connection.rows(sql, values) }.map(decodeNotification)
    }

    public func countNotifications(appID: String, matching query: NotificationQuery) async throws -> Int {
        let (sql, values) =
            (PostgresFragment("SELECT count(*) AS n FROM notifications WHERE app_id = ") + .bound(appID)
            + PostgresFragment(" AND ") + query.postgresFragment().parenthesized).numbered(from: 1)
        return try await count(sql, values)
    }

    private func count(_ sql: String, _ values: [SQLBind]) async throws -> Int {
        let rows = try await read { connection in try await connection.rows(sql, values) }
        return try rows.first?.get("n", as: Int.self) ?? 0
    }
}

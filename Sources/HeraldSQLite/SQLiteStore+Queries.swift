import Foundation
import GRDB
import HeraldCore

/// The listings a dialect queries (its installation and push classes): each query compiled to one
/// SQL statement, so a page costs what its rows cost rather than a walk through the whole app.
extension SQLiteStore {
    public func installations(
        appID: String, matching query: InstallationQuery, order: [QueryOrder<QueryField>], skip: Int, limit: Int
    ) async throws -> [Installation] {
        let compiler = SQLiteQueryDialect.compiler
        let (sql, arguments) =
            (SQLFragment("SELECT * FROM installations WHERE app_id = ") + .bound(appID) + SQLFragment(" AND ")
            + compiler.expression(query, over: .installations).parenthesized + SQLFragment(" ORDER BY ")
            + compiler.orderBy(order, over: .installations)
            + SQLFragment(" LIMIT ") + .bound(limit) + SQLFragment(" OFFSET ") + .bound(skip)).statement
        return try await database.read { db in try self.fetchInstallations(db, sql: sql, arguments: arguments) }
    }

    public func countInstallations(appID: String, matching query: InstallationQuery) async throws -> Int {
        let (sql, arguments) =
            (SQLFragment("SELECT count(*) FROM installations WHERE app_id = ") + .bound(appID)
            + SQLFragment(" AND ") + SQLiteQueryDialect.compiler.expression(query, over: .installations).parenthesized)
            .statement
        return try await database.read { db in try Int.fetchOne(db, sql: sql, arguments: arguments) ?? 0 }
    }

    public func notifications(
        appID: String, matching query: NotificationQuery, order: [QueryOrder<NotificationQuery.Field>], skip: Int,
        limit: Int
    ) async throws -> [PushNotification] {
        let (sql, arguments) =
            (SQLFragment("SELECT * FROM notifications WHERE app_id = ") + .bound(appID) + SQLFragment(" AND ")
            + SQLiteQueryDialect.compiler.expression(query).parenthesized
            + SQLFragment(" ORDER BY \(SQLiteQueryDialect.compiler.orderBy(order)) LIMIT ") + .bound(limit)
            + SQLFragment(" OFFSET ") + .bound(skip)).statement
        return try await database.read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map(self.decodeNotification)
        }
    }

    public func countNotifications(appID: String, matching query: NotificationQuery) async throws -> Int {
        let (sql, arguments) =
            (SQLFragment("SELECT count(*) FROM notifications WHERE app_id = ") + .bound(appID)
            + SQLFragment(" AND ") + SQLiteQueryDialect.compiler.expression(query).parenthesized).statement
        return try await database.read { db in try Int.fetchOne(db, sql: sql, arguments: arguments) ?? 0 }
    }
}

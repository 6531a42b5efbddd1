import Foundation
import GRDB
import HeraldCore

// The methods of `LeanCloudUserStore`, the protocol its dialect (`HeraldLeanCloud`) declares; this module
// does not import the dialect, so `HeraldServer` declares the conformance (docs/architecture.md, "Adding a
// dialect").
extension SQLiteStore {
    public func putLeanCloudUser(_ user: LeanCloudUser) async throws {
        let fields = JSONValue.object(user.fields).serialized()
        try await durableWrite { db in
            try db.execute(
                sql: """
                    INSERT INTO lc_users (app_id, id, fields, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (app_id, id) DO UPDATE SET fields = excluded.fields, updated_at = excluded.updated_at
                    """,
                arguments: [
                    user.appID, user.id, String(decoding: fields, as: UTF8.self), user.createdAt.timeIntervalSince1970,
                    user.updatedAt.timeIntervalSince1970,
                ])
        }
    }

    public func leanCloudUser(appID: String, id: String) async throws -> LeanCloudUser? {
        try await database.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM lc_users WHERE app_id = ? AND id = ?", arguments: [appID, id])
                .map(Self.leanCloudUser)
        }
    }

    public func leanCloudUsers(appID: String, after: String?, limit: Int) async throws -> [LeanCloudUser] {
        try await database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM lc_users WHERE app_id = ? AND id > ? ORDER BY id LIMIT ?",
                arguments: [appID, after ?? "", limit]
            ).map(Self.leanCloudUser)
        }
    }

    public func leanCloudUserIDs(appID: String, matching query: InstallationQuery, limit: Int) async throws -> [String]
    {
        let (sql, arguments) =
            (SQLFragment("SELECT id FROM lc_users WHERE app_id = ") + .bound(appID) + SQLFragment(" AND ")
            + SQLiteQueryDialect.compiler.expression(query, over: .records).parenthesized
            + SQLFragment(" ORDER BY id LIMIT ")
            + .bound(limit)).statement
        return try await database.read { db in try String.fetchAll(db, sql: sql, arguments: arguments) }
    }

    public func deleteLeanCloudUser(appID: String, id: String) async throws -> Bool {
        try await durableWrite { db in
            try db.execute(sql: "DELETE FROM lc_users WHERE app_id = ? AND id = ?", arguments: [appID, id])
            return db.changesCount > 0
        }
    }

    private static func leanCloudUser(_ row: Row) throws -> LeanCloudUser {
        let text: String = row["fields"]
        return LeanCloudUser(
            appID: row["app_id"], id: row["id"], fields: try JSONValue.parse(Array(text.utf8)).objectValue ?? [:],
            createdAt: Date(timeIntervalSince1970: row["created_at"]),
            updatedAt: Date(timeIntervalSince1970: row["updated_at"]))
    }
}

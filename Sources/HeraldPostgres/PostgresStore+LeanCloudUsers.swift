import Foundation
import HeraldCore
import PostgresNIO

// The methods of `LeanCloudUserStore`, the protocol its dialect (`HeraldLeanCloud`) declares; this module
// does not import the dialect, so `HeraldServer` declares the conformance (docs/architecture.md, "Adding a
// dialect").
extension PostgresStore {
    public func putLeanCloudUser(_ user: LeanCloudUser) async throws {
        let fields = String(decoding: JSONValue.object(user.fields).serialized(), as: UTF8.self)
        try await read { connection in
            try await connection.run(
                """
                INSERT INTO lc_users (app_id, id, fields, created_at, updated_at) VALUES ($1, $2, $3::jsonb, $4, $5)
                ON CONFLICT (app_id, id) DO UPDATE SET fields = excluded.fields, updated_at = excluded.updated_at
                """,
                [
                    user.appID, user.id, fields, user.createdAt.timeIntervalSince1970,
                    user.updatedAt.timeIntervalSince1970,
                ])
        }
    }

    public func leanCloudUser(appID: String, id: String) async throws -> LeanCloudUser? {
        try await read { connection in
            try await connection.rows(
                "SELECT app_id, id, fields::text AS fields, created_at, updated_at FROM lc_users WHERE app_id = $1 AND id = $2",
                [appID, id])
        }.first.map(Self.leanCloudUser)
    }

    public func leanCloudUsers(appID: String, after: String?, limit: Int) async throws -> [LeanCloudUser] {
        try await read { connection in
            try await connection.rows(
                """
                SELECT app_id, id, fields::text AS fields, created_at, updated_at FROM lc_users
                WHERE app_id = $1 AND id > $2 ORDER BY id LIMIT $3
                """, [appID, after ?? "", limit])
        }.map(Self.leanCloudUser)
    }

    public func leanCloudUserIDs(appID: String, matching query: InstallationQuery, limit: Int) async throws -> [String]
    {
        let (sql, values) =
            (SQLFragment("SELECT id FROM lc_users WHERE app_id = ") + .bound(appID) + SQLFragment(" AND ")
            + PostgresQueryDialect.compiler.expression(query, over: .records).parenthesized
            + SQLFragment(" ORDER BY id LIMIT ")
            + .bound(limit)).numbered(from: 1)
        return try await read { connection in try await connection.rows(sql, values) }.map {
            try $0.get("id", as: String.self)
        }
    }

    public func deleteLeanCloudUser(appID: String, id: String) async throws -> Bool {
        try await read { connection in
            try await connection.changes("DELETE FROM lc_users WHERE app_id = $1 AND id = $2", [appID, id]) > 0
        }
    }

    private static func leanCloudUser(_ row: PostgresRandomAccessRow) throws -> LeanCloudUser {
        let text = try row.get("fields", as: String.self)
        return LeanCloudUser(
            appID: try row.get("app_id"), id: try row.get("id"),
            fields: try JSONValue.parse(Array(text.utf8)).objectValue ?? [:],
            createdAt: try row.date("created_at") ?? Date(timeIntervalSince1970: 0),
            updatedAt: try row.date("updated_at") ?? Date(timeIntervalSince1970: 0))
    }
}

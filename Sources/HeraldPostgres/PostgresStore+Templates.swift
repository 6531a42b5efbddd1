import Foundation
import HeraldCore
import PostgresNIO

// Each app's templates, as on SQLite (`SQLiteStore+Templates`); a save takes the next revision in
// the statement that writes it, so two nodes saving at once never share one.
extension PostgresStore: TemplateStore {
    public func templates(appID: String) async throws -> [NotificationTemplate] {
        try await read { connection in
            try await connection.rows("SELECT * FROM templates WHERE app_id = $1 ORDER BY name", [appID])
        }.map(Self.template)
    }

    public func template(appID: String, name: String) async throws -> NotificationTemplate? {
        try await read { connection in
            try await connection.rows("SELECT * FROM templates WHERE app_id = $1 AND name = $2", [appID, name])
        }.first.map(Self.template)
    }

    public func saveTemplate(_ template: NotificationTemplate) async throws -> NotificationTemplate {
        let content = String(decoding: template.content.json.serialized(), as: UTF8.self)
        let rows = try await read { connection in
            try await connection.rows(
                """
                INSERT INTO templates (app_id, name, revision, content, configured, created_at, updated_at)
                VALUES ($1, $2, 1, $3, $4, $5, $6)
                ON CONFLICT (app_id, name) DO UPDATE SET revision = templates.revision + 1,
                    content = excluded.content, configured = excluded.configured, updated_at = excluded.updated_at
                RETURNING *
                """,
                [
                    template.appID, template.name, content, template.configured,
                    template.createdAt.timeIntervalSince1970, template.updatedAt.timeIntervalSince1970,
                ])
        }
        guard let row = rows.first else { throw HeraldError.internal("A template save returned nothing.") }
        return try Self.template(row)
    }

    public func deleteTemplate(appID: String, name: String) async throws -> Bool {
        try await read { connection in
            try await connection.changes("DELETE FROM templates WHERE app_id = $1 AND name = $2", [appID, name])
        } > 0
    }

    private static func template(_ row: PostgresRandomAccessRow) throws -> NotificationTemplate {
        let text: String = try row.get("content")
        return NotificationTemplate(
            appID: try row.get("app_id"), name: try row.get("name"),
            revision: Int(try row.get("revision", as: Int64.self)),
            content: try TemplateContent(stored: try JSONValue.parse(Array(text.utf8))),
            configured: try row.get("configured"),
            createdAt: try row.date("created_at") ?? Date(timeIntervalSince1970: 0),
            updatedAt: try row.date("updated_at") ?? Date(timeIntervalSince1970: 0))
    }
}

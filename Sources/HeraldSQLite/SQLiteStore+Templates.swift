import Foundation
import GRDB
import HeraldCore

extension SQLiteStore: TemplateStore {
    public func templates(appID: String) async throws -> [NotificationTemplate] {
        try await database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM templates WHERE app_id = ? ORDER BY name", arguments: [appID])
                .map(Self.template)
        }
    }

    public func template(appID: String, name: String) async throws -> NotificationTemplate? {
        try await database.read { db in
            try Row.fetchOne(
                db, sql: "SELECT * FROM templates WHERE app_id = ? AND name = ?", arguments: [appID, name]
            ).map(Self.template)
        }
    }

    public func saveTemplate(_ template: NotificationTemplate) async throws -> NotificationTemplate {
        let content = String(decoding: template.content.json.serialized(), as: UTF8.self)
        return try await durableWrite { db in
            // The next revision, in the write that stores it: two saves never share one.
            let row = try Row.fetchOne(
                db, sql: "SELECT revision, created_at FROM templates WHERE app_id = ? AND name = ?",
                arguments: [template.appID, template.name])
            var saved = template
            saved.revision = (row.map { $0["revision"] as Int } ?? 0) + 1
            if let row { saved.createdAt = Date(timeIntervalSince1970: row["created_at"]) }
            try db.execute(
                sql: """
                    INSERT INTO templates (app_id, name, revision, content, configured, created_at, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (app_id, name) DO UPDATE SET revision = excluded.revision,
                        content = excluded.content, configured = excluded.configured, updated_at = excluded.updated_at
                    """,
                arguments: [
                    saved.appID, saved.name, saved.revision, content, saved.configured,
                    saved.createdAt.timeIntervalSince1970, saved.updatedAt.timeIntervalSince1970,
                ])
            return saved
        }
    }

    public func deleteTemplate(appID: String, name: String) async throws -> Bool {
        try await durableWrite { db in
            try db.execute(sql: "DELETE FROM templates WHERE app_id = ? AND name = ?", arguments: [appID, name])
            return db.changesCount > 0
        }
    }

    private static func template(_ row: Row) throws -> NotificationTemplate {
        let text: String = row["content"]
        return NotificationTemplate(
            appID: row["app_id"], name: row["name"], revision: row["revision"],
            content: try TemplateContent(stored: try JSONValue.parse(Array(text.utf8))), configured: row["configured"],
            createdAt: Date(timeIntervalSince1970: row["created_at"]),
            updatedAt: Date(timeIntervalSince1970: row["updated_at"]))
    }
}

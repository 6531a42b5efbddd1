import Foundation
import HeraldCore
import HeraldTestSupport
import PostgresNIO
import Testing

@testable import HeraldPostgres

@Suite("PostgreSQL migration: the notifications' source column")
struct NotificationSourceMigrationPostgresTests {
    @Test("Notifications stored before the source column get theirs from their spec; sealed ones stay without")
    func backfill() async throws {
        let database = try await PostgresTestDatabase.create()
        let store = try PostgresStore.started(url: database.url, cipher: Fixtures.cipher())
        do {
            // The schema as it stood before v6, recorded as applied.
            let earlier = PostgresMigrations.all.prefix { $0.id != "v7_notification_source" }
            try await store.transaction { connection in
                try await connection.run(
                    "CREATE TABLE herald_migrations (version TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
                )
                for migration in earlier {
                    for statement in PostgresMigrations.statements(migration.sql) {
                        try await connection.run(statement)
                    }
                    try await connection.run("INSERT INTO herald_migrations (version) VALUES ($1)", [migration.id])
                }
                let rows: [(id: String, spec: String, sealed: Bool)] = [
                    ("n1", #"{"source":"leancloud","target":{"all":true},"payload":{"title":"a"}}"#, false),
                    ("n2", #"{"target":{"all":true},"payload":{"title":"b"}}"#, false),
                    ("n3", "sealed bytes, not JSON", true),
                ]
                for row in rows {
                    try await connection.run(
                        """
                        INSERT INTO notifications (id, app_id, status, spec, spec_sealed, created_at)
                        VALUES ($1, 'a', 'done', $2, $3, 0)
                        """, [row.id, Data(row.spec.utf8), row.sealed])
                }
            }
            try await store.migrate()
            let leanCloud = NotificationQuery.condition(field: .source, op: .equal(.string("leancloud")))
            #expect(try await store.countNotifications(appID: "a", matching: leanCloud) == 1)
            #expect(
                try await store.countNotifications(
                    appID: "a", matching: .condition(field: .source, op: .exists(false))) == 2)
        } catch {
            await store.close()
            try? await database.drop()
            throw error
        }
        await store.close()
        try await database.drop()
    }
}

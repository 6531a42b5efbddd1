import Foundation
import GRDB
import HeraldCore
import HeraldSQLite
import HeraldTestSupport
import Testing

@Suite("SQLite migration: the notifications' source column")
struct NotificationSourceMigrationTests {
    @Test("Notifications stored before the source column get theirs from their spec; sealed ones stay without")
    func backfill() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cipher = Fixtures.cipher()
        let old = try SQLiteStore(path: directory.file("m.sqlite"), cipher: cipher)
        try old.migrate(upTo: "v13_console_revocations")
        let queue = try DatabaseQueue(path: directory.file("m.sqlite"))
        let rows: [(id: String, spec: String, sealed: Bool)] = [
            ("n1", #"{"source":"leancloud","target":{"all":true},"payload":{"title":"a"}}"#, false),
            ("n2", #"{"target":{"all":true},"payload":{"title":"b"}}"#, false),
            ("n3", "not JSON: sealed bytes", true),
        ]
        try await queue.write { db in
            for row in rows {
                try db.execute(
                    sql: """
                        INSERT INTO notifications (id, app_id, status, spec, spec_sealed, created_at)
                        VALUES (?, 'a', 'done', ?, ?, 0)
                        """,
                    arguments: [row.id, Data(row.spec.utf8), row.sealed])
            }
        }
        try await old.migrate()
        let leanCloud = NotificationQuery.condition(field: .source, op: .equal(.string("leancloud")))
        #expect(try await old.countNotifications(appID: "a", matching: leanCloud) == 1)
        #expect(
            try await old.countNotifications(
                appID: "a", matching: .condition(field: .source, op: .exists(false))) == 2)
    }
}

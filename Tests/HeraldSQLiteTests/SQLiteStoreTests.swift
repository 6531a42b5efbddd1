import Foundation
import GRDB
import HeraldCore
import HeraldSQLite
import HeraldTestSupport
import Testing

@Suite("SQLite store")
struct SQLiteStoreTests {
    let directory: TemporaryDirectory
    let store: SQLiteStore
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    init() async throws {
        directory = try TemporaryDirectory()
        store = try SQLiteStore(path: directory.file("herald.sqlite"), cipher: Fixtures.cipher())
        try await store.migrate()
    }

    @Test("The database file never holds a token's bytes")
    func encryptedAtRest() async throws {
        let token = Fixtures.apnsToken()
        let fcm = Fixtures.fcmToken()
        let subscription = Fixtures.webPushSubscription()
        _ = try await store.register(
            InstallationRegistration(platform: .ios, service: .apns, token: .device(token)), appID: "a", now: now)
        _ = try await store.register(
            InstallationRegistration(platform: .android, service: .fcm, token: .device(fcm)), appID: "a", now: now)
        _ = try await store.register(
            InstallationRegistration(platform: .web, service: .webpush, token: .webPush(subscription)), appID: "a",
            now: now)
        let keys = try await store.insertAppKeys(AppKeys.generate(appID: "a"))
        var bytes = Data()
        for suffix in ["", "-wal", "-shm"] {
            bytes += (try? Data(contentsOf: URL(fileURLWithPath: directory.file("herald.sqlite" + suffix)))) ?? Data()
        }
        #expect(bytes.count > 0)
        for secret in [token, fcm, subscription.endpoint, subscription.p256dh, keys.serverKey, keys.clientKey] {
            #expect(bytes.range(of: Data(secret.utf8)) == nil)
        }
    }
}

extension SQLiteStoreTests {
    @Test("The checkpointer copies the write-ahead log into the database file beside the writer, until cancelled")
    func checkpointsBesideTheWriter() async throws {
        let file = directory.file("herald.sqlite")
        func size() -> Int { ((try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? Int) ?? 0 }
        for _ in 0..<300 {
            _ = try await store.register(
                InstallationRegistration(platform: .ios, service: .apns, token: .device(Fixtures.apnsToken())),
                appID: "a", now: now)
        }
        // The writer's own checkpoint waits for 8,192 pages: these rows are in the log only.
        let before = size()
        let checkpointer = Task { try await store.checkpointContinuously(every: .milliseconds(20)) }
        try await waitUntil("a checkpoint into the database file", detail: { "still \(before) bytes" }) {
            size() > before
        }
        checkpointer.cancel()
        try await checkpointer.value
        #expect(
            try await store.installations(appID: "a", filter: .init(), page: .init(after: nil, limit: 500)).count == 300
        )
    }
}

@Suite("SQLite migrations")
struct SQLiteMigrationTests {
    @Test("Migrating an empty database applies every migration, and again is a no-op")
    func fromEmpty() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore(path: directory.file("m.sqlite"), cipher: Fixtures.cipher())
        try await store.migrate()
        #expect(try await store.appliedMigrations() == SQLiteStore.migrator.migrations)
        try await store.migrate()
        try await store.ping()
    }

    @Test("Every earlier version migrates to the latest, keeping its data")
    func fromEveryVersion() async throws {
        for target in SQLiteStore.migrator.migrations {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let cipher = Fixtures.cipher()
            let old = try SQLiteStore(path: directory.file("m.sqlite"), cipher: cipher)
            try old.migrate(upTo: target)
            let keys = try await old.insertAppKeys(AppKeys.generate(appID: "default"))
            let reopened = try SQLiteStore(path: directory.file("m.sqlite"), cipher: cipher)
            try await reopened.migrate()
            #expect(try await reopened.appliedMigrations() == SQLiteStore.migrator.migrations)
            #expect(try await reopened.appKeys(appID: "default") == keys)
        }
    }

    @Test("The database is in WAL mode")
    func walMode() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try SQLiteStore(path: directory.file("w.sqlite"), cipher: Fixtures.cipher())
        let mode = try await DatabaseQueue(path: directory.file("w.sqlite")).read { db in
            try String.fetchOne(db, sql: "PRAGMA journal_mode")
        }
        #expect(mode == "wal")
    }
}

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

    private func ios(_ token: String, user: String? = nil, device: String? = nil) -> InstallationRegistration {
        InstallationRegistration(
            platform: .ios, service: .apns, token: .device(token), profile: .init(userID: user, deviceID: device))
    }

    @Test("A page commit renews its job's lease in the same transaction, only for the lock's owner")
    func commitRenewsLease() async throws {
        try await store.scheduleJob(kind: "notification", reference: "n1", runAt: now)
        let job = try #require(
            try await store.claimJob(
                kinds: ["notification"], owner: "w1", now: now, lockedUntil: now.addingTimeInterval(30)))
        var page = PageCommit(jobID: job.id, owner: "w1", notificationID: "n1")
        page.lockedUntil = now.addingTimeInterval(600)
        #expect(try await store.commit(page))
        // Past the first lease, within the renewed one: nobody else gets the job.
        let early = try await store.claimJob(
            kinds: ["notification"], owner: "w2", now: now.addingTimeInterval(60),
            lockedUntil: now.addingTimeInterval(90))
        #expect(early == nil)
        // A worker that does not hold the lock renews nothing.
        var stranger = PageCommit(jobID: job.id, owner: "w2", notificationID: "n1")
        stranger.lockedUntil = now.addingTimeInterval(10_000)
        #expect(try await !store.commit(stranger))
        let late = try await store.claimJob(
            kinds: ["notification"], owner: "w2", now: now.addingTimeInterval(700),
            lockedUntil: now.addingTimeInterval(730))
        #expect(late?.id == job.id)
    }

    @Test("Registering the same token twice keeps one installation")
    func upsertByToken() async throws {
        let token = Fixtures.apnsToken()
        let first = try await store.register(ios(token), appID: "a", now: now)
        var again = ios(token)
        again.locale = "fr"
        again.environment = .sandbox
        let second = try await store.register(again, appID: "a", now: now.addingTimeInterval(5))
        #expect(first.created)
        #expect(!second.created)
        #expect(second.installation.id == first.installation.id)
        #expect(second.installation.locale == "fr")
        #expect(second.installation.environment == .sandbox)
        let all = try await store.installations(appID: "a", filter: .init(), page: .init())
        #expect(all.count == 1)
    }

    @Test("Apps are isolated")
    func appsIsolated() async throws {
        let token = Fixtures.apnsToken()
        let one = try await store.register(ios(token), appID: "a", now: now)
        let other = try await store.register(ios(token), appID: "b", now: now)
        #expect(other.created)
        #expect(try await store.installation(appID: "b", id: one.installation.id) == nil)
    }

    @Test("With a device id, identity is (app, device_id, service) and the token can change")
    func upsertByDevice() async throws {
        let first = try await store.register(ios(Fixtures.apnsToken(), device: "phone-1"), appID: "a", now: now)
        let refreshedToken = Fixtures.apnsToken()
        let second = try await store.register(ios(refreshedToken, device: "phone-1"), appID: "a", now: now)
        #expect(second.installation.id == first.installation.id)
        #expect(second.installation.token == .device(refreshedToken))
        #expect(!second.created)
    }

    @Test("A token moves to the user and device that present it; one token, one installation")
    func tokenMoves() async throws {
        let token = Fixtures.apnsToken()
        let alice = try await store.register(ios(token, user: "alice"), appID: "a", now: now)
        let bob = try await store.register(ios(token, user: "bob"), appID: "a", now: now)
        #expect(bob.installation.id == alice.installation.id)
        #expect(bob.installation.userID == "bob")

        // The token shows up on another device record: it moves there and the old holder goes.
        let onDevice = try await store.register(ios(Fixtures.apnsToken(), device: "d2"), appID: "a", now: now)
        let moved = try await store.register(ios(token, device: "d2"), appID: "a", now: now)
        #expect(moved.installation.id == onDevice.installation.id)
        #expect(try await store.installation(appID: "a", id: alice.installation.id) == nil)
        #expect(try await store.installations(appID: "a", filter: .init(), page: .init()).count == 1)
    }

    @Test("Re-registering re-validates and resets the failure count")
    func revalidation() async throws {
        let token = Fixtures.apnsToken()
        var installation = try await store.register(ios(token), appID: "a", now: now).installation
        installation.valid = false
        installation.failureCount = 5
        installation.invalidatedAt = now
        installation.lastFailureReason = "Unregistered"
        _ = try await store.update(installation, now: now)
        #expect(try await store.installation(appID: "a", id: installation.id)?.valid == false)
        let again = try await store.register(ios(token), appID: "a", now: now.addingTimeInterval(60))
        #expect(again.installation.valid)
        #expect(again.installation.failureCount == 0)
        #expect(again.installation.invalidatedAt == nil)
    }

    @Test("Filters and keyset pages")
    func listing() async throws {
        for index in 0..<7 {
            var registration = ios(Fixtures.apnsToken(), user: index.isMultiple(of: 2) ? "even" : "odd")
            registration.channels = index < 3 ? ["news"] : ["sports"]
            _ = try await store.register(registration, appID: "a", now: now.addingTimeInterval(Double(index)))
        }
        _ = try await store.register(
            InstallationRegistration(platform: .android, service: .fcm, token: .device(Fixtures.fcmToken())),
            appID: "a", now: now)
        #expect(try await store.installations(appID: "a", filter: .init(userID: "even"), page: .init()).count == 4)
        #expect(try await store.installations(appID: "a", filter: .init(channel: "news"), page: .init()).count == 3)
        #expect(try await store.installations(appID: "a", filter: .init(platform: .android), page: .init()).count == 1)
        #expect(try await store.installations(appID: "a", filter: .init(service: .apns), page: .init()).count == 7)
        #expect(try await store.installations(appID: "a", filter: .init(valid: false), page: .init()).isEmpty)

        var seen: [String] = []
        var after: String?
        repeat {
            let page = try await store.installations(appID: "a", filter: .init(), page: .init(after: after, limit: 3))
            seen += page.map(\.id)
            after = page.count == 3 ? page.last?.id : nil
        } while after != nil
        #expect(seen.count == 8)
        #expect(seen == seen.sorted())
        #expect(Set(seen).count == 8)
    }

    @Test("Channels follow updates and deletes")
    func channelIndex() async throws {
        var registration = ios(Fixtures.apnsToken())
        registration.channels = ["news"]
        var installation = try await store.register(registration, appID: "a", now: now).installation
        installation.channels = ["sports"]
        _ = try await store.update(installation, now: now)
        #expect(try await store.installations(appID: "a", filter: .init(channel: "news"), page: .init()).isEmpty)
        #expect(try await store.installations(appID: "a", filter: .init(channel: "sports"), page: .init()).count == 1)
        #expect(try await store.deleteInstallation(appID: "a", id: installation.id))
        #expect(try await !store.deleteInstallation(appID: "a", id: installation.id))
        #expect(try await store.installations(appID: "a", filter: .init(channel: "sports"), page: .init()).isEmpty)
    }

    @Test("Web Push subscriptions round-trip")
    func webPush() async throws {
        let subscription = Fixtures.webPushSubscription()
        let registration = InstallationRegistration(platform: .web, service: .webpush, token: .webPush(subscription))
        let stored = try await store.register(registration, appID: "a", now: now).installation
        #expect(try await store.installation(appID: "a", id: stored.id)?.token == .webPush(subscription))
    }

    @Test("The database file never holds a token's bytes")
    func encryptedAtRest() async throws {
        let token = Fixtures.apnsToken()
        let fcm = Fixtures.fcmToken()
        let subscription = Fixtures.webPushSubscription()
        _ = try await store.register(ios(token), appID: "a", now: now)
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

    @Test("Generated app keys are stored once")
    func appKeys() async throws {
        #expect(try await store.appKeys(appID: "default") == nil)
        let first = try await store.insertAppKeys(AppKeys.generate(appID: "default"))
        let second = try await store.insertAppKeys(AppKeys.generate(appID: "default"))
        #expect(first == second)
        #expect(try await store.appKeys(appID: "default") == first)
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

import Foundation
import GRDB
import HeraldCore
import HeraldSQLite
import HeraldTestSupport
import Testing

@Suite("SQLite relay usage counters")
struct RelayUsageStoreTests {
    @Test("Counters are per app, service, token and day; a failed send gives its claim back; old days go")
    func keys() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore(path: directory.file("herald.sqlite"), cipher: Fixtures.cipher())
        try await store.migrate()
        let token = Fixtures.fcmToken()
        _ = try await store.claimRelaySend(appID: "demo", service: .fcm, token: token, day: "2026-11-24", maximum: 9)
        _ = try await store.claimRelaySend(appID: "demo", service: .fcm, token: token, day: "2026-11-25", maximum: 9)
        let failed = try await store.countRelayError(
            appID: "demo", service: .fcm, token: token, day: "2026-11-25", releasingClaim: true)
        #expect(failed == RelayUsage(accepted: 0, refused: 1))
        #expect(
            try await store.relayUsage(appID: "other", service: .fcm, token: token, day: "2026-11-25")
                == RelayUsage())
        #expect(
            try await store.relayUsage(appID: "demo", service: .sns, token: token, day: "2026-11-25")
                == RelayUsage())
        // The new day's claim removed the token's earlier day.
        #expect(
            try await store.relayUsage(appID: "demo", service: .fcm, token: token, day: "2026-11-24")
                == RelayUsage())
        // The token itself is never stored: only its keyed hash.
        let queue = try DatabaseQueue(path: directory.file("herald.sqlite"))
        let stored = try await queue.read { db in try Row.fetchAll(db, sql: "SELECT * FROM relay_usage") }
        #expect(stored.count == 1)
        let index: Data = try #require(stored.first?["token_index"])
        #expect(index.count == 32)
        #expect(!stored.description.contains(token))
    }
}

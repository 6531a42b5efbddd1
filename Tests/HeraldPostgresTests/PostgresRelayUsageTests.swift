import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldPostgres

@Suite("PostgreSQL relay counters")
struct PostgresRelayUsageTests {
    @Test("Relay claims on two nodes never accept more than the maximum; the token is stored hashed")
    func relayUsage() async throws {
        try await PostgresFixture.with { fixture in
            let other = try fixture.node()
            let nodes = [fixture.store, other]
            let token = Fixtures.fcmToken()
            let granted = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<20 {
                    let store = nodes[index % 2]
                    group.addTask {
                        try await store.claimRelaySend(
                            appID: "demo", service: .fcm, token: token, day: "2026-11-25", maximum: 5
                        ).granted
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(granted == 5)
            let usage = try await other.relayUsage(appID: "demo", service: .fcm, token: token, day: "2026-11-25")
            #expect(usage == RelayUsage(accepted: 5, refused: 15))
            let failed = try await fixture.store.countRelayError(
                appID: "demo", service: .fcm, token: token, day: "2026-11-25", releasingClaim: true)
            #expect(failed == RelayUsage(accepted: 4, refused: 16))
            _ = try await fixture.store.claimRelaySend(
                appID: "demo", service: .fcm, token: token, day: "2026-11-26", maximum: 5)
            #expect(
                try await other.relayUsage(appID: "demo", service: .fcm, token: token, day: "2026-11-25")
                    == RelayUsage())
            let dump = try await fixture.store.read { connection in
                try await connection.rows("SELECT t::text AS line FROM relay_usage t").map {
                    try $0.get("line", as: String.self)
                }
            }
            #expect(dump.count == 1)
            #expect(!dump.joined().contains(token))
            await other.close()
        }
    }

}

import Foundation
import HTTPTypes
import HeraldCore
import HeraldEngine
import HeraldProviderMocks
import HeraldSQLite
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

@Suite("Preferences, retries and token lifecycle in dispatch", .serialized)
struct DispatchRulesTests {
    @Test("Each preference rule: sources, categories, mute, quiet hours (skip and defer), sound, critical")
    func preferences() async throws {
        let harness = try await EngineHarness()
        // 23:30 in Paris (UTC+1 in winter).
        harness.server.clock.set(ISO8601DateFormatter().date(from: "2026-01-15T22:30:00Z")!)
        let tokens = (0..<6).map { _ in Fixtures.apnsToken() }
        try await harness.run { api in
            var ids: [String] = []
            for token in tokens {
                ids.append(try await api.register(#"{"platform":"ios","token":"\#(token)","timezone":"Europe/Paris"}"#))
            }
            let rules = [
                #"{"enabled_sources":["front-door"]}"#,
                #"{"enabled_categories":["person"]}"#,
                #"{"muted_until":"2026-01-16T00:00:00Z"}"#,
                #"{"quiet_hours":{"start":"22:00","end":"07:00"}}"#,
                #"{"quiet_hours":{"start":"22:00","end":"07:00"},"quiet_hours_mode":"defer"}"#,
                #"{"sound_enabled":false}"#,
            ]
            for (id, rule) in zip(ids, rules) {
                let stored = try await api.call(.put, "/v1/installations/\(id)/preferences", body: rule)
                #expect(stored.status == .ok, "\(rule): \(String(describing: stored.json))")
            }
            let read = try await api.call(.get, "/v1/installations/\(ids[3])/preferences")
            #expect(read["quiet_hours.start"] == .string("22:00"))
            let bad = try await api.call(
                .put, "/v1/installations/\(ids[0])/preferences",
                body: #"{"quiet_hours":{"start":"25:00","end":"07:00"}}"#)
            #expect(bad.status == .badRequest)
            #expect(bad.errorField == "quiet_hours.start")

            let id = try await api.send(
                #"{"target":{"all":true},"source":"garage","payload":{"title":"Vehicle","category":"vehicle","sound":"default"}}"#
            )
            try await harness.drain()
            let record = try await api.notification(id)
            #expect(record.int("counts.skipped_preferences") == 4)
            #expect(record.int("counts.sent") == 1)
            #expect(record.string("status") == "sending")
            let silent = try #require(harness.apns.requests.first)
            #expect(silent.token == tokens[5])
            #expect(silent.json?.objectValue?["aps"]?.objectValue?["sound"] == nil)
            let skipped = try await api.call(.get, "/v1/notifications/\(id)/deliveries?outcome=skipped")
            let reasons = Set(
                skipped.items.compactMap { $0.objectValue?["reason"] }.compactMap { value -> String? in
                    if case .string(let text) = value { return text }
                    return nil
                })
            #expect(reasons == ["source_disabled", "category_disabled", "muted", "quiet_hours"])

            // The deferred device gets it when its quiet hours end, 07:00 in Paris.
            harness.server.clock.set(ISO8601DateFormatter().date(from: "2026-01-16T05:59:00Z")!)
            try await harness.drain()
            #expect(harness.apns.requests.count == 1)
            harness.server.clock.set(ISO8601DateFormatter().date(from: "2026-01-16T06:00:00Z")!)
            try await harness.drain()
            #expect(harness.apns.requests.map(\.token) == [tokens[5], tokens[4]])
            #expect(try await api.notification(id).string("status") == "done")

            // A critical alert goes through quiet hours (but not through disabled sources).
            harness.server.clock.set(ISO8601DateFormatter().date(from: "2026-01-16T23:00:00Z")!)
            let critical = try await api.send(
                #"{"target":{"installation_ids":["\#(ids[3])","\#(ids[4])"]},"payload":{"title":"Smoke","interruption_level":"critical","sound":"alarm"}}"#
            )
            try await harness.drain()
            #expect(try await api.notification(critical).int("counts.sent") == 2)
            let last = try #require(harness.apns.requests.last)
            #expect(last.json?.objectValue?["aps"]?.objectValue?["sound"]?.objectValue?["critical"] == .number(1))
        }
    }

    @Test("Transient failures retry after Retry-After; a paused provider does not hold up the other")
    func retries() async throws {
        let harness = try await EngineHarness()
        let fcmToken = Fixtures.fcmToken()
        let apnsToken = Fixtures.apnsToken()
        try await harness.run { api in
            _ = try await api.register(#"{"platform":"android","token":"\#(fcmToken)"}"#)
            _ = try await api.register(#"{"platform":"ios","token":"\#(apnsToken)"}"#)
            harness.fcm.script(token: fcmToken, .quotaExceeded(retryAfter: 30), times: 1)
            let first = try await api.send(#"{"target":{"all":true},"payload":{"title":"one"}}"#)
            try await harness.drain()
            #expect(harness.fcm.requests.count == 1)
            #expect(harness.apns.requests.count == 1)
            var record = try await api.notification(first)
            #expect(record.string("status") == "sending")
            #expect(record.int("counts.rate_limited") == 1)

            // FCM is paused for 30 s: a second notification reaches APNs now and FCM later.
            harness.server.clock.advance(by: .seconds(5))
            let second = try await api.send(#"{"target":{"all":true},"payload":{"title":"two"}}"#)
            try await harness.drain()
            #expect(harness.apns.requests.count == 2)
            #expect(harness.fcm.requests.count == 1)
            #expect(try await api.notification(second).int("counts.rate_limited") == 1)

            harness.server.clock.advance(by: .seconds(20))
            try await harness.drain()
            #expect(harness.fcm.requests.count == 1)
            harness.server.clock.advance(by: .seconds(6))
            try await harness.drain()
            #expect(harness.fcm.requests.count == 3)
            record = try await api.notification(first)
            #expect(record.string("status") == "done")
            #expect(record.int("counts.sent") == 2)
            #expect(try await api.notification(second).string("status") == "done")
        }
    }

    @Test("Invalid tokens invalidate at once, a stale 410 does not, five failures deactivate")
    func tokenLifecycle() async throws {
        let harness = try await EngineHarness(
            engine: EngineConfiguration(retryPolicy: RetryPolicy(maxAttempts: 1), cleanupInterval: nil))
        let gone = Fixtures.apnsToken()
        let stale = Fixtures.apnsToken()
        let failing = Fixtures.apnsToken()
        try await harness.run { api in
            let goneID = try await api.register(#"{"platform":"ios","token":"\#(gone)"}"#)
            let staleID = try await api.register(#"{"platform":"ios","token":"\#(stale)"}"#)
            let failingID = try await api.register(#"{"platform":"ios","token":"\#(failing)"}"#)
            harness.apns.script(token: gone, .unregistered(since: harness.server.clock.date.addingTimeInterval(60)))
            // APNs saw the token go before the app registered it again: the 410 is stale.
            harness.apns.script(token: stale, .unregistered(since: harness.server.clock.date.addingTimeInterval(-3600)))
            harness.apns.script(token: failing, .error(status: 400, reason: "BadExpirationDate"))
            for round in 1...5 {
                let id = try await api.send(
                    #"{"target":{"installation_ids":["\#(failingID)","\#(goneID)","\#(staleID)"]},"payload":{"title":"\#(round)"}}"#
                )
                try await harness.drain()
                if round == 1 {
                    let record = try await api.notification(id)
                    #expect(record.int("counts.invalid") == 2)
                    #expect(record.int("counts.failed") == 1)
                }
                harness.server.clock.advance(by: .seconds(1))
            }
            #expect(try await api.call(.get, "/v1/installations/\(goneID)")["valid"] == .bool(false))
            #expect(try await api.call(.get, "/v1/installations/\(staleID)")["valid"] == .bool(true))
            let failingNow = try await api.call(.get, "/v1/installations/\(failingID)")
            #expect(failingNow["valid"] == .bool(false))
            #expect(failingNow.int("failure_count") == 5)
            #expect(harness.apns.requests.filter { $0.token == gone }.count == 1)

            // Registering the token again revives the installation.
            _ = try await api.register(#"{"platform":"ios","token":"\#(gone)"}"#)
            #expect(try await api.call(.get, "/v1/installations/\(goneID)")["valid"] == .bool(true))
        }
    }

    @Test("Clean-up deletes old invalid and failing installations and old notifications, keeps the rest")
    func cleanup() async throws {
        let harness = try await EngineHarness()
        let store = harness.server.store
        try await harness.run { api in
            let keep = try await api.register(#"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
            let invalidOld = try await api.register(#"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
            let invalidNew = try await api.register(#"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
            let failing = try await api.register(#"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
            let now = harness.server.clock.date
            try harness.server.execute(
                "UPDATE installations SET valid = 0, invalidated_at = ? WHERE id = ?",
                [now.addingTimeInterval(-31 * 86_400).timeIntervalSince1970, invalidOld])
            try harness.server.execute(
                "UPDATE installations SET valid = 0, invalidated_at = ? WHERE id = ?",
                [now.addingTimeInterval(-86_400).timeIntervalSince1970, invalidNew])
            try harness.server.execute(
                "UPDATE installations SET failure_count = 5, last_failure_at = ?, created_at = ? WHERE id = ?",
                [now.timeIntervalSince1970, now.addingTimeInterval(-8 * 86_400).timeIntervalSince1970, failing])
            let old = try await api.send(#"{"target":{"installation_ids":["\#(keep)"]},"payload":{"title":"x"}}"#)
            try await harness.drain()
            harness.server.clock.advance(by: .seconds(31 * 86_400))
            let report = try await store.cleanup(
                CleanupPolicy(), now: harness.server.clock.date.addingTimeInterval(-31 * 86_400 + 1))
            #expect(report.invalidInstallations == 1)
            #expect(report.failingInstallations == 1)
            #expect(report.notifications == 0)
            #expect(try await api.call(.get, "/v1/installations/\(invalidOld)").status == .notFound)
            #expect(try await api.call(.get, "/v1/installations/\(invalidNew)").status == .ok)
            #expect(try await api.call(.get, "/v1/installations/\(failing)").status == .notFound)
            let later = try await store.cleanup(
                CleanupPolicy(unseenAfter: .seconds(30 * 86_400)), now: harness.server.clock.date)
            #expect(later.notifications == 1)
            #expect(later.unseenInstallations + later.invalidInstallations == 2)
            #expect(try await api.notification(old).status == .notFound)
            #expect(try await api.call(.get, "/v1/installations/\(keep)").status == .notFound)
        }
    }

    @Test("LeanCloud's lifecycle: not updated for 60 days → invalid until saved again; invalid for 60 more → deleted")
    func staleLifecycle() async throws {
        let harness = try await EngineHarness()
        let store = harness.server.store
        let clock = harness.server.clock
        let day: TimeInterval = 86_400
        let leanCloud = CleanupPolicy(
            invalidAfter: .seconds(60 * 86_400), unseenAfter: .seconds(120 * 86_400),
            staleAfter: .seconds(60 * 86_400))
        try await harness.run { api in
            let tokenA = Fixtures.apnsToken()
            let a = try await api.register(#"{"platform":"ios","token":"\#(tokenA)"}"#)
            let tokenB = Fixtures.apnsToken()
            let b = try await api.register(#"{"platform":"ios","token":"\#(tokenB)"}"#)

            clock.advance(by: .seconds(59 * day))
            #expect(try await store.cleanup(leanCloud, now: clock.date).staleInstallations == 0)
            _ = try await api.register(#"{"platform":"ios","token":"\#(tokenB)"}"#)  // B's app saves it again
            clock.advance(by: .seconds(2 * day))
            let report = try await store.cleanup(leanCloud, now: clock.date)
            #expect(report.staleInstallations == 1)
            #expect(try await api.call(.get, "/v1/installations/\(a)")["valid"] == .bool(false))
            #expect(try await api.call(.get, "/v1/installations/\(b)")["valid"] == .bool(true))
            // A stale device is skipped.
            let sent = try await api.send(#"{"target":{"installation_ids":["\#(a)"]},"payload":{"title":"x"}}"#)
            try await harness.drain()
            #expect(try await api.notification(sent)["counts.sent"] == .number(0))
            #expect(harness.apns.requests.isEmpty)

            // Saved again within 60 days: valid again.
            clock.advance(by: .seconds(30 * day))
            _ = try await api.register(#"{"platform":"ios","token":"\#(tokenA)"}"#)
            #expect(try await api.call(.get, "/v1/installations/\(a)")["valid"] == .bool(true))

            // Never saved again: stale after 60 days, deleted 60 days after that.
            clock.advance(by: .seconds(61 * day))
            #expect(try await store.cleanup(leanCloud, now: clock.date).staleInstallations == 2)
            clock.advance(by: .seconds(61 * day))
            let final = try await store.cleanup(leanCloud, now: clock.date)
            #expect(final.invalidInstallations == 2)
            #expect(try await api.call(.get, "/v1/installations/\(a)").status == .notFound)
        }
    }

    @Test("ArgusAI's \"not used in 90 days\": clean-up by last delivery keeps devices that receive pushes")
    func cleanupUndelivered() async throws {
        let harness = try await EngineHarness()
        let store = harness.server.store
        try await harness.run { api in
            let receiving = try await api.register(#"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
            let silent = try await api.register(#"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
            let fresh = try await api.register(#"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
            let now = harness.server.clock.date
            let longAgo = now.addingTimeInterval(-120 * 86_400).timeIntervalSince1970
            // Both old devices registered 120 days ago and were not seen since; one still receives pushes.
            try harness.server.execute(
                "UPDATE installations SET created_at = ?, updated_at = ?, last_seen_at = NULL WHERE id IN (?, ?)",
                [longAgo, longAgo, receiving, silent])
            try harness.server.execute(
                "UPDATE installations SET last_delivered_at = ? WHERE id = ?",
                [now.addingTimeInterval(-86_400).timeIntervalSince1970, receiving])
            // A device that registered again yesterday but received nothing for 100 days still goes.
            try harness.server.execute(
                "UPDATE installations SET created_at = ?, last_delivered_at = ? WHERE id = ?",
                [longAgo, now.addingTimeInterval(-100 * 86_400).timeIntervalSince1970, fresh])

            let off = try await store.cleanup(CleanupPolicy(), now: now)
            #expect(off.undeliveredInstallations == 0)
            let report = try await store.cleanup(CleanupPolicy(undeliveredAfter: .seconds(90 * 86_400)), now: now)
            #expect(report.undeliveredInstallations == 2)
            #expect(report.unseenInstallations == 0)
            #expect(try await api.call(.get, "/v1/installations/\(receiving)").status == .ok)
            #expect(try await api.call(.get, "/v1/installations/\(silent)").status == .notFound)
            #expect(try await api.call(.get, "/v1/installations/\(fresh)").status == .notFound)

            // The "not seen" rule would have deleted the device that still receives pushes.
            let unseen = try await store.cleanup(CleanupPolicy(unseenAfter: .seconds(90 * 86_400)), now: now)
            #expect(unseen.unseenInstallations == 1)
            #expect(try await api.call(.get, "/v1/installations/\(receiving)").status == .notFound)
        }
    }
}

import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldPostgres

@Suite("PostgreSQL ledger, events and dialect records")
struct PostgresLedgerTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    private func notification(
        _ id: String, target: String = #"{"all": true}"#, key: String? = nil
    ) throws
        -> PushNotification
    {
        PushNotification(
            id: id, appID: "a", target: try NotificationTarget(parsing: try JSONValue.parse(Array(target.utf8))),
            payload: try NotificationPayload(parsing: .object(["title": .string("t")])), idempotencyKey: key,
            createdAt: now)
    }

    @Test("Notifications: idempotency, resolve by query, a page commit, pending deliveries, cancel, clean-up")
    func dispatchRoundTrip() async throws {
        try await PostgresFixture.with { fixture in
            let store = fixture.store
            var ids: [String] = []
            for index in 0..<4 {
                var registration = InstallationRegistration(
                    platform: .ios, service: .apns, token: .device(Fixtures.apnsToken()))
                registration.attributes = ["level": .number(JSONNumber(index))]
                ids.append(try await store.register(registration, appID: "a", now: now).installation.id)
            }
            let first = try await store.insertNotification(
                try notification("n1", target: #"{"where": {"level": {"$gte": 2}}}"#, key: "k"), runAt: now,
                idempotencyWindow: .seconds(3600))
            #expect(first.created)
            let repeated = try await store.insertNotification(
                try notification("n2", key: "k"), runAt: now, idempotencyWindow: .seconds(3600))
            #expect(!repeated.created)
            #expect(repeated.notification.id == "n1")
            let stored = try #require(try await store.notification(appID: "a", id: "n1"))
            let targets = try await store.resolve(stored.target, appID: "a", after: nil, limit: 10)
            #expect(targets.map(\.installationID) == ids.sorted().filter { id in ids.firstIndex(of: id)! >= 2 })
            #expect(try await store.count(stored.target, appID: "a") == [.apns: 2])

            let job = try #require(
                try await store.claimJob(
                    kinds: ["notification"], owner: "w", now: now, lockedUntil: now.addingTimeInterval(60)))
            var page = PageCommit(jobID: job.id, owner: "w", notificationID: "n1")
            page.ledger = [
                DeliveryRecord(
                    notificationID: "n1", installationID: targets[0].installationID, tokenSuffix: "abcd",
                    service: .apns, outcome: .delivered, providerID: "apns-1", attempts: 1, at: now),
                DeliveryRecord(
                    notificationID: "n1", installationID: targets[1].installationID, tokenSuffix: "efgh",
                    service: .apns, outcome: .retrying, reason: "TooManyRequests", attempts: 1, at: now),
            ]
            page.counts = NotificationCounts(targeted: 2, sent: 1)
            page.installationEvents = [(targets[0].installationID, .delivered(at: now))]
            page.pending = [
                PendingDelivery(
                    notificationID: "n1", recipient: targets[1].installationID, runAt: now.addingTimeInterval(30),
                    attempts: 1, reason: .retry),
                PendingDelivery(
                    notificationID: "n1", recipient: "direct-1", runAt: now.addingTimeInterval(3600), attempts: 0,
                    reason: .offline),
            ]
            page.cursor = "done"
            page.status = .sending
            page.startedAt = now
            #expect(try await store.commit(page))
            #expect(try await store.cursor(notificationID: "n1") == "done")
            let counted = try #require(try await store.notification(id: "n1"))
            #expect(counted.counts.sent == 1)
            #expect(counted.status == .sending)
            let ledger = try await store.deliveries(notificationID: "n1", outcome: nil, page: .init(limit: 1))
            #expect(ledger.map(\.record.outcome) == [.delivered])
            let rest = try await store.deliveries(
                notificationID: "n1", outcome: nil, page: .init(after: String(ledger[0].sequence)))
            #expect(rest.map(\.record.reason) == ["TooManyRequests"])
            #expect(try await store.nextPending(notificationID: "n1") == now.addingTimeInterval(30))
            #expect(try await store.duePending(notificationID: "n1", now: now, limit: 10).isEmpty)
            #expect(try await store.wakeOfflineDeliveries(recipient: "direct-1", now: now) == 1)
            #expect(
                try await store.duePending(notificationID: "n1", now: now, limit: 10).map(\.recipient) == ["direct-1"])
            #expect(try await store.installation(appID: "a", id: targets[0].installationID)?.lastDeliveredAt == now)
            #expect(try await store.incrementBadges(installationIDs: [ids[0]], now: now) == [ids[0]: 1])

            let canceled = try await store.cancelNotification(appID: "a", id: "n1", now: now)
            #expect(canceled?.status == .canceled)
            #expect(try await store.duePending(notificationID: "n1", now: now, limit: 10).isEmpty)
            #expect(try await store.notifications(appID: "a", status: .canceled, page: .init()).map(\.id) == ["n1"])
            let report = try await store.cleanup(CleanupPolicy(), now: now.addingTimeInterval(40 * 86_400))
            #expect(report.notifications == 1)
            #expect(try await store.notification(id: "n1") == nil)
        }
    }

    @Test("Failures deactivate; an invalidation older than the last update is ignored")
    func installationLifecycle() async throws {
        try await PostgresFixture.with { fixture in
            let store = fixture.store
            let id = try await store.register(
                InstallationRegistration(platform: .ios, service: .apns, token: .device(Fixtures.apnsToken())),
                appID: "a", now: now
            ).installation.id
            _ = try await store.insertNotification(try notification("n1"), runAt: now, idempotencyWindow: .zero)
            let job = try #require(
                try await store.claimJob(
                    kinds: ["notification"], owner: "w", now: now, lockedUntil: now.addingTimeInterval(60)))
            var stale = PageCommit(jobID: job.id, owner: "w", notificationID: "n1")
            stale.installationEvents = [
                (id, .invalidated(reason: "Unregistered", since: now.addingTimeInterval(-10), at: now))
            ]
            #expect(try await store.commit(stale))
            #expect(try await store.installation(appID: "a", id: id)?.valid == true)
            var failing = PageCommit(jobID: job.id, owner: "w", notificationID: "n1")
            failing.installationEvents = [
                (id, .failed(reason: "x", at: now, maxFailures: 2)),
                (id, .failed(reason: "x", at: now, maxFailures: 2)),
            ]
            #expect(try await store.commit(failing))
            let failed = try #require(try await store.installation(appID: "a", id: id))
            #expect(!failed.valid)
            #expect(failed.failureCount == 2)
            #expect(failed.invalidatedAt == now)
        }
    }

    @Test("Events: stored once per producer id, owners copied, a notification only with an audience")
    func events() async throws {
        try await PostgresFixture.with { fixture in
            let store = fixture.store
            _ = try await store.insertSourceDevice(
                SourceDevice(id: "cam", appID: "a", alias: "door", createdAt: now, updatedAt: now))
            await #expect(throws: HeraldError.self) {
                try await store.insertSourceDevice(
                    SourceDevice(id: "door", appID: "a", createdAt: now, updatedAt: now))
            }
            #expect(try await store.sourceDevice(appID: "a", reference: "door")?.id == "cam")
            _ = try await store.setOwnership(
                Ownership(appID: "a", deviceID: "cam", userID: "u1", status: .active, createdAt: now, updatedAt: now))
            #expect(
                try await store.setOwnership(
                    Ownership(
                        appID: "a", deviceID: "nope", userID: "u1", status: .active, createdAt: now, updatedAt: now))
                    == nil)
            #expect(try await store.ownerships(appID: "a", deviceID: "cam").map(\.userID) == ["u1"])
            let event = SourceEvent(
                id: "e1", appID: "a", producer: "aovis", externalID: "x1", recordID: "r1", sourceDeviceID: "cam",
                type: "person", summary: "A person", status: "classified", createdAt: now)
            let caused = try notification("n-e1", target: #"{"user_ids": ["u1"]}"#)
            let first = try await store.insertEvent(event) { _ in
                EventNotification(notification: caused, runAt: now, onlyWithAudience: true)
            }
            #expect(first.created)
            #expect(first.event.owners == ["u1"])
            // No installation of u1: no audience, no notification.
            #expect(first.event.notificationID == nil)
            let again = try await store.insertEvent(event) { _ in nil }
            #expect(!again.created)
            #expect(try await store.event(appID: "a", producer: "aovis", id: "r1")?.id == "e1")
            #expect(try await store.event(appID: "a", producer: "argusai", id: "r1") == nil)
        }
    }

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
            #expect(usage == RelayUsage(successful: 5, errors: 15))
            let failed = try await fixture.store.countRelayError(
                appID: "demo", service: .fcm, token: token, day: "2026-11-25", releasingClaim: true)
            #expect(failed == RelayUsage(successful: 4, errors: 16))
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

    @Test("SNS platform applications, topics and subscriptions; deleting an application deletes its endpoints")
    func snsRecords() async throws {
        try await PostgresFixture.with { fixture in
            let store = fixture.store
            let application = SNSPlatformApplication(
                appID: "demo", name: "ios", platform: "APNS", attributes: ["PlatformCredential": "x"], createdAt: now)
            #expect(try await store.putSNSPlatformApplication(application) == application)
            var changed = application
            changed.attributes = ["PlatformCredential": "y"]
            #expect(try await store.putSNSPlatformApplication(changed).attributes == ["PlatformCredential": "y"])
            #expect(
                try await store.snsPlatformApplications(appID: "demo", after: nil, limit: 10).map(\.name) == ["ios"])
            let token = Fixtures.apnsToken()
            var registration = InstallationRegistration(platform: .ios, service: .apns, token: .device(token))
            registration.attributes = [Installation.snsPlatformApplicationAttribute: .string("ios")]
            let installation = try await store.register(registration, appID: "demo", now: now).installation
            #expect(try await store.installation(appID: "demo", service: .apns, token: token)?.id == installation.id)
            #expect(try await store.installation(appID: "demo", service: .fcm, token: token) == nil)
            #expect(
                try await store.snsEndpoints(appID: "demo", application: "ios", after: nil, limit: 10).map(\.id) == [
                    installation.id
                ])
            let topic = try await store.putSNSTopic(SNSTopic(appID: "demo", name: "news", createdAt: now))
            #expect(try await store.putSNSTopic(SNSTopic(appID: "demo", name: "news", createdAt: now + 5)) == topic)
            let subscription = try await store.putSNSSubscription(
                SNSSubscription(appID: "demo", id: "s1", topic: "news", installationID: installation.id, createdAt: now)
            )
            let again = try await store.putSNSSubscription(
                SNSSubscription(appID: "demo", id: "s2", topic: "news", installationID: installation.id, createdAt: now)
            )
            #expect(again == subscription)
            #expect(
                try await store.snsSubscriptions(appID: "demo", topic: "news", after: nil, limit: 10).map(\.id) == [
                    "s1"
                ])
            #expect(try await store.deleteSNSPlatformApplication(appID: "demo", name: "ios"))
            #expect(try await store.installation(appID: "demo", id: installation.id) == nil)
            #expect(try await store.snsSubscription(appID: "demo", id: "s1") == nil)
            #expect(try await store.deleteSNSTopic(appID: "demo", name: "news") == [])
            #expect(try await store.deleteSNSTopic(appID: "demo", name: "news") == nil)
            #expect(try await store.deleteSNSPlatformApplication(appID: "demo", name: "ios") == false)
        }
    }

    @Test("LeanCloud users: put, read, page, delete")
    func leanCloudUsers() async throws {
        try await PostgresFixture.with { fixture in
            let store = fixture.store
            for id in ["u2", "u1", "u3"] {
                try await store.putLeanCloudUser(
                    LeanCloudUser(
                        appID: "a", id: id, fields: ["username": .string(id), "age": .number(JSONNumber(30))],
                        createdAt: now, updatedAt: now))
            }
            #expect(try await store.leanCloudUser(appID: "a", id: "u1")?.fields["username"] == .string("u1"))
            #expect(try await store.leanCloudUsers(appID: "a", after: "u1", limit: 10).map(\.id) == ["u2", "u3"])
            #expect(try await store.deleteLeanCloudUser(appID: "a", id: "u2"))
            #expect(try await !store.deleteLeanCloudUser(appID: "a", id: "u2"))
        }
    }
}

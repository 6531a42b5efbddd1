import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// The dialects' own records: SNS platform applications, topics and subscriptions; the push
/// relay's daily counters; LeanCloud's `_User` objects.
extension StoreConformance {
    static let dialects: [StoreConformanceCase] = [
        .init("sns: platform applications, topics and subscriptions; deleting an application deletes its endpoints") {
            store in
            let application = SNSPlatformApplication(
                appID: "demo", name: "ios", platform: "APNS", attributes: ["PlatformCredential": "x"], createdAt: now)
            #expect(try await store.putSNSPlatformApplication(application) == application)
            var changed = application
            changed.attributes = ["PlatformCredential": "y"]
            #expect(try await store.putSNSPlatformApplication(changed).attributes == ["PlatformCredential": "y"])
            #expect(
                try await store.snsPlatformApplication(appID: "demo", name: "ios")?.attributes == changed.attributes)
            let android = SNSPlatformApplication(
                appID: "demo", name: "and", platform: "GCM", attributes: [:], createdAt: now)
            _ = try await store.putSNSPlatformApplication(android)
            #expect(
                try await store.snsPlatformApplications(appID: "demo", after: nil, limit: 10).map(\.name) == [
                    "and", "ios",
                ])
            #expect(
                try await store.snsPlatformApplications(appID: "demo", after: "and", limit: 10).map(\.name) == ["ios"])
            #expect(try await store.snsPlatformApplications(appID: "other", after: nil, limit: 10).isEmpty)

            let token = Fixtures.apnsToken()
            let endpoint = try await register(
                ios(token, attributes: [Installation.snsPlatformApplicationAttribute: .string("ios")]), in: store,
                app: "demo")
            _ = try await register(ios(), in: store, app: "demo")
            #expect(try await store.installation(appID: "demo", service: .apns, token: token)?.id == endpoint.id)
            #expect(try await store.installation(appID: "demo", service: .fcm, token: token) == nil)
            #expect(try await store.installation(appID: "other", service: .apns, token: token) == nil)
            #expect(
                try await store.snsEndpoints(appID: "demo", application: "ios", after: nil, limit: 10).map(\.id) == [
                    endpoint.id
                ])

            let topic = try await store.putSNSTopic(SNSTopic(appID: "demo", name: "news", createdAt: now))
            #expect(try await store.putSNSTopic(SNSTopic(appID: "demo", name: "news", createdAt: at(5))) == topic)
            #expect(try await store.snsTopic(appID: "demo", name: "news") == topic)
            #expect(try await store.snsTopics(appID: "demo", after: nil, limit: 10) == [topic])
            let subscription = try await store.putSNSSubscription(
                SNSSubscription(appID: "demo", id: "s1", topic: "news", installationID: endpoint.id, createdAt: now))
            let again = try await store.putSNSSubscription(
                SNSSubscription(appID: "demo", id: "s2", topic: "news", installationID: endpoint.id, createdAt: now))
            #expect(again == subscription)
            #expect(try await store.snsSubscription(appID: "demo", id: "s1") == subscription)
            #expect(
                try await store.snsSubscriptions(appID: "demo", topic: "news", after: nil, limit: 10).map(\.id) == [
                    "s1"
                ])

            #expect(try await store.deleteSNSPlatformApplication(appID: "demo", name: "ios"))
            #expect(try await store.installation(appID: "demo", id: endpoint.id) == nil)
            #expect(try await store.snsSubscription(appID: "demo", id: "s1") == nil)
            #expect(try await listAll(app: "demo", in: store).count == 1)
            #expect(try await store.deleteSNSTopic(appID: "demo", name: "news") == [])
            #expect(try await store.deleteSNSTopic(appID: "demo", name: "news") == nil)
            #expect(try await store.deleteSNSPlatformApplication(appID: "demo", name: "ios") == false)
        },
        .init("sns: deleting a topic or a subscription returns what went") { store in
            let one = try await register(ios(), in: store, app: "demo")
            let two = try await register(android(), in: store, app: "demo")
            _ = try await store.putSNSTopic(SNSTopic(appID: "demo", name: "t", createdAt: now))
            let first = try await store.putSNSSubscription(
                SNSSubscription(appID: "demo", id: "s1", topic: "t", installationID: one.id, createdAt: now))
            let second = try await store.putSNSSubscription(
                SNSSubscription(appID: "demo", id: "s2", topic: "t", installationID: two.id, createdAt: now))
            let ordered = [first, second].sorted { $0.installationID < $1.installationID }
            #expect(try await store.snsSubscriptions(appID: "demo", topic: "t", after: nil, limit: 10) == ordered)
            #expect(
                try await store.snsSubscriptions(
                    appID: "demo", topic: "t", after: ordered[0].installationID, limit: 10) == [ordered[1]])
            #expect(try await store.deleteSNSSubscription(appID: "demo", id: "s1"))
            #expect(try await !store.deleteSNSSubscription(appID: "demo", id: "s1"))
            #expect(try await store.deleteSNSTopic(appID: "demo", name: "t") == [second])
            #expect(try await store.snsTopic(appID: "demo", name: "t") == nil)
            #expect(try await store.installation(appID: "demo", id: two.id) != nil)
        },
        .init("relay: concurrent claims never accept more than the maximum; the rest count as refused") { store in
            let token = Fixtures.fcmToken()
            let granted = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        try await store.claimRelaySend(
                            appID: "demo", service: .fcm, token: token, day: "2026-11-25", maximum: 5
                        ).granted
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(granted == 5)
            let usage = try await store.relayUsage(appID: "demo", service: .fcm, token: token, day: "2026-11-25")
            #expect(usage == RelayUsage(accepted: 5, refused: 15))
        },
        .init("relay: counters are per app, service, token and day; a failed send gives its claim back") { store in
            let token = Fixtures.fcmToken()
            let claim = try await store.claimRelaySend(
                appID: "demo", service: .fcm, token: token, day: "2026-11-25", maximum: 2)
            #expect(claim.granted)
            #expect(claim.usage == RelayUsage(accepted: 1, refused: 0))
            let plain = try await store.countRelayError(
                appID: "demo", service: .fcm, token: token, day: "2026-11-25", releasingClaim: false)
            #expect(plain == RelayUsage(accepted: 1, refused: 1))
            let released = try await store.countRelayError(
                appID: "demo", service: .fcm, token: token, day: "2026-11-25", releasingClaim: true)
            #expect(released == RelayUsage(accepted: 0, refused: 2))
            // Nothing left to give back: the accepted count stays at zero.
            let again = try await store.countRelayError(
                appID: "demo", service: .fcm, token: token, day: "2026-11-25", releasingClaim: true)
            #expect(again == RelayUsage(accepted: 0, refused: 3))
            for (app, service) in [("other", PushService.fcm), ("demo", .sns)] {
                #expect(
                    try await store.relayUsage(appID: app, service: service, token: token, day: "2026-11-25")
                        == RelayUsage())
            }
            let stranger = Fixtures.fcmToken()
            #expect(
                try await store.relayUsage(appID: "demo", service: .fcm, token: stranger, day: "2026-11-25")
                    == RelayUsage())
            #expect(
                try await store.claimRelaySend(
                    appID: "demo", service: .fcm, token: token, day: "2026-11-26", maximum: 2
                )
                .usage == RelayUsage(accepted: 1, refused: 0))
        },
        .init("relay: the provider's answers count apart from the claims, on the day's counters only") { store in
            let token = Fixtures.fcmToken()
            _ = try await store.claimRelaySend(
                appID: "demo", service: .fcm, token: token, day: "2026-11-25", maximum: 1)
            _ = try await store.claimRelaySend(
                appID: "demo", service: .fcm, token: token, day: "2026-11-25", maximum: 1)
            try await store.countRelayOutcome(
                appID: "demo", service: .fcm, token: token, day: "2026-11-25", delivered: 1, failed: 0)
            try await store.countRelayOutcome(
                appID: "demo", service: .fcm, token: token, day: "2026-11-25", delivered: 0, failed: 2)
            let usage = try await store.relayUsage(appID: "demo", service: .fcm, token: token, day: "2026-11-25")
            #expect(usage == RelayUsage(accepted: 1, refused: 1, delivered: 1, failed: 2))
            #expect(usage.total == 2)
            // The answers count against the maximum no more than they count against nothing: the
            // next claim still sees one accepted.
            #expect(
                try await store.claimRelaySend(
                    appID: "demo", service: .fcm, token: token, day: "2026-11-25", maximum: 2
                ).usage == RelayUsage(accepted: 2, refused: 1, delivered: 1, failed: 2))
            // A day with no counters (over: the next day's claim removed it) counts nothing.
            _ = try await store.claimRelaySend(
                appID: "demo", service: .fcm, token: token, day: "2026-11-26", maximum: 2)
            try await store.countRelayOutcome(
                appID: "demo", service: .fcm, token: token, day: "2026-11-25", delivered: 1, failed: 0)
            #expect(
                try await store.relayUsage(appID: "demo", service: .fcm, token: token, day: "2026-11-25")
                    == RelayUsage())
            #expect(
                try await store.relayUsage(appID: "demo", service: .fcm, token: token, day: "2026-11-26")
                    == RelayUsage(accepted: 1))
        },
        .init("relay: a retry claim is due an interval after the invalidation, then an interval after the last") {
            store in
            let token = Fixtures.apnsToken()
            let hour: TimeInterval = 3600
            func claim(_ seconds: TimeInterval, invalidated: Date? = at(0)) async throws -> Bool {
                try await store.claimRelayRetry(
                    appID: "demo", service: .apns, token: token, invalidatedAt: invalidated, interval: 24 * hour,
                    now: at(seconds))
            }
            #expect(try await !claim(hour))
            #expect(try await claim(24 * hour))
            #expect(try await !claim(24 * hour))
            #expect(try await !claim(47 * hour))
            #expect(try await claim(48 * hour))
            // Another app or service has claims of its own; no invalidation time: due at once.
            #expect(
                try await store.claimRelayRetry(
                    appID: "other", service: .apns, token: token, invalidatedAt: nil, interval: 24 * hour, now: at(0)))
            // Concurrent claims: one wins.
            let fresh = Fixtures.apnsToken()
            let granted = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await store.claimRelayRetry(
                            appID: "demo", service: .apns, token: fresh, invalidatedAt: at(0), interval: hour,
                            now: at(2 * hour))
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(granted == 1)
        },
        .init("relay: a reset makes every invalidated installation's retry due; valid ones and other apps keep theirs")
        {
            store in
            let hour: TimeInterval = 3600
            var dead = try await register(ios(), in: store, app: "demo")
            let alive = try await register(ios(), in: store, app: "demo")
            let elsewhere = try await register(ios(), in: store, app: "other")
            for installation in [dead, elsewhere] {
                var invalid = installation
                invalid.valid = false
                invalid.invalidatedAt = at(0)
                _ = try await store.update(invalid, now: at(0))
            }
            dead = try #require(try await store.installation(appID: "demo", id: dead.id))
            func claim(_ installation: Installation, _ seconds: TimeInterval) async throws -> Bool {
                guard case .device(let token) = installation.token else { return false }
                return try await store.claimRelayRetry(
                    appID: installation.appID, service: .apns, token: token, invalidatedAt: at(0),
                    interval: 24 * hour, now: at(seconds))
            }
            #expect(try await claim(dead, 24 * hour))
            #expect(try await claim(elsewhere, 24 * hour))
            #expect(try await !claim(dead, 25 * hour))
            try await store.resetRelayRetries(appID: "demo")
            #expect(try await claim(dead, 25 * hour))
            #expect(try await !claim(dead, 26 * hour))
            #expect(try await !claim(elsewhere, 25 * hour))
            // A valid installation gets no due retry: it keeps the wait after its invalidation.
            #expect(try await !claim(alive, hour))
        },
        .init("relay: adopted APNs installations move between environments; others stay; adoption goes with them") {
            store in
            func sandbox() -> InstallationRegistration {
                var registration = ios()
                registration.environment = .sandbox
                return registration
            }
            let adopted = try await register(sandbox(), in: store, app: "demo")
            let native = try await register(sandbox(), in: store, app: "demo")
            let production = try await register(ios(), in: store, app: "demo")
            let android = try await register(android(), in: store, app: "demo")
            for installation in [adopted, production, android] {
                try await store.markRelayAdopted(appID: "demo", installationID: installation.id)
            }
            try await store.markRelayAdopted(appID: "demo", installationID: adopted.id)
            #expect(try await store.moveRelayAdopted(appID: "other", from: .sandbox, to: .production, now: at(5)) == 0)
            #expect(try await store.moveRelayAdopted(appID: "demo", from: .sandbox, to: .production, now: at(5)) == 1)
            let moved = try #require(try await store.installation(appID: "demo", id: adopted.id))
            #expect(moved.environment == .production)
            #expect(moved.updatedAt == at(5))
            #expect(try await store.installation(appID: "demo", id: native.id)?.environment == .sandbox)
            #expect(try await store.moveRelayAdopted(appID: "demo", from: .sandbox, to: .production, now: at(6)) == 0)
            #expect(try await store.moveRelayAdopted(appID: "demo", from: .production, to: .sandbox, now: at(7)) == 2)
            #expect(try await store.deleteInstallation(appID: "demo", id: adopted.id))
            #expect(try await store.moveRelayAdopted(appID: "demo", from: .sandbox, to: .production, now: at(8)) == 1)
        },
        .init("leancloud: _User objects are stored, replaced by id, listed in id order, and deleted") { store in
            let fields: [String: JSONValue] = [
                "username": .string("ann"),
                "home": GeoPoint(latitude: 31.2, longitude: 121.5)!.json,
                "age": .number(30),
            ]
            let ann = LeanCloudUser(appID: "lc", id: "u2", fields: fields, createdAt: now, updatedAt: now)
            let bea = LeanCloudUser(
                appID: "lc", id: "u1", fields: ["username": .string("bea")], createdAt: now, updatedAt: now)
            try await store.putLeanCloudUser(ann)
            try await store.putLeanCloudUser(bea)
            #expect(try await store.leanCloudUser(appID: "lc", id: "u2") == ann)
            #expect(try await store.leanCloudUser(appID: "other", id: "u2") == nil)
            var changed = ann
            changed.fields["age"] = .number(31)
            changed.updatedAt = at(10)
            try await store.putLeanCloudUser(changed)
            #expect(try await store.leanCloudUser(appID: "lc", id: "u2") == changed)
            #expect(try await store.leanCloudUsers(appID: "lc", after: nil, limit: 10).map(\.id) == ["u1", "u2"])
            #expect(try await store.leanCloudUsers(appID: "lc", after: "u1", limit: 10) == [changed])
            #expect(try await store.leanCloudUsers(appID: "lc", after: nil, limit: 1).map(\.id) == ["u1"])
            #expect(try await store.deleteLeanCloudUser(appID: "lc", id: "u1"))
            #expect(try await !store.deleteLeanCloudUser(appID: "lc", id: "u1"))
            #expect(try await store.leanCloudUsers(appID: "lc", after: nil, limit: 10) == [changed])
        },
    ]
}

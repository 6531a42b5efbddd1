import Foundation
import HeraldCore
import HeraldHomeAssistant
import HeraldTestSupport
import Testing

/// The Home Assistant relay's records (`RelayUsageStore`, declared in `HeraldHomeAssistant`): its
/// daily counters, retry claims and adopted installations.
extension StoreConformance {
    static let relayUsage: [StoreConformanceCase] = [
        .init(
            "relay: concurrent claims never accept more than the maximum; the rest count as refused",
            keeping: (any HeraldStore & RelayUsageStore).self
        ) { store in
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
        .init(
            "relay: counters are per app, service, token and day; a failed send gives its claim back",
            keeping: (any HeraldStore & RelayUsageStore).self
        ) { store in
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
        .init(
            "relay: the provider's answers count apart from the claims, on the day's counters only",
            keeping: (any HeraldStore & RelayUsageStore).self
        ) { store in
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
        .init(
            "relay: a retry claim is due an interval after the invalidation, then an interval after the last",
            keeping: (any HeraldStore & RelayUsageStore).self
        ) { store in
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
        .init(
            "relay: a reset makes every invalidated installation's retry due; valid ones and other apps keep theirs",
            keeping: (any HeraldStore & RelayUsageStore).self
        ) { store in
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
        .init(
            "relay: adopted APNs installations move between environments; others stay; adoption goes with them",
            keeping: (any HeraldStore & RelayUsageStore).self
        ) { store in
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
    ]
}

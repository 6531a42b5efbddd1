import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// The clean-up policy, one rule at a time: each case sets up installations on both sides of its
/// rule's boundary and leaves the other rules nothing to do.
extension StoreConformance {
    /// Clean-up rules checked through the engine's contract.
    static let engineCleanup: [EngineConformanceCase] = [
        .init("cleanup: invalid installations go once invalidated longer ago than invalidAfter") { store in
            var old = try await register(ios(), in: store, now: at(-40 * day))
            old.snsEndpointARN = "arn:aws:sns:eu-west-1:1:endpoint/APNS/app/old"
            old = try #require(try await store.update(old, now: at(-40 * day)))
            let recent = try await register(ios(), in: store, now: at(-40 * day))
            let valid = try await register(ios(), in: store, now: at(-40 * day))
            try await applyEvents(
                [
                    (old.id, .invalidated(reason: "Unregistered", since: nil, at: at(-31 * day))),
                    (recent.id, .invalidated(reason: "Unregistered", since: nil, at: at(-29 * day))),
                ], in: store)
            let report = try await store.cleanup(CleanupPolicy(), now: now)
            #expect(report.invalidInstallations == 1)
            #expect(report.removedWithEndpoints.map(\.id) == [old.id])
            #expect(report.failingInstallations + report.unseenInstallations + report.undeliveredInstallations == 0)
            #expect(try await readAll([old.id, recent.id, valid.id], in: store) == [recent.id, valid.id].sorted())
        },
        .init("cleanup: failing installations go at the threshold with no delivery within failingAfter") { store in
            let failing = try await register(ios(), in: store, now: at(-10 * day))
            let deliveredLately = try await register(ios(), in: store, now: at(-10 * day))
            let belowThreshold = try await register(ios(), in: store, now: at(-10 * day))
            try await applyEvents([(deliveredLately.id, .delivered(at: at(-2 * day)))], in: store)
            var events: [(id: String, event: InstallationEvent)] = []
            for index in 0..<5 {
                let time = at(-8 * day + Double(index))
                events.append((failing.id, .failed(reason: "Timeout", at: time, maxFailures: 99)))
                events.append((deliveredLately.id, .failed(reason: "Timeout", at: time, maxFailures: 99)))
                if index < 4 {
                    events.append((belowThreshold.id, .failed(reason: "Timeout", at: time, maxFailures: 99)))
                }
            }
            try await applyEvents(events, in: store)
            #expect(try await readBack(failing.id, in: store)?.failureCount == 5)
            #expect(try await readBack(failing.id, in: store)?.valid == true)
            let report = try await store.cleanup(
                CleanupPolicy(failureThreshold: 5, failingAfter: .seconds(7 * day)), now: now)
            #expect(report.failingInstallations == 1)
            #expect(report.invalidInstallations == 0)
            #expect(
                try await readAll([failing.id, deliveredLately.id, belowThreshold.id], in: store)
                    == [deliveredLately.id, belowThreshold.id].sorted())
        },
        .init("cleanup: installations unseen (and not updated) within unseenAfter go") { store in
            let unseen = try await register(ios(), in: store, now: at(-100 * day))
            let token = Fixtures.apnsToken()
            let seenAgain = try await register(ios(token), in: store, now: at(-100 * day))
            _ = try await store.register(ios(token), appID: "a", now: at(-10 * day))
            let updated = try await register(ios(), in: store, now: at(-100 * day))
            _ = try #require(try await store.update(updated, now: at(-5 * day)))
            let report = try await store.cleanup(CleanupPolicy(unseenAfter: .seconds(90 * day)), now: now)
            #expect(report.unseenInstallations == 1)
            #expect(try await readBack(unseen.id, in: store) == nil)
            #expect(
                try await readAll([unseen.id, seenAgain.id, updated.id], in: store)
                    == [seenAgain.id, updated.id].sorted())
            #expect(try await store.cleanup(CleanupPolicy(), now: now).unseenInstallations == 0)
        },
        .init("cleanup: installations undelivered within undeliveredAfter go, however recently they registered") {
            store in
            let token = Fixtures.apnsToken()
            let neverDelivered = try await register(ios(token), in: store, now: at(-100 * day))
            _ = try await store.register(ios(token), appID: "a", now: at(-1 * day))
            let delivered = try await register(ios(), in: store, now: at(-100 * day))
            let young = try await register(ios(), in: store, now: at(-10 * day))
            try await applyEvents([(delivered.id, .delivered(at: at(-5 * day)))], in: store)
            let report = try await store.cleanup(CleanupPolicy(undeliveredAfter: .seconds(90 * day)), now: now)
            #expect(report.undeliveredInstallations == 1)
            #expect(try await readBack(neverDelivered.id, in: store) == nil)
            #expect(
                try await readAll([neverDelivered.id, delivered.id, young.id], in: store)
                    == [delivered.id, young.id].sorted())
        },
        .init("cleanup: staleAfter makes unseen installations invalid, not deleted, until they register again") {
            store in
            let token = Fixtures.apnsToken()
            let stale = try await register(ios(token), in: store, now: at(-61 * day))
            let fresh = try await register(ios(), in: store, now: at(-59 * day))
            let report = try await store.cleanup(CleanupPolicy(staleAfter: .seconds(60 * day)), now: now)
            #expect(report.staleInstallations == 1)
            #expect(report.invalidInstallations == 0)
            let marked = try #require(try await readBack(stale.id, in: store))
            #expect(!marked.valid)
            #expect(marked.invalidatedAt == now)
            #expect(marked.lastFailureReason == "stale")
            #expect(try await readBack(fresh.id, in: store)?.valid == true)
            #expect(try await resolveAll(.init(audience: .all), in: store) == [fresh.id])
            _ = try await store.register(ios(token), appID: "a", now: at(1))
            #expect(try await readBack(stale.id, in: store)?.valid == true)
        },
        .init("cleanup: final notifications older than the retention go with their ledger; others stay") { store, api in
            let oldDone = notification(status: .done, createdAt: at(-31 * day))
            let oldCanceled = notification(status: .canceled, createdAt: at(-40 * day))
            let oldQueued = notification(status: .queued, createdAt: at(-31 * day))
            let recentDone = notification(status: .done, createdAt: at(-1 * day))
            for item in [oldDone, oldCanceled, oldQueued, recentDone] {
                _ = try await store.insertNotification(item, runAt: item.createdAt, idempotencyWindow: .seconds(60))
            }
            // A ledger entry and a pending delivery for each of the old done and the recent done one.
            for _ in 0..<4 {
                let job = try #require(
                    try await store.claimJob(kinds: [.notification], owner: "w", now: now, lockedUntil: at(60)))
                guard job.reference == oldDone.id || job.reference == recentDone.id else { continue }
                var page = PageCommit(jobID: job.id, owner: "w", notificationID: job.reference)
                page.ledger = [
                    DeliveryRecord(
                        notificationID: job.reference, installationID: nil, tokenSuffix: "12345678", service: .apns,
                        outcome: .failed, reason: "BadDeviceToken", attempts: 1, at: at(-31 * day))
                ]
                page.pending = [
                    PendingDelivery(
                        notificationID: job.reference, recipient: "r", runAt: at(-31 * day), attempts: 1, reason: .retry
                    )
                ]
                #expect(try await store.commit(page))
            }
            let report = try await store.cleanup(CleanupPolicy(notificationRetention: .seconds(30 * day)), now: now)
            #expect(report.notifications == 2)
            #expect(try await store.notification(id: oldDone.id) == nil)
            #expect(try await store.notification(id: oldCanceled.id) == nil)
            #expect(try await store.notification(id: oldQueued.id) != nil)
            #expect(try await store.notification(id: recentDone.id) != nil)
            #expect(try await api.ledger(notificationID: oldDone.id).isEmpty)
            #expect(try await store.duePending(notificationID: oldDone.id, now: now, limit: 10).isEmpty)
            #expect(try await api.ledger(notificationID: recentDone.id).count == 1)
            #expect(try await store.duePending(notificationID: recentDone.id, now: now, limit: 10).count == 1)
        },
        .init("cleanup: each app keeps its notifications as long as its own policy says") { store in
            let keepLonger = CleanupPolicy(notificationRetention: .seconds(90 * day))
            let plan = CleanupPlan(default: CleanupPolicy(), apps: ["long": keepLonger, "same": CleanupPolicy()])
            let old = [
                notification(app: "a", status: .done, createdAt: at(-40 * day)),
                notification(app: "long", status: .done, createdAt: at(-40 * day)),
                notification(app: "long", status: .failed, createdAt: at(-91 * day)),
                notification(app: "same", status: .done, createdAt: at(-40 * day)),
            ]
            for item in old {
                _ = try await store.insertNotification(item, runAt: item.createdAt, idempotencyWindow: .seconds(60))
            }
            let report = try await store.cleanup(plan, now: now)
            #expect(report.notifications == 3)
            #expect(try await store.notification(id: old[0].id) == nil)
            #expect(try await store.notification(id: old[1].id) != nil)
            #expect(try await store.notification(id: old[2].id) == nil)
            #expect(try await store.notification(id: old[3].id) == nil)
        },
    ]

    /// Clean-up rules checked through the API's listings, across apps with their own policies.
    static let cleanup: [StoreConformanceCase] = [
        .init("cleanup: each app follows its own policy in one run, every other app the default") { store in
            // `lc` has LeanCloud's rules, `a` and `c` the default (ArgusAI's).
            let leanCloud = CleanupPolicy(
                invalidAfter: .seconds(60 * day), failingAfter: nil, unseenAfter: .seconds(120 * day),
                staleAfter: .seconds(60 * day))
            let plan = CleanupPlan(default: CleanupPolicy(), apps: ["lc": leanCloud])
            #expect(plan.policy(appID: "lc") == leanCloud)
            #expect(plan.policy(appID: "c") == CleanupPolicy())
            func make(_ app: String, registered days: Double) async throws -> Installation {
                try await register(ios(), in: store, app: app, now: at(-days * day))
            }
            let invalid40 = try await make("a", registered: 45)
            let unseen100 = try await make("a", registered: 100)
            let failing = try await make("a", registered: 10)
            let otherInvalid40 = try await make("c", registered: 45)
            let lcInvalid40 = try await make("lc", registered: 45)
            let lcInvalid61 = try await make("lc", registered: 70)
            let lcStale = try await make("lc", registered: 61)
            let lcFresh = try await make("lc", registered: 59)
            let lcUnseen = try await make("lc", registered: 121)
            let lcFailing = try await make("lc", registered: 10)
            var events: [(id: String, event: InstallationEvent)] = [
                (invalid40.id, .invalidated(reason: "Unregistered", since: nil, at: at(-40 * day))),
                (otherInvalid40.id, .invalidated(reason: "Unregistered", since: nil, at: at(-40 * day))),
                (lcInvalid40.id, .invalidated(reason: "Unregistered", since: nil, at: at(-40 * day))),
                (lcInvalid61.id, .invalidated(reason: "Unregistered", since: nil, at: at(-61 * day))),
            ]
            for index in 0..<5 {
                let time = at(-8 * day + Double(index))
                events.append((failing.id, .failed(reason: "Timeout", at: time, maxFailures: 99)))
                events.append((lcFailing.id, .failed(reason: "Timeout", at: time, maxFailures: 99)))
            }
            try await applyEvents(events, in: store)

            let report = try await store.cleanup(plan, now: now)
            #expect(report.invalidInstallations == 3)
            #expect(report.failingInstallations == 1)
            #expect(report.unseenInstallations == 1)
            #expect(report.staleInstallations == 1)
            #expect(try await listAll(app: "a", in: store) == [unseen100.id])
            #expect(try await listAll(app: "c", in: store).isEmpty)
            #expect(
                try await listAll(app: "lc", in: store)
                    == [lcInvalid40.id, lcStale.id, lcFresh.id, lcFailing.id].sorted())
            let stale = try #require(try await store.installation(appID: "lc", id: lcStale.id))
            #expect(!stale.valid)
            #expect(stale.lastFailureReason == "stale")
            #expect(try await store.installation(appID: "lc", id: lcFresh.id)?.valid == true)
            #expect(try await store.installation(appID: "lc", id: lcFailing.id)?.valid == true)

            // The same plan a day later: the stale one waits out its 60 invalid days (or 120 unseen).
            let next = try await store.cleanup(plan, now: at(day))
            #expect(next.invalidInstallations + next.unseenInstallations + next.staleInstallations == 0)
            let last = try await store.cleanup(plan, now: at(60 * day))
            #expect(last.unseenInstallations == 1)
            #expect(try await store.installation(appID: "lc", id: lcStale.id) == nil)
        }
    ]
}

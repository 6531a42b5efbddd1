import Foundation
import HeraldCore
import Testing

/// Durable jobs with leases, and the wake-up signal that new work sends.
extension StoreConformance {
    static let jobQueue: [EngineConformanceCase] = [
        .init("jobs: queue statistics count due, running and scheduled jobs and date the oldest due one") { store in
            #expect(try await store.queueStatistics(now: at(0)) == QueueStatistics())
            try await store.scheduleJob(kind: .unknown("k"), reference: "old", runAt: at(10))
            try await store.scheduleJob(kind: .unknown("k"), reference: "new", runAt: at(40))
            try await store.scheduleJob(kind: .unknown("k"), reference: "later", runAt: at(500))
            try await store.scheduleJob(kind: .unknown("k"), reference: "held", runAt: at(5))
            // The earliest due job is claimed (running until 300); the others wait.
            let held = try await store.claimJob(kinds: [.unknown("k")], owner: "w", now: at(50), lockedUntil: at(300))
            #expect(held?.reference == "held")
            #expect(
                try await store.queueStatistics(now: at(50))
                    == QueueStatistics(due: 2, running: 1, scheduled: 1, oldestDueAt: at(10)))
            // A lease that ran out counts as due again, dated from its run time.
            #expect(
                try await store.queueStatistics(now: at(301))
                    == QueueStatistics(due: 3, running: 0, scheduled: 1, oldestDueAt: at(5)))
        },
        .init("jobs: scheduling a job twice keeps one and only ever moves its run time earlier") { store in
            try await store.scheduleJob(kind: .unknown("sweep"), reference: "r", runAt: at(100))
            try await store.scheduleJob(kind: .unknown("sweep"), reference: "r", runAt: at(50))
            try await store.scheduleJob(kind: .unknown("sweep"), reference: "r", runAt: at(200))
            #expect(
                try await store.claimJob(kinds: [.unknown("sweep")], owner: "w1", now: at(49), lockedUntil: at(400))
                    == nil)
            let job = try #require(
                try await store.claimJob(kinds: [.unknown("sweep")], owner: "w1", now: at(50), lockedUntil: at(400)))
            #expect(job.kind == .unknown("sweep"))
            #expect(job.reference == "r")
            #expect(job.attempts == 1)
            // One job: nothing else is due, even long after.
            #expect(
                try await store.claimJob(kinds: [.unknown("sweep")], owner: "w2", now: at(300), lockedUntil: at(400))
                    == nil)
            // Another reference or kind is another job.
            try await store.scheduleJob(kind: .unknown("sweep"), reference: "s", runAt: at(0))
            try await store.scheduleJob(kind: .unknown("other"), reference: "r", runAt: at(0))
            let second = try await store.claimJob(
                kinds: [.unknown("sweep")], owner: "w2", now: at(300), lockedUntil: at(400))
            #expect(second?.reference == "s")
        },
        .init("jobs: a claim takes the earliest due job of the given kinds") { store in
            try await store.scheduleJob(kind: .unknown("a"), reference: "a10", runAt: at(10))
            try await store.scheduleJob(kind: .unknown("b"), reference: "b5", runAt: at(5))
            try await store.scheduleJob(kind: .unknown("a"), reference: "a20", runAt: at(20))
            #expect(
                try await store.claimJob(kinds: [.unknown("a")], owner: "w", now: at(4), lockedUntil: at(600)) == nil)
            #expect(
                try await store.claimJob(kinds: [.unknown("c")], owner: "w", now: at(30), lockedUntil: at(600)) == nil)
            let first = try await store.claimJob(kinds: [.unknown("a")], owner: "w", now: at(15), lockedUntil: at(600))
            #expect(first?.reference == "a10")
            let second = try await store.claimJob(
                kinds: [.unknown("a"), .unknown("b")], owner: "w", now: at(15), lockedUntil: at(600))
            #expect(second?.reference == "b5")
            #expect(
                try await store.claimJob(
                    kinds: [.unknown("a"), .unknown("b")], owner: "w", now: at(15), lockedUntil: at(600)) == nil)
            let third = try await store.claimJob(
                kinds: [.unknown("b"), .unknown("a")], owner: "w", now: at(20), lockedUntil: at(600))
            #expect(third?.reference == "a20")
            #expect(Set([first?.id, second?.id, third?.id]).count == 3)
        },
        .init("jobs: concurrent claims by many owners never hand one job to two") { store in
            for index in 0..<8 {
                try await store.scheduleJob(kind: .unknown("k"), reference: "job-\(index)", runAt: now)
            }
            let claims = try await withThrowingTaskGroup(of: Job?.self) { group in
                for worker in 0..<16 {
                    group.addTask {
                        try await store.claimJob(
                            kinds: [.unknown("k")], owner: "w\(worker)", now: now, lockedUntil: at(60))
                    }
                }
                return try await group.reduce(into: [Job]()) { jobs, job in if let job { jobs.append(job) } }
            }
            #expect(claims.count == 8)
            #expect(Set(claims.map(\.id)).count == 8)
            #expect(Set(claims.map(\.reference)) == Set((0..<8).map { "job-\($0)" }))
        },
        .init("jobs: a job whose lease expired is claimed again, its attempts counted") { store in
            try await store.scheduleJob(kind: .unknown("k"), reference: "r", runAt: now)
            let first = try #require(
                try await store.claimJob(kinds: [.unknown("k")], owner: "w1", now: now, lockedUntil: at(30)))
            #expect(
                try await store.claimJob(kinds: [.unknown("k")], owner: "w2", now: at(29), lockedUntil: at(90)) == nil)
            let second = try #require(
                try await store.claimJob(kinds: [.unknown("k")], owner: "w2", now: at(31), lockedUntil: at(90)))
            #expect(second.id == first.id)
            #expect(second.attempts == 2)
            // The lease now belongs to w2: w1 can no longer finish or release it.
            try await store.finishJob(id: first.id, owner: "w1")
            try await store.releaseJob(id: first.id, owner: "w1", runAt: at(31), error: "late")
            #expect(
                try await store.claimJob(kinds: [.unknown("k")], owner: "w3", now: at(60), lockedUntil: at(120)) == nil)
            #expect(
                try await store.claimJob(kinds: [.unknown("k")], owner: "w3", now: at(91), lockedUntil: at(120))?.id
                    == first.id)
        },
        .init("jobs: only the owner renews a lease, until another worker has claimed the job") { store in
            try await store.scheduleJob(kind: .unknown("k"), reference: "r", runAt: now)
            let job = try #require(
                try await store.claimJob(kinds: [.unknown("k")], owner: "w1", now: now, lockedUntil: at(30)))
            #expect(try await store.renewJob(id: job.id, owner: "stranger", lockedUntil: at(600)) == false)
            #expect(try await store.renewJob(id: job.id, owner: "w1", lockedUntil: at(60)))
            // Renewed: not claimable past the first lease, claimable past the renewed one.
            #expect(
                try await store.claimJob(kinds: [.unknown("k")], owner: "w2", now: at(31), lockedUntil: at(90)) == nil)
            // A lease that ran out with no one claiming the job meanwhile is still its owner's to renew.
            #expect(try await store.renewJob(id: job.id, owner: "w1", lockedUntil: at(90)))
            #expect(
                try await store.claimJob(kinds: [.unknown("k")], owner: "w2", now: at(89), lockedUntil: at(150)) == nil)
            let taken = try #require(
                try await store.claimJob(kinds: [.unknown("k")], owner: "w2", now: at(91), lockedUntil: at(150)))
            #expect(taken.id == job.id)
            #expect(try await store.renewJob(id: job.id, owner: "w1", lockedUntil: at(200)) == false)
            #expect(try await store.renewJob(id: job.id, owner: "w2", lockedUntil: at(200)))
            try await store.finishJob(id: job.id, owner: "w2")
            #expect(try await store.renewJob(id: job.id, owner: "w2", lockedUntil: at(300)) == false)
        },
        .init("jobs: only the owner releases (with a new run time) or finishes a job") { store in
            try await store.scheduleJob(kind: .unknown("k"), reference: "r", runAt: now)
            let job = try #require(
                try await store.claimJob(kinds: [.unknown("k")], owner: "w1", now: now, lockedUntil: at(600)))
            try await store.releaseJob(id: job.id, owner: "stranger", runAt: now, error: nil)
            #expect(
                try await store.claimJob(kinds: [.unknown("k")], owner: "w2", now: at(1), lockedUntil: at(600)) == nil)
            try await store.releaseJob(id: job.id, owner: "w1", runAt: at(100), error: "retry later")
            #expect(
                try await store.claimJob(kinds: [.unknown("k")], owner: "w2", now: at(99), lockedUntil: at(600)) == nil)
            let again = try #require(
                try await store.claimJob(kinds: [.unknown("k")], owner: "w2", now: at(100), lockedUntil: at(600)))
            #expect(again.id == job.id)
            #expect(again.attempts == 2)
            try await store.finishJob(id: job.id, owner: "w1")
            #expect(
                try await store.claimJob(kinds: [.unknown("k")], owner: "w3", now: at(601), lockedUntil: at(900))?.id
                    == job.id)
            try await store.finishJob(id: job.id, owner: "w3")
            #expect(
                try await store.claimJob(kinds: [.unknown("k")], owner: "w4", now: at(10_000), lockedUntil: at(20_000))
                    == nil)
        },
        .init("jobs: a commit that finishes its job removes it with the status, only for the job's owner") { store in
            let item = notification()
            _ = try await store.insertNotification(item, runAt: now, idempotencyWindow: .seconds(60))
            let job = try #require(
                try await store.claimJob(kinds: [.notification], owner: "w1", now: now, lockedUntil: at(60)))
            var stranger = PageCommit(jobID: job.id, owner: "w2", notificationID: item.id)
            stranger.status = .failed
            stranger.finishesJob = true
            #expect(try await !store.commit(stranger))
            var close = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
            close.status = .done
            close.completedAt = at(5)
            close.finishesJob = true
            #expect(try await store.commit(close))
            #expect(try await store.notification(id: item.id)?.status == .done)
            // Gone: not claimable even once its lease would have run out.
            #expect(
                try await store.claimJob(kinds: [.notification], owner: "w3", now: at(3600), lockedUntil: at(4000))
                    == nil)
            #expect(try await !store.commit(PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)))
        },
        .init("jobs: jobSignals() yields after a notification or a job is stored, or deliveries are woken") { store in
            let signals = store.jobSignals()
            let item = notification()
            _ = try await store.insertNotification(item, runAt: now, idempotencyWindow: .seconds(60))
            #expect(await firstSignal(of: signals, within: 10), "no signal after insertNotification")
            let later = store.jobSignals()
            try await store.scheduleJob(kind: .unknown("k"), reference: "r", runAt: now)
            #expect(await firstSignal(of: later, within: 10), "no signal after scheduleJob")
            // A delivery waiting for its device's channel is made due when the device connects.
            let job = try #require(
                try await store.claimJob(kinds: [.notification], owner: "w1", now: now, lockedUntil: at(60)))
            #expect(job.reference == item.id)
            var page = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
            page.pending = [
                PendingDelivery(
                    notificationID: item.id, recipient: "dev", runAt: at(3600), attempts: 0, reason: .offline)
            ]
            #expect(try await store.commit(page))
            try await store.releaseJob(id: job.id, owner: "w1", runAt: at(3600), error: nil)
            let woken = store.jobSignals()
            #expect(try await store.wakeOfflineDeliveries(recipient: "dev", now: at(1)) == 1)
            #expect(await firstSignal(of: woken, within: 10), "no signal after wakeOfflineDeliveries")
        },
    ]
}

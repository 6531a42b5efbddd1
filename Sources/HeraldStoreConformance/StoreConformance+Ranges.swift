import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// The ranges a large notification's target is cut into, each worked as a job of its own.
extension StoreConformance {
    /// Ranges as the engine cuts and works them.
    static let engineRanges: [EngineConformanceCase] = [
        .init("ranges: a boundary is the skip-th installation after a key; pages stop at a range's end") { store in
            // Ids made in one millisecond increase only while no other test makes ids in another one
            // meanwhile: the test orders them itself, then puts every other one in the channel `news`.
            var tokens: [String: String] = [:]
            for _ in 0..<7 {
                let token = Fixtures.apnsToken()
                tokens[try await register(ios(token), in: store).id] = token
            }
            let ids = tokens.keys.sorted()
            for index in stride(from: 0, to: 7, by: 2) {
                _ = try await register(ios(tokens[ids[index]] ?? "", channels: ["news"]), in: store)
            }
            _ = try await register(ios(), in: store, app: "other")
            let all = NotificationTarget(audience: .all)
            #expect(try await store.rangeBoundary(all, appID: "a", after: nil, skip: 3) == ids[2])
            #expect(try await store.rangeBoundary(all, appID: "a", after: ids[2], skip: 3) == ids[5])
            #expect(try await store.rangeBoundary(all, appID: "a", after: ids[5], skip: 3) == nil)
            #expect(try await store.rangeBoundary(all, appID: "a", after: ids[5], skip: 1) == ids[6])
            // Everyone's bounds are the app's installations, whatever the filters: two Android ones count.
            // Registered a second later, so their ids sort after the others.
            let later = now.addingTimeInterval(1)
            let android = [
                try await register(android(), in: store, now: later).id,
                try await register(android(), in: store, now: later).id,
            ]
            let ios = NotificationTarget(audience: .all, services: [.apns])
            #expect(try await store.rangeBoundary(ios, appID: "a", after: ids[6], skip: 1) == android.min())
            // Another audience's bounds are its own recipients.
            let news = NotificationTarget(audience: .channels(["news"]))
            #expect(try await store.rangeBoundary(news, appID: "a", after: nil, skip: 2) == ids[2])
            #expect(try await store.rangeBoundary(news, appID: "a", after: ids[2], skip: 2) == ids[6])
            #expect(try await store.rangeBoundary(news, appID: "a", after: ids[4], skip: 2) == nil)

            let page = try await store.resolve(all, appID: "a", after: ids[2], through: ids[5], limit: 10)
            #expect(page.map(\.installationID) == Array(ids[3...5]))
            let first = try await store.resolve(all, appID: "a", after: nil, through: ids[1], limit: 10)
            #expect(first.map(\.installationID) == Array(ids[0...1]))
            let rest = try await store.resolve(all, appID: "a", after: ids[6], through: nil, limit: 10)
            #expect(rest.map(\.installationID) == android.sorted())
            let members = try await store.resolve(news, appID: "a", after: ids[0], through: ids[4], limit: 10)
            #expect(members.map(\.installationID) == [ids[2], ids[4]])
        },
        .init("ranges: ranges are stored with their jobs under the notification's lease; the last releases it") {
            store in
            let item = notification()
            let job = try await insertAndClaim(item, in: store)
            let first = FanoutRange(notificationID: item.id, index: 0, after: nil, through: "k1")
            // Only the lease's holder cuts.
            #expect(
                try await !store.addRange(
                    first, jobID: job.id, owner: "w2", now: at(1), lockedUntil: at(60), waitUntil: at(600)))
            #expect(try await store.fanoutRanges(notificationID: item.id).isEmpty)
            #expect(
                try await store.addRange(
                    first, jobID: job.id, owner: "w1", now: at(1), lockedUntil: at(60), waitUntil: at(600)))
            let started = try #require(try await store.notification(id: item.id))
            #expect(started.status == .sending)
            #expect(started.startedAt == at(1))
            #expect(try await store.cursor(notificationID: item.id) == FanoutRange.ranging)
            let rangeJob = try #require(
                try await store.claimJob(kinds: [.range], owner: "r1", now: at(1), lockedUntil: at(60)))
            #expect(rangeJob.reference == "\(item.id)#0")
            #expect(FanoutRange.parse(jobReference: rangeJob.reference)?.notificationID == item.id)
            #expect(FanoutRange.parse(jobReference: rangeJob.reference)?.index == 0)
            // The notification's job is still held (its lease renewed to 60).
            #expect(
                try await store.claimJob(kinds: [.notification], owner: "w2", now: at(59), lockedUntil: at(90)) == nil)

            let last = FanoutRange(notificationID: item.id, index: 1, after: "k1", through: nil)
            #expect(
                try await store.addRange(
                    last, jobID: job.id, owner: "w1", now: at(2), lockedUntil: at(60), waitUntil: at(600)))
            #expect(try await store.cursor(notificationID: item.id) == FanoutRange.ranged)
            #expect(try await store.fanoutRanges(notificationID: item.id) == [first, last])
            #expect(try await store.fanoutRange(notificationID: item.id, index: 1) == last)
            #expect(try await store.fanoutRange(notificationID: item.id, index: 2) == nil)
            // Released until 600, its lease gone.
            #expect(
                try await store.claimJob(kinds: [.notification], owner: "w2", now: at(599), lockedUntil: at(900))
                    == nil)
            #expect(
                try await store.claimJob(kinds: [.notification], owner: "w2", now: at(600), lockedUntil: at(900))?.id
                    == job.id)
        },
        .init("ranges: a range's pages move its own cursor; finishing the last range makes the notification due") {
            store in
            let devices = [try await register(ios(), in: store), try await register(ios(), in: store)]
            let item = notification()
            let job = try await insertAndClaim(item, in: store)
            try await addTwoRanges(of: item, job: job, in: store)
            let zero = try #require(
                try await store.claimJob(kinds: [.range], owner: "r0", now: now, lockedUntil: at(60)))
            let one = try #require(
                try await store.claimJob(kinds: [.range], owner: "r1", now: now, lockedUntil: at(60)))
            let (first, second) = zero.reference.hasSuffix("#0") ? (zero, one) : (one, zero)
            var page = PageCommit(jobID: first.id, owner: first.owner(zero, one), notificationID: item.id)
            page.range = 0
            page.cursor = devices[0].id
            page.counts = NotificationCounts(targeted: 1, sent: 1)
            page.installationEvents = [(devices[0].id, .delivered(at: at(3)))]
            #expect(try await store.commit(page))
            #expect(try await store.fanoutRange(notificationID: item.id, index: 0)?.cursor == devices[0].id)
            #expect(try await store.cursor(notificationID: item.id) == FanoutRange.ranged)
            #expect(try await readBack(devices[0].id, in: store)?.lastDeliveredAt == at(3))
            // Another range's job cannot commit a page as this one.
            var stolen = page
            stolen.owner = "r9"
            #expect(try await !store.commit(stolen))

            // The notification's job, due early (a channel settled), waits again while ranges are left.
            #expect(
                try await store.claimJob(kinds: [.notification], owner: "w2", now: at(5), lockedUntil: at(60)) == nil)
            try await store.scheduleJob(kind: .notification, reference: item.id, runAt: at(5))
            let parent = try #require(
                try await store.claimJob(kinds: [.notification], owner: "w2", now: at(5), lockedUntil: at(60)))
            #expect(
                try await store.releaseWhileRanging(
                    jobID: parent.id, owner: "w2", notificationID: item.id, runAt: at(700)))
            #expect(
                try await store.claimJob(kinds: [.notification], owner: "w2", now: at(699), lockedUntil: at(900))
                    == nil)

            // Range 0 finishes: its job goes; one range is left, so the notification still waits.
            var done = PageCommit(jobID: first.id, owner: first.owner(zero, one), notificationID: item.id)
            done.range = 0
            done.cursor = "done"
            done.finishesJob = true
            done.at = at(10)
            #expect(try await store.commit(done))
            #expect(
                try await store.claimJob(kinds: [.notification], owner: "w2", now: at(10), lockedUntil: at(60)) == nil)
            // Range 1 finishes: the notification's job is due at the commit's time.
            var last = PageCommit(jobID: second.id, owner: second.owner(zero, one), notificationID: item.id)
            last.range = 1
            last.cursor = "done"
            last.finishesJob = true
            last.counts = NotificationCounts(targeted: 1, sent: 1)
            last.at = at(20)
            #expect(try await store.commit(last))
            #expect(try await store.fanoutRanges(notificationID: item.id).allSatisfy { $0.cursor == "done" })
            #expect(
                try await store.claimJob(kinds: [.range], owner: "r2", now: at(1000), lockedUntil: at(2000)) == nil)
            #expect(
                try await store.claimJob(kinds: [.notification], owner: "w3", now: at(19), lockedUntil: at(60)) == nil)
            let woken = try #require(
                try await store.claimJob(kinds: [.notification], owner: "w3", now: at(20), lockedUntil: at(60)))
            #expect(woken.id == parent.id)
            // No range is left: the job stays held, to close the notification.
            #expect(
                try await !store.releaseWhileRanging(
                    jobID: woken.id, owner: "w3", notificationID: item.id, runAt: at(900)))
            #expect(try await store.notification(id: item.id)?.counts == NotificationCounts(targeted: 2, sent: 2))
        },
    ]

    /// Ranges when the API cancels their notification.
    static let ranges: [StoreConformanceCase] = [
        .init("ranges: cancelling a notification ends its ranges' jobs") { store in
            let item = notification()
            let job = try await insertAndClaim(item, in: store)
            try await addTwoRanges(of: item, job: job, in: store)
            let held = try #require(
                try await store.claimJob(kinds: [.range], owner: "r0", now: now, lockedUntil: at(60)))
            #expect(try await store.cancelNotification(appID: "a", id: item.id, now: at(1))?.status == .canceled)
            #expect(
                try await store.claimJob(kinds: [.range], owner: "r1", now: at(1000), lockedUntil: at(2000)) == nil)
            // A page of a range in flight when it was cancelled is not written.
            var page = PageCommit(jobID: held.id, owner: "r0", notificationID: item.id)
            page.range = FanoutRange.parse(jobReference: held.reference)?.index
            page.cursor = "done"
            page.counts = NotificationCounts(targeted: 1, sent: 1)
            #expect(try await !store.commit(page))
            #expect(try await store.notification(id: item.id)?.counts == NotificationCounts())
        }
    ]
}

extension StoreConformance {
    /// Cuts a claimed notification (owner `w1`) into two ranges, split at the key `k1`; its job
    /// waits until 600.
    static func addTwoRanges(of item: PushNotification, job: Job, in store: any EngineStore) async throws {
        for (index, through) in [(0, "k1" as String?), (1, nil)] {
            let range = FanoutRange(
                notificationID: item.id, index: index, after: index == 0 ? nil : "k1", through: through)
            #expect(
                try await store.addRange(
                    range, jobID: job.id, owner: "w1", now: now, lockedUntil: at(60), waitUntil: at(600)))
        }
    }
}

extension Job {
    /// Which of two claims' owners holds this job (`r0` claimed `zero`, `r1` claimed `one`).
    fileprivate func owner(_ zero: Job, _ one: Job) -> String { id == zero.id ? "r0" : "r1" }
}

import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// Notifications, their audience, pending deliveries, the ledger and the page commit.
extension StoreConformance {
    /// What the engine does with notifications, pages, pending deliveries and the commit.
    static let engineLedger: [EngineConformanceCase] = [
        .init("ledger: a notification is stored with its job; an idempotency key returns the first within the window") {
            store in
            let first = notification(
                target: .init(audience: .userIDs(["u1", "u2"]), platforms: [.ios], services: [.apns]),
                idempotencyKey: "key-1")
            let stored = try await store.insertNotification(first, runAt: at(10), idempotencyWindow: .seconds(3600))
            #expect(stored.created)
            #expect(try await store.notification(appID: "a", id: first.id) == first)
            #expect(try await store.notification(id: first.id) == first)
            #expect(try await store.notification(appID: "b", id: first.id) == nil)

            let repeated = notification(idempotencyKey: "key-1", createdAt: at(1800))
            let answer = try await store.insertNotification(
                repeated, runAt: at(1800), idempotencyWindow: .seconds(3600))
            #expect(!answer.created)
            #expect(answer.notification.id == first.id)
            #expect(try await store.notification(id: repeated.id) == nil)
            // Another app's key is its own; past the window the key is free again.
            let elsewhere = notification(app: "b", idempotencyKey: "key-1", createdAt: at(1800))
            #expect(
                try await store.insertNotification(elsewhere, runAt: now, idempotencyWindow: .seconds(3600)).created)
            let late = notification(idempotencyKey: "key-1", createdAt: at(3700))
            #expect(try await store.insertNotification(late, runAt: now, idempotencyWindow: .seconds(3600)).created)

            // One job per stored notification, none for the repeat; the first's is due at its run time.
            var claimed: [String] = []
            for _ in 0..<4 {
                guard
                    let job = try await store.claimJob(
                        kinds: [.notification], owner: "w", now: at(9), lockedUntil: at(60))
                else { break }
                claimed.append(job.reference)
            }
            #expect(claimed.sorted() == [elsewhere.id, late.id].sorted())
            let due = try await store.claimJob(kinds: [.notification], owner: "w", now: at(10), lockedUntil: at(60))
            #expect(due?.reference == first.id)
        },
        .init("ledger: a raw-token target and every payload field read back as stored") { store in
            let token = Fixtures.apnsToken()
            var stored = notification(
                target: .init(
                    audience: .tokens([
                        .init(token: token, service: .apns, environment: .sandbox, platform: .ios)
                    ]), apnsEnvironment: .production))
            stored.payload = NotificationPayload(
                title: "T", subtitle: "S", body: "B", badge: .increment, sound: "ping", category: "person",
                threadID: "th", image: "https://example.com/i.png", deepLink: "app://x",
                data: ["k": .array([.number(1), .string("v")])], contentAvailable: true, mutableContent: true,
                priority: .normal, collapseID: "c", ttl: 60, overrides: ["apns": .object(["aps": .object([:])])])
            stored.source = "cam-1"
            stored.category = "vehicle"
            stored.pushTime = "2027-01-15T09:00:00"
            stored.notBefore = at(3600)
            stored.expiresAt = at(7200)
            stored.respectPreferences = false
            _ = try await store.insertNotification(stored, runAt: now, idempotencyWindow: .seconds(60))
            #expect(try await store.notification(appID: "a", id: stored.id) == stored)
            #expect(try await store.resolve(stored.target, appID: "a", after: nil, limit: 10).isEmpty)
            #expect(try await store.count(stored.target, appID: "a").isEmpty)
        },
        .init("ledger: resolve pages each audience in id order; only valid installations of the app; count by service")
        {
            store in
            let alice = try await register(ios(user: "alice", channels: ["news"]), in: store)
            let alicePhone = try await register(android(user: "alice", channels: ["sports"]), in: store)
            let bob = try await register(web(user: "bob", channels: ["news", "sports"]), in: store)
            let carol = try await register(
                ios(user: "carol", channels: ["weather"], attributes: ["vip": .bool(true)]), in: store)
            let dead = try await register(ios(user: "alice", channels: ["news"]), in: store)
            let stranger = try await register(ios(user: "alice", channels: ["news"]), in: store, app: "b")
            try await applyEvents([(dead.id, .invalidated(reason: "Unregistered", since: nil, at: at(1)))], in: store)

            func check(
                _ audience: NotificationTarget.Audience, _ expected: [Installation], _ label: String
            ) async throws {
                let target = NotificationTarget(audience: audience)
                let resolved = try await resolveAll(target, in: store)
                #expect(resolved == expected.map(\.id).sorted(), "\(label)")
                var byService: [PushService: Int] = [:]
                for installation in expected { byService[installation.service, default: 0] += 1 }
                #expect(try await store.count(target, appID: "a") == byService, "\(label) count")
            }
            try await check(.all, [alice, alicePhone, bob, carol], "all")
            try await check(.userIDs(["alice", "bob", "nobody"]), [alice, alicePhone, bob], "users")
            try await check(.channels(["news", "weather"]), [alice, bob, carol], "channels")
            try await check(.channels(["sports"]), [alicePhone, bob], "one channel")
            // Bob is in both channels: one recipient, counted once.
            try await check(.channels(["news", "sports"]), [alice, alicePhone, bob], "overlapping channels")
            try await check(
                .installationIDs([carol.id, dead.id, stranger.id, alice.id, "missing"]), [alice, carol], "ids")
            try await check(.query(try AudienceQuery(parsing: .object(["vip": .bool(true)]))), [carol], "query")
            try await check(
                .query(try AudienceQuery(parsing: .object(["user_id": .string("alice")]))), [alice, alicePhone],
                "query user")

            let filtered = NotificationTarget(audience: .userIDs(["alice", "bob"]), platforms: [.ios, .web])
            #expect(try await resolveAll(filtered, in: store) == [alice.id, bob.id].sorted())
            let byService = NotificationTarget(audience: .all, services: [.fcm, .webpush])
            #expect(try await resolveAll(byService, in: store) == [alicePhone.id, bob.id].sorted())
            #expect(try await store.count(byService, appID: "a") == [.fcm: 1, .webpush: 1])

            let all = try await resolveAll(.init(audience: .all), in: store)
            let rest = try await store.resolve(.init(audience: .all), appID: "a", after: all[1], limit: 10)
            #expect(rest.map(\.installationID) == Array(all[2...]))
            let page = try await store.resolve(.init(audience: .all), appID: "a", after: nil, limit: 10)
            let bobTarget = try #require(page.first { $0.installationID == bob.id })
            #expect(bobTarget == InstallationAddress(bob))
        },
        .init(
            "ledger: first pages of several targets read together are what resolve reads, with the preferences asked for"
        ) {
            store, api in
            let alice = try await register(ios(user: "alice"), in: store)
            let alicePhone = try await register(android(user: "alice"), in: store)
            let bob = try await register(web(user: "bob", channels: ["news"]), in: store)
            let carol = try await register(ios(user: "carol", channels: ["news"]), in: store)
            let stranger = try await register(ios(user: "alice"), in: store, app: "b")
            let carolQuery = try AudienceQuery(parsing: try JSONValue.parse(Array(#"{"user_id": "carol"}"#.utf8)))
            let quiet = Preferences(enabledCategories: ["news"], soundEnabled: false)
            for installation in [alice, bob, carol, stranger] {
                #expect(
                    try await api.setPreferences(
                        appID: installation.appID, installationID: installation.id, preferences: quiet, now: now))
            }
            let requests = [
                FirstPageRequest(
                    target: .init(audience: .userIDs(["alice"])), appID: "a", limit: 10, withPreferences: true),
                FirstPageRequest(
                    target: .init(audience: .userIDs(["bob"])), appID: "a", limit: 10, withPreferences: false),
                FirstPageRequest(target: .init(audience: .all), appID: "a", limit: 2, withPreferences: true),
                FirstPageRequest(
                    target: .init(audience: .installationIDs(["missing"])), appID: "a", limit: 10, withPreferences: true
                ),
                FirstPageRequest(
                    target: .init(audience: .userIDs(["alice"])), appID: "b", limit: 10, withPreferences: true),
                // Each kind of audience, its values bound after the requests' before it.
                FirstPageRequest(
                    target: .init(audience: .channels(["news"]), platforms: [.ios]), appID: "a", limit: 10,
                    withPreferences: true),
                FirstPageRequest(
                    target: .init(audience: .query(carolQuery)), appID: "a", limit: 10, withPreferences: false),
                FirstPageRequest(
                    target: .init(
                        audience: .tokens([
                            .init(token: Fixtures.apnsToken(), service: .apns, environment: .production, platform: .ios)
                        ])), appID: "a",
                    limit: 10, withPreferences: true),
            ]
            // Read together, each page is what `resolve` reads for it alone.
            func readTogether(_ requests: [FirstPageRequest]) async throws -> FirstPages {
                let read = try await store.resolveFirstPages(requests)
                #expect(read.pages.count == requests.count)
                for (request, page) in zip(requests, read.pages) {
                    let alone = try await store.resolve(
                        request.target, appID: request.appID, after: nil, limit: request.limit)
                    #expect(page == alone)
                }
                return read
            }
            let read = try await readTogether(requests)
            #expect(read.pages[0].map(\.installationID) == [alice.id, alicePhone.id].sorted())
            #expect(read.pages[5].map(\.installationID) == [carol.id])
            #expect(read.pages[6].map(\.installationID) == [carol.id])
            #expect(read.pages[7].isEmpty)
            // Preferences of the pages that asked, and only of installations that have any (alice's
            // phone has none); bob's own page did not ask.
            let asked = Set((read.pages[0] + read.pages[2] + read.pages[4] + read.pages[5]).map(\.installationID))
            #expect(Set(read.preferences.keys) == asked.intersection([alice.id, bob.id, carol.id, stranger.id]))
            #expect(read.preferences[stranger.id] != nil)
            #expect(read.preferences.values.allSatisfy { $0 == quiet })
            #expect(try await store.resolveFirstPages([]).pages.isEmpty)
            // Targets of user ids and installation ids alone (PostgreSQL reads them with one prepared
            // statement, a key at a time): the same pages, cut to each request's limit, and only the
            // preferences of installations left on pages that asked.
            let byKey = [
                FirstPageRequest(
                    target: .init(audience: .userIDs(["bob", "alice", "bob"])), appID: "a", limit: 2,
                    withPreferences: true),
                FirstPageRequest(
                    target: .init(audience: .installationIDs([carol.id, bob.id, "missing"])), appID: "a", limit: 1,
                    withPreferences: false),
                FirstPageRequest(
                    target: .init(audience: .userIDs(["alice"])), appID: "b", limit: 10, withPreferences: true),
                requests[7],
            ]
            let keyed = try await readTogether(byKey)
            #expect(keyed.pages[0].count == 2)
            #expect(keyed.pages[1].count == 1)
            let askedByKey = Set((keyed.pages[0] + keyed.pages[2]).map(\.installationID))
            #expect(Set(keyed.preferences.keys) == askedByKey.intersection([alice.id, bob.id, carol.id, stranger.id]))
        },
        .init("ledger: pending deliveries are stored, due longest-due first, resolved, and woken when offline") {
            store in
            let item = notification()
            let job = try await insertAndClaim(item, in: store)
            var page = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
            page.pending = [
                PendingDelivery(notificationID: item.id, recipient: "r3", runAt: at(30), attempts: 1, reason: .retry),
                PendingDelivery(
                    notificationID: item.id, recipient: "r1", runAt: at(10), attempts: 2, reason: .quietHours),
                PendingDelivery(
                    notificationID: item.id, recipient: "r2", runAt: at(20), attempts: 0, reason: .localTime),
                PendingDelivery(
                    notificationID: item.id, recipient: "device-9", runAt: at(86_400), attempts: 0, reason: .offline),
            ]
            #expect(try await store.commit(page))
            #expect(try await store.nextPending(notificationID: item.id) == at(10))
            let due = try await store.duePending(notificationID: item.id, now: at(25), limit: 10)
            #expect(due == [page.pending[1], page.pending[2]])
            #expect(
                try await store.duePending(notificationID: item.id, now: at(100), limit: 2).map(\.recipient) == [
                    "r1", "r2",
                ])

            // Replacing one and resolving another.
            var next = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
            next.pending = [
                PendingDelivery(notificationID: item.id, recipient: "r1", runAt: at(50), attempts: 3, reason: .retry)
            ]
            next.resolvedPending = ["r2"]
            #expect(try await store.commit(next))
            #expect(try await store.nextPending(notificationID: item.id) == at(30))
            #expect(
                try await store.duePending(notificationID: item.id, now: at(60), limit: 10)
                    == [page.pending[0], next.pending[0]])

            // The offline device connects: its delivery is due now, and the job wakes up.
            try await store.releaseJob(id: job.id, owner: "w1", runAt: at(86_400), error: nil)
            #expect(try await store.wakeOfflineDeliveries(recipient: "device-9", now: at(70)) == 1)
            #expect(try await store.wakeOfflineDeliveries(recipient: "nobody", now: at(70)) == 0)
            let woken = try await store.duePending(notificationID: item.id, now: at(70), limit: 10)
            #expect(woken.map(\.recipient) == ["r3", "r1", "device-9"])
            #expect(woken.last?.runAt == at(70))
            let rescheduled = try await store.claimJob(
                kinds: [.notification], owner: "w2", now: at(70), lockedUntil: at(90))
            #expect(rescheduled?.id == job.id)
        },
        .init("ledger: a delivery waiting for its channel's confirmation settles once, due now, its job woken") {
            store in
            let item = notification()
            let job = try await insertAndClaim(item, in: store)
            var page = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
            page.pending = [
                PendingDelivery(
                    notificationID: item.id, recipient: "phone", runAt: at(11), attempts: 0, reason: .confirming),
                PendingDelivery(notificationID: item.id, recipient: "r1", runAt: at(11), attempts: 1, reason: .retry),
            ]
            #expect(try await store.commit(page))
            try await store.releaseJob(id: job.id, owner: "w1", runAt: at(11), error: nil)
            #expect(try await store.duePending(notificationID: item.id, now: at(5), limit: 10).isEmpty)
            // Only a `confirming` delivery settles, and only once.
            #expect(
                try await store.settleConfirming(notificationID: item.id, recipient: "r1", as: .confirmed, now: at(5))
                    == false)
            #expect(
                try await store.settleConfirming(
                    notificationID: item.id, recipient: "phone", as: .confirmed, now: at(5)))
            #expect(
                try await store.settleConfirming(
                    notificationID: item.id, recipient: "phone", as: .channelClosed, now: at(6)) == false)
            let due = try await store.duePending(notificationID: item.id, now: at(5), limit: 10)
            #expect(due.map(\.recipient) == ["phone"])
            #expect(due.first?.reason == .confirmed)
            let woken = try await store.claimJob(kinds: [.notification], owner: "w2", now: at(5), lockedUntil: at(30))
            #expect(woken?.id == job.id)
        },
        .init("ledger: a delivery settled at an instant is due at that same instant, however the instant rounds") {
            store in
            // An instant whose stored form reads back later than itself (seconds since 1970 as a
            // double do not hold every Date exactly): the engine asks the store whether a
            // settlement is due, so the store must compare the instant as it stored it.
            let settledAt = try #require(
                (1...1000).lazy.map { at(5).addingTimeInterval(Double($0) * 0.000_123_7) }.first {
                    Date(timeIntervalSince1970: $0.timeIntervalSince1970) > $0
                })
            let item = notification()
            let job = try await insertAndClaim(item, in: store)
            var page = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
            page.pending = [
                PendingDelivery(
                    notificationID: item.id, recipient: "phone", runAt: at(11), attempts: 0, reason: .confirming)
            ]
            #expect(try await store.commit(page))
            #expect(
                try await store.settleConfirming(
                    notificationID: item.id, recipient: "phone", as: .confirmed, now: settledAt))
            // The job released to the window's end after the settlement (the race the engine's
            // check after a release covers): the delivery is due at the settlement's instant.
            try await store.releaseJob(id: job.id, owner: "w1", runAt: at(11), error: nil)
            let due = try await store.duePending(notificationID: item.id, now: settledAt, limit: 1)
            #expect(due.map(\.recipient) == ["phone"])
        },
        .init("ledger: incrementBadges adds one to each installation atomically and returns the new values") { store in
            var one = try await register(ios(), in: store)
            one.badge = 4
            one = try #require(try await store.update(one, now: now))
            let two = try await register(android(), in: store)
            let result = try await store.incrementBadges(installationIDs: [one.id, two.id, "missing"], now: at(1))
            #expect(result == [one.id: 5, two.id: 1])
            let concurrent = try await withThrowingTaskGroup(of: Int?.self) { group in
                for _ in 0..<10 {
                    group.addTask { try await store.incrementBadges(installationIDs: [two.id], now: at(2))[two.id] }
                }
                return try await group.reduce(into: [Int]()) { values, value in if let value { values.append(value) } }
            }
            #expect(concurrent.sorted() == Array(2...11))
            #expect(try await readBack(two.id, in: store)?.badge == 11)
            #expect(try await store.incrementBadges(installationIDs: [], now: at(3)).isEmpty)
        },
        .init("ledger: a commit writes ledger, counts, lifecycle, cursor and status; a lost lock writes nothing") {
            store, api in
            let delivered = try await register(ios(), in: store)
            let invalidated = try await register(android(), in: store)
            let failing = try await register(web(), in: store)
            let item = notification()
            let job = try await insertAndClaim(item, in: store)
            var page = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
            page.ledger = [
                DeliveryRecord(
                    notificationID: item.id, installationID: delivered.id, tokenSuffix: delivered.token.suffix,
                    service: .apns, outcome: .delivered, providerID: "apns-1", attempts: 1, at: at(1)),
                DeliveryRecord(
                    notificationID: item.id, installationID: invalidated.id, tokenSuffix: invalidated.token.suffix,
                    service: .fcm, outcome: .invalid, reason: "UNREGISTERED", attempts: 1, at: at(1)),
            ]
            page.counts = NotificationCounts(targeted: 3, sent: 1, invalid: 1, rateLimited: 1)
            // A localized notification's sent deliveries, by the words they got (docs/content.md).
            page.counts.byLocale = ["de": 1]
            page.installationEvents = [
                (delivered.id, .delivered(at: at(1))),
                (invalidated.id, .invalidated(reason: "UNREGISTERED", since: nil, at: at(1))),
                (failing.id, .failed(reason: "Timeout", at: at(1), maxFailures: 2)),
            ]
            page.cursor = failing.id
            page.status = .sending
            page.startedAt = at(1)
            #expect(try await store.commit(page))

            let stored = try #require(try await store.notification(id: item.id))
            #expect(stored.status == .sending)
            #expect(stored.counts == page.counts)
            #expect(stored.startedAt == at(1))
            #expect(try await store.cursor(notificationID: item.id) == failing.id)
            #expect(
                try await api.ledger(notificationID: item.id)
                    == page.ledger)
            let afterDelivery = try #require(try await readBack(delivered.id, in: store))
            #expect(afterDelivery.lastDeliveredAt == at(1))
            #expect(afterDelivery.failureCount == 0)
            let afterInvalid = try #require(try await readBack(invalidated.id, in: store))
            #expect(!afterInvalid.valid)
            #expect(afterInvalid.invalidatedAt == at(1))
            #expect(afterInvalid.lastFailureReason == "UNREGISTERED")
            let afterFailure = try #require(try await readBack(failing.id, in: store))
            #expect(afterFailure.failureCount == 1)
            #expect(afterFailure.valid)
            #expect(afterFailure.lastFailureAt == at(1))

            // Counts add up; the second failure in a row reaches maxFailures and deactivates.
            var second = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
            second.counts = NotificationCounts(failed: 1)
            second.counts.byLocale = ["de": 2, NotificationCounts.defaultLocale: 1]
            second.installationEvents = [(failing.id, .failed(reason: "Timeout", at: at(2), maxFailures: 2))]
            second.cursor = "done"
            second.status = .done
            second.completedAt = at(2)
            #expect(try await store.commit(second))
            let finished = try #require(try await store.notification(id: item.id))
            var total = NotificationCounts(targeted: 3, sent: 1, failed: 1, invalid: 1, rateLimited: 1)
            total.byLocale = ["de": 3, NotificationCounts.defaultLocale: 1]
            #expect(finished.counts == total)
            #expect(finished.status == .done)
            #expect(finished.startedAt == at(1))
            #expect(finished.completedAt == at(2))
            #expect(try await readBack(failing.id, in: store)?.valid == false)

            // Another worker took the job over: the first owner's commit is refused whole.
            let taken = try #require(
                try await store.claimJob(kinds: [.notification], owner: "w2", now: at(301), lockedUntil: at(600)))
            #expect(taken.id == job.id)
            var lost = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
            lost.ledger = [page.ledger[0]]
            lost.counts = NotificationCounts(sent: 5)
            lost.counts.byLocale = ["de": 5]
            lost.installationEvents = [(invalidated.id, .delivered(at: at(400)))]
            lost.cursor = "lost"
            lost.status = .failed
            lost.pending = [
                PendingDelivery(notificationID: item.id, recipient: "x", runAt: at(1), attempts: 0, reason: .retry)
            ]
            #expect(try await !store.commit(lost))
            #expect(try await store.notification(id: item.id) == finished)
            #expect(try await store.cursor(notificationID: item.id) == "done")
            #expect(try await api.ledger(notificationID: item.id).count == 2)
            #expect(try await readBack(invalidated.id, in: store)?.lastDeliveredAt == nil)
            #expect(try await store.nextPending(notificationID: item.id) == nil)
        },
        .init("ledger: last_delivered_at moves only by more than the resolution; a failure count always resets") {
            store in
            let device = try await register(ios(), in: store)
            let item = notification()
            let job = try await insertAndClaim(item, in: store)
            func deliver(at time: Date, events: [(String, InstallationEvent)]? = nil) async throws -> Installation {
                var page = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
                page.installationEvents = events ?? [(device.id, .delivered(at: time))]
                #expect(try await store.commit(page))
                return try #require(try await readBack(device.id, in: store))
            }
            #expect(try await deliver(at: at(100)).lastDeliveredAt == at(100))
            // Within the hour: the row keeps its time (nothing rewritten).
            #expect(try await deliver(at: at(100 + 1800)).lastDeliveredAt == at(100))
            // A failure, then a delivery within the hour: the count resets, and the time moves with it.
            let failed = try await deliver(
                at: at(2000), events: [(device.id, .failed(reason: "Timeout", at: at(2000), maxFailures: 5))])
            #expect(failed.failureCount == 1)
            let reset = try await deliver(at: at(2100))
            #expect(reset.failureCount == 0)
            #expect(reset.lastDeliveredAt == at(2100))
            // Past the resolution: the time moves.
            let later = at(2100 + InstallationEvent.deliveredResolution + 1)
            #expect(try await deliver(at: later).lastDeliveredAt == later)
        },
        .init("ledger: a commit renews the job's lease only for the lock's owner") { store in
            let item = notification()
            let job = try await insertAndClaim(item, in: store)  // locked until at(300)
            var page = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
            page.lockedUntil = at(900)
            #expect(try await store.commit(page))
            #expect(
                try await store.claimJob(kinds: [.notification], owner: "w2", now: at(600), lockedUntil: at(700))
                    == nil)
            var stranger = PageCommit(jobID: job.id, owner: "w2", notificationID: item.id)
            stranger.lockedUntil = at(10_000)
            #expect(try await !store.commit(stranger))
            let late = try await store.claimJob(
                kinds: [.notification], owner: "w2", now: at(901), lockedUntil: at(1000))
            #expect(late?.id == job.id)
        },
        .init("ledger: a stale invalidation is ignored; an installation that asked for it is deleted when invalid") {
            store in
            let renewed = try await register(ios(), in: store, now: at(100))
            var deleting = ios()
            deleting.deleteWhenInvalid = true
            let argus = try await register(deleting, in: store)
            try await applyEvents(
                [
                    (renewed.id, .invalidated(reason: "Unregistered", since: at(50), at: at(200))),
                    (argus.id, .invalidated(reason: "Unregistered", since: nil, at: at(200))),
                ], in: store)
            #expect(try await readBack(renewed.id, in: store)?.valid == true)
            #expect(try await readBack(argus.id, in: store) == nil)
            try await applyEvents(
                [(renewed.id, .invalidated(reason: "Unregistered", since: at(150), at: at(200)))], in: store)
            #expect(try await readBack(renewed.id, in: store)?.valid == false)
        },
        .init("ledger: a rejected token invalidates by the app's rule or counts; it never deletes") { store in
            let native = try await register(ios(), in: store)
            let counted = try await register(ios(), in: store)
            var deleting = ios()
            deleting.deleteWhenInvalid = true
            let argus = try await register(deleting, in: store)
            try await applyEvents(
                [
                    (native.id, .rejected(reason: "BadDeviceToken", at: at(200), maxFailures: 2, rule: .invalidate)),
                    (counted.id, .rejected(reason: "BadDeviceToken", at: at(200), maxFailures: 2, rule: .count)),
                    (
                        argus.id,
                        .rejected(reason: "DeviceTokenNotForTopic", at: at(200), maxFailures: 2, rule: .invalidate)
                    ),
                ], in: store)
            let invalidated = try #require(try await readBack(native.id, in: store))
            #expect(!invalidated.valid)
            #expect(invalidated.invalidatedAt == at(200))
            #expect(invalidated.failureCount == 0)
            #expect(invalidated.lastFailureReason == "BadDeviceToken")
            for id in [counted.id, argus.id] {
                let once = try #require(try await readBack(id, in: store))
                #expect(once.valid)
                #expect(once.failureCount == 1)
                #expect(once.lastFailureAt == at(200))
            }
            #expect(
                try await readBack(argus.id, in: store)?.lastFailureReason == "DeviceTokenNotForTopic")
            // The second failure in a row deactivates; nothing is deleted.
            try await applyEvents(
                [(argus.id, .rejected(reason: "BadDeviceToken", at: at(300), maxFailures: 2, rule: .invalidate))],
                in: store)
            let deactivated = try #require(try await readBack(argus.id, in: store))
            #expect(!deactivated.valid)
            #expect(deactivated.failureCount == 2)
            #expect(deactivated.invalidatedAt == at(300))
        },
    ]

    /// What the API reads and changes of them: listings, cancelling, the ledger's pages.
    static let ledger: [StoreConformanceCase] = [
        .init("ledger: notifications list newest first in keyset pages, optionally by status") { store in
            var made: [PushNotification] = []
            let statuses: [NotificationStatus] = [.done, .queued, .done, .scheduled, .done]
            for (index, status) in statuses.enumerated() {
                let item = notification(status: status, createdAt: at(Double(index)))
                _ = try await store.insertNotification(item, runAt: now, idempotencyWindow: .seconds(60))
                made.append(item)
            }
            _ = try await store.insertNotification(notification(app: "b"), runAt: now, idempotencyWindow: .seconds(60))
            var seen: [String] = []
            var after: String?
            while true {
                let page = try await store.notifications(appID: "a", status: nil, page: .init(after: after, limit: 2))
                seen += page.map(\.id)
                guard page.count == 2, let last = page.last else { break }
                after = last.id
            }
            #expect(seen == made.map(\.id).reversed())
            let done = try await store.notifications(appID: "a", status: .done, page: .init(limit: 10))
            #expect(done.map(\.id) == [made[4].id, made[2].id, made[0].id])
            let afterNewest = try await store.notifications(
                appID: "a", status: .done, page: .init(after: made[4].id, limit: 1))
            #expect(afterNewest.map(\.id) == [made[2].id])
            #expect(try await store.notifications(appID: "a", status: .failed, page: .init()).isEmpty)
        },
        .init("ledger: cancel ends a notification that is not final, with its job and pending deliveries") { store in
            let target = try await register(ios(), in: store)
            let item = notification()
            let job = try await insertAndClaim(item, in: store)
            var page = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
            page.pending = [
                PendingDelivery(
                    notificationID: item.id, recipient: target.id, runAt: at(5), attempts: 1, reason: .retry)
            ]
            page.status = .sending
            #expect(try await store.commit(page))

            let canceled = try #require(try await store.cancelNotification(appID: "a", id: item.id, now: at(20)))
            #expect(canceled.status == .canceled)
            #expect(canceled.completedAt == at(20))
            #expect(try await store.duePending(notificationID: item.id, now: at(100), limit: 10).isEmpty)
            #expect(try await store.nextPending(notificationID: item.id) == nil)
            #expect(
                try await store.claimJob(kinds: [.notification], owner: "w2", now: at(1000), lockedUntil: at(2000))
                    == nil)
            // A final notification stays as it is; an unknown one, or another app's, is nil.
            let again = try await store.cancelNotification(appID: "a", id: item.id, now: at(30))
            #expect(again?.completedAt == at(20))
            let finished = notification(status: .done)
            _ = try await store.insertNotification(finished, runAt: now, idempotencyWindow: .seconds(60))
            #expect(try await store.cancelNotification(appID: "a", id: finished.id, now: at(30))?.status == .done)
            #expect(try await store.cancelNotification(appID: "b", id: item.id, now: at(30)) == nil)
            #expect(try await store.cancelNotification(appID: "a", id: "missing", now: at(30)) == nil)
        },
        .init("ledger: deliveries list in order of record, in keyset pages, optionally by outcome") { store in
            let item = notification()
            let job = try await insertAndClaim(item, in: store)
            let outcomes: [DeliveryRecord.Outcome] = [.delivered, .failed, .delivered, .invalid, .delivered, .retrying]
            var page = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
            page.ledger = outcomes.enumerated().map { index, outcome in
                DeliveryRecord(
                    notificationID: item.id, installationID: "i\(index)", tokenSuffix: "suffix\(index)", service: .apns,
                    outcome: outcome, attempts: 1, at: at(Double(index)))
            }
            #expect(try await store.commit(page))
            var seen: [DeliveryRecord] = []
            var after: String?
            while true {
                let entries = try await store.deliveries(
                    notificationID: item.id, outcome: nil, page: .init(after: after, limit: 4))
                seen += entries.map(\.record)
                #expect(entries.map(\.sequence) == entries.map(\.sequence).sorted())
                guard entries.count == 4, let last = entries.last else { break }
                after = String(last.sequence)
            }
            #expect(seen == page.ledger)
            let delivered = try await store.deliveries(
                notificationID: item.id, outcome: .delivered, page: .init(limit: 2))
            #expect(delivered.map(\.record.installationID) == ["i0", "i2"])
            let more = try await store.deliveries(
                notificationID: item.id, outcome: .delivered,
                page: .init(after: delivered.last.map { String($0.sequence) }))
            #expect(more.map(\.record.installationID) == ["i4"])
            #expect(try await store.deliveries(notificationID: item.id, outcome: .expired, page: .init()).isEmpty)
            #expect(try await store.deliveries(notificationID: "other", outcome: nil, page: .init()).isEmpty)
        },
    ]
}

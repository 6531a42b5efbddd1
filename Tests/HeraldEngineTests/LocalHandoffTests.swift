import Foundation
import HeraldCore
import HeraldTestSupport
import Logging
import Synchronization
import Testing

@testable import HeraldEngine

/// The one-notification path: wake-ups and the in-memory hand-off, driven by a clock that moves
/// only when told (idle workers never poll), with an in-memory transport.
@Suite("Engine hand-off and wake-ups")
struct LocalHandoffTests {
    /// An engine with `workers` workers over an in-memory store (a new one, or the store of a node
    /// that stopped), and a transport recording what the engine sends.
    struct Engine {
        let store: MemoryStore
        let dispatcher: Dispatcher
        let transport = RecordingTransport()
        let clock = ManualClock()
        static let quiet = {
            var logger = Logger(label: "test")
            logger.logLevel = .warning
            return logger
        }()

        init(store: MemoryStore = MemoryStore(), workers: Int = 4) {
            self.store = store
            dispatcher = Dispatcher(
                store: store, transports: ["app": AppTransports([transport])],
                configuration: EngineConfiguration(workers: workers, cleanupInterval: nil),
                logger: Self.quiet, clock: clock)
        }

        /// Registers an iOS installation of `user` and returns its id.
        func register(user: String) async throws -> String {
            try await store.register(
                InstallationRegistration(
                    platform: .ios, service: .apns, token: .device(Fixtures.apnsToken()),
                    profile: InstallationProfile(userID: user)),
                appID: "app", now: Date()
            ).installation.id
        }

        /// Sends a titled notification to `audience` and returns its id.
        func send(_ audience: NotificationTarget.Audience) async throws -> String {
            let result = try await dispatcher.submit(
                SendRequest(target: NotificationTarget(audience: audience), payload: NotificationPayload(title: "Hi")),
                appID: "app")
            guard case .accepted(let notification, _) = result else { throw HeraldError.internal("not accepted") }
            return notification.id
        }

        /// Runs the workers while `body` runs, then stops them; returns what `body` returned and how
        /// the workers came by their jobs meanwhile (their first look for work at start left out).
        func withWorkers<T>(_ body: () async throws -> T) async throws -> (T, WorkCounts) {
            let worker = Task { try await DispatchWorker(dispatcher: dispatcher, node: "test").run() }
            defer { worker.cancel() }
            // The workers are up once every one of them waits for work.
            try await waitUntil("every worker waits for work", every: .milliseconds(1)) {
                dispatcher.wakeups.waiting == dispatcher.configuration.workers
            }
            let before = dispatcher.workCounts
            let value = try await body()
            let after = dispatcher.workCounts
            return (
                value,
                WorkCounts(
                    handedOver: after.handedOver - before.handedOver, claimed: after.claimed - before.claimed,
                    emptyClaims: after.emptyClaims - before.emptyClaims,
                    handedTakes: after.handedTakes - before.handedTakes)
            )
        }

        /// Waits until the notification is final and returns it.
        func final(_ id: String) async throws -> PushNotification {
            try await waitForValue("notification \(id) final", every: .milliseconds(1)) {
                try await store.notification(id: id).flatMap { $0.status.isFinal ? $0 : nil }
            }
        }
    }

    @Test("one signal resumes one waiting worker, the longest waiting")
    func signalWakesOne() async throws {
        let signal = WakeSignal()
        let woken = Counter()
        var tasks: [Task<Void, Never>] = []
        for _ in 0..<3 {
            tasks.append(
                Task {
                    await signal.wait()
                    woken.add()
                })
            try await waitUntil("\(tasks.count) tasks wait", every: .milliseconds(1)) { signal.waiting == tasks.count }
        }
        signal.signal()
        try await waitUntil("one woken", every: .milliseconds(1)) { woken.value >= 1 }
        #expect(signal.waiting == 2)
        #expect(woken.value == 1)
        // With nobody left waiting, a signal waits for the next worker.
        signal.signalAll()
        for task in tasks { await task.value }
        signal.signal()
        #expect(signal.take())
        #expect(!signal.take())
    }

    @Test("a one-user notification goes to a local worker in memory: no claim, one delivery, closed done")
    func handoff() async throws {
        let engine = Engine()
        let installation = try await engine.register(user: "u1")
        let (id, counts) = try await engine.withWorkers {
            let id = try await engine.send(.userIDs(["u1"]))
            await engine.transport.waitForPushes(1)
            _ = try await engine.final(id)
            return id
        }
        let notification = try await engine.final(id)
        #expect(notification.status == .done)
        #expect(notification.counts.sent == 1 && notification.counts.targeted == 1)
        #expect(engine.transport.pushes.map(\.recipient.installationID) == [installation])
        #expect(counts == WorkCounts(handedOver: 1, claimed: 0, emptyClaims: 0, handedTakes: 1))
        #expect(try await engine.store.queueStatistics(now: Date()) == QueueStatistics())
    }

    @Test(
        "a notification whose intake read its device (a dialect's pushkey) is sent to it without reading it again; one without, or with preferences to apply, is read"
    )
    func knownAddresses() async throws {
        let engine = Engine()
        let first = try await engine.register(user: "u1")
        let second = try await engine.register(user: "u2")
        let known = try #require(await engine.store.installation(appID: "app", id: first))
        let (ids, _) = try await engine.withWorkers {
            var ids: [String] = []
            for (installation, addresses, preferences) in [
                (first, [InstallationAddress(known)], false), (second, nil, false),
                (first, [InstallationAddress(known)], true),
            ] {
                var request = SendRequest(
                    target: NotificationTarget(audience: .installationIDs([installation])),
                    payload: NotificationPayload(title: "Hi"), respectPreferences: preferences)
                request.knownAddresses = addresses
                guard case .accepted(let notification, _) = try await engine.dispatcher.submit(request, appID: "app")
                else { throw HeraldError.internal("not accepted") }
                _ = try await engine.final(notification.id)
                ids.append(notification.id)
            }
            return ids
        }
        for id in ids { #expect(try await engine.final(id).counts.sent == 1) }
        #expect(engine.transport.pushes.map(\.recipient.installationID) == [first, second, first])
        // The first was sent without a read; the second (nothing known) and the third (preferences) were read.
        #expect(engine.store.firstPagesRead == 2)
    }

    @Test("a broadcast is claimed through the store, by one woken worker and at most one more")
    func broadcastClaimed() async throws {
        let engine = Engine(workers: 8)
        for user in 0..<3 { _ = try await engine.register(user: "u\(user)") }
        let (id, counts) = try await engine.withWorkers {
            let id = try await engine.send(.all)
            await engine.transport.waitForPushes(3)
            _ = try await engine.final(id)
            return id
        }
        #expect(try await engine.final(id).counts.sent == 3)
        #expect(counts.handedOver == 0 && counts.claimed == 1)
        // Woken by its intake and by the store's signal, and the claiming worker wakes one more:
        // three claims at most find nothing (all eight workers woke before).
        #expect(counts.emptyClaims <= 3)
    }

    @Test("many one-user notifications at once each reach their device once")
    func burst() async throws {
        let engine = Engine()
        var users: [String: String] = [:]
        for user in 0..<40 { users["u\(user)"] = try await engine.register(user: "u\(user)") }
        let (ids, counts) = try await engine.withWorkers {
            let ids = try await withThrowingTaskGroup(of: String.self) { group in
                for user in users.keys { group.addTask { try await engine.send(.userIDs([user])) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            await engine.transport.waitForPushes(users.count)
            return ids
        }
        for id in ids { #expect(try await engine.final(id).status == .done) }
        #expect(Set(engine.transport.pushes.compactMap(\.recipient.installationID)) == Set(users.values))
        #expect(engine.transport.pushes.count == users.count)
        #expect(counts.claimed == 0 && counts.handedOver == users.count)
    }

    @Test("handed notifications that wait together are worked together: one take, each device once, preferences apply")
    func handedTogether() async throws {
        let engine = Engine(workers: 1)
        var installations: [String] = []
        for user in 0..<6 { installations.append(try await engine.register(user: "u\(user)")) }
        // u0 takes only news: its alert is filtered out (read with the others' pages, in one read).
        #expect(
            engine.store.setPreferences(
                appID: "app", installationID: installations[0],
                preferences: Preferences(enabledCategories: ["news"]), now: Date()))
        // Handed while no worker runs here: they wait together, one of them to a raw token.
        engine.dispatcher.handoff.open(owner: "gone-local")
        var ids: [String] = []
        for user in 0..<6 {
            let result = try await engine.dispatcher.submit(
                SendRequest(
                    target: NotificationTarget(audience: .userIDs(["u\(user)"])),
                    payload: NotificationPayload(title: "Hi"), category: "alerts"),
                appID: "app")
            guard case .accepted(let notification, _) = result else { throw HeraldError.internal("not accepted") }
            ids.append(notification.id)
        }
        let token = NotificationTarget.RawToken(
            token: Fixtures.apnsToken(), service: .apns, environment: .production, platform: .ios)
        ids.append(try await engine.send(.tokens([token])))
        #expect(engine.dispatcher.handoff.waiting == 7)

        _ = try await engine.withWorkers {}
        for id in ids { _ = try await engine.final(id) }
        let counts = engine.dispatcher.workCounts
        #expect(counts.handedOver == 7 && counts.handedTakes == 1 && counts.claimed == 0)
        #expect(try await engine.final(ids[0]).counts.skippedPreferences == 1)
        for id in ids.dropFirst() { #expect(try await engine.final(id).counts.sent == 1) }
        #expect(
            Set(engine.transport.pushes.compactMap(\.recipient.installationID)) == Set(installations.dropFirst()))
        #expect(engine.transport.pushes.count == 6)
        #expect(try await engine.store.queueStatistics(now: Date()) == QueueStatistics())
    }

    @Test("handed jobs are worked in groups of at most a page of recipients, each installation once")
    func handedGroups() {
        func batch(_ ids: [String], tokens: Int = 0) -> Dispatcher.Batch {
            var recipients = ids.map { id in
                Recipient(
                    InstallationAddress(
                        installationID: id, token: .device(Fixtures.apnsToken()), platform: .ios, service: .apns,
                        environment: .production, timezone: nil, bundleID: nil))
            }
            for index in 0..<tokens {
                recipients.append(
                    Recipient(
                        rawToken: NotificationTarget.RawToken(
                            token: Fixtures.apnsToken(), service: .apns, environment: .production, platform: .ios),
                        index: index))
            }
            return Dispatcher.Batch(recipients: recipients)
        }
        let groups = DispatchWorker.groups(
            of: [
                batch(["a"]), batch(["b", "c"]), batch([], tokens: 2),  // 5 recipients: a page
                batch(["d"]), batch(["a"]),  // a sixth would not fit; a again, in another group
                batch(["e", "f", "g", "h", "i", "j", "k"]),  // more than a page alone: a group of its own
                batch(["l"]),
            ], pageSize: 5)
        #expect(groups == [0..<3, 3..<5, 5..<6, 6..<7])
        // A target with more than its first batch sends up to a page at once: a group of its own.
        var longer = batch(["m"])
        longer.exhausted = false
        #expect(DispatchWorker.groups(of: [batch(["a"]), longer, batch(["b"])], pageSize: 5) == [0..<1, 1..<2, 2..<3])
        // An installation twice starts a new group, however small the page.
        #expect(
            DispatchWorker.groups(of: [batch(["a"]), batch(["b"]), batch(["a"])], pageSize: 100) == [0..<2, 2..<3])
        #expect(DispatchWorker.groups(of: [], pageSize: 5).isEmpty)
    }

    @Test("a node that stops between accepting and working a handed notification: the next start delivers it")
    func crashBeforeHandoff() async throws {
        let first = Engine()
        _ = try await first.register(user: "u1")
        // Workers opened the hand-off and stopped at once: the job is stored leased, in memory only here.
        first.dispatcher.handoff.open(owner: "gone-local")
        let id = try await first.send(.userIDs(["u1"]))
        #expect(first.dispatcher.handoff.waiting == 1)
        #expect(try await first.store.queueStatistics(now: Date()).running == 1)

        // The process dies; the next one on the same store recovers the lease and works the job.
        let second = Engine(store: first.store)
        #expect(second.store.recoverJobs() == 1)
        _ = try await second.withWorkers {
            second.dispatcher.wake()
            await second.transport.waitForPushes(1)
        }
        #expect(try await second.final(id).status == .done)
        #expect(second.dispatcher.workCounts.claimed == 1)
        #expect(first.transport.pushes.isEmpty)
    }

    @Test("a scheduled notification, or one to a channel, is not handed over")
    func notHandedOver() async throws {
        let engine = Engine()
        engine.dispatcher.handoff.open(owner: "node-local")
        let later = try await engine.dispatcher.submit(
            SendRequest(
                target: NotificationTarget(audience: .userIDs(["u1"])), payload: NotificationPayload(title: "Hi"),
                pushTime: .instant(Date().addingTimeInterval(3600))),
            appID: "app")
        guard case .accepted = later else { throw HeraldError.internal("not accepted") }
        _ = try await engine.send(.channels(["news"]))
        _ = try await engine.send(.userIDs((0..<101).map { "u\($0)" }))
        #expect(engine.dispatcher.handoff.waiting == 0)
        _ = try await engine.send(.userIDs(["u1"]))
        #expect(engine.dispatcher.handoff.waiting == 1)
    }
}

/// A count shared between tasks.
private final class Counter: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

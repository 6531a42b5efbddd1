import Foundation
import HeraldProviderMocks
import HeraldTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `kill -9` in a loop, under mixed traffic, on both stores.
///
/// Each run starts a fresh `herald serve` (SQLite file, or a fresh PostgreSQL database) against a mock APNs and a mock
/// FCM whose devices answer 200, 500 once then 200, an invalid token (APNs 410 Unregistered or 400 BadDeviceToken,
/// FCM 404 UNREGISTERED or 400 INVALID_ARGUMENT on the token) or a 400 that rejects the message every time;
/// registers devices of some users, then drives registrations, badge-incrementing sends to users and broadcasts
/// concurrently, and kills the server at one of three points: during accept (POSTs in flight), during fan-out and
/// webhook delivery (the mock holding answers back, and a webhook request of Herald's unanswered at the receiver,
/// frozen for it) or during result commit (a few milliseconds after a batch's last answer left the mock). It
/// restarts the server, lets every notification finish and checks that no accepted notification was lost, that
/// what was sent twice stays within one page, and that installations, ledger and jobs are consistent.
///
/// The app has a configured webhook endpoint for every event, posting to a receiver the loop starts once
/// (``WebhookReceiver``: `scripts/webhook-receiver.py`, which verifies each request with the `standardwebhooks` and
/// `svix` libraries). The restarted server is left running until its outbox is delivered (the events the dead
/// server had claimed wait for their lease, `webhooks.lease_seconds`, 30 s, the least Herald accepts), then the
/// events are checked against the facts in the database (``CrashRun``'s `verifyWebhooks`): every final
/// notification, provider invalidation and failed delivery of the ledger has its event, none arrives for a fact the
/// database does not hold, an event comes twice only with its own id, and the request the fan-out kill cut off
/// comes again after the restart.
///
/// `HERALD_CRASH_RUNS` sets the runs per store (default 2 on SQLite, 1 on PostgreSQL, so CI stays fast: the three
/// runs kill at the three points, from a point drawn at random for the process; by hand run
/// e.g. `HERALD_CRASH_RUNS=50 swift test --filter CrashLoop`), `HERALD_CRASH_SEED` replays a seed the output printed
/// (each run prints the variables that replay it alone: the kill point, traffic mix and devices follow from them; the
/// timing of a live server does not), and `HERALD_CRASH_POINT` (`accept`, `fanout`, `commit`) fixes the kill point. PostgreSQL runs on
/// the cluster `HERALD_TEST_POSTGRES` names (`export HERALD_TEST_POSTGRES=$(scripts/postgres)`; scripts/test does).
@Suite("herald survives kill -9 in a loop, under mixed traffic", .serialized)
struct CrashLoopTests {
    @Test("SQLite: kill -9 at accept, fan-out or commit, restart: nothing accepted lost, state intact")
    func sqlite() async throws {
        try await CrashLoop.run(store: .sqlite, defaultRuns: 2, firstPoint: 0)
    }

    @Test("PostgreSQL: kill -9 at accept, fan-out or commit, restart: nothing accepted lost, state intact")
    func postgres() async throws {
        try await CrashLoop.run(store: .postgres, defaultRuns: 1, firstPoint: 2)
    }
}

/// The crash loop's settings, runs and report.
enum CrashLoop {
    enum Store: String {
        case sqlite = "SQLite"
        case postgres = "PostgreSQL"
    }

    enum KillPoint: String, CaseIterable {
        case accept, fanout, commit
    }

    /// Small pages, so "at most one page twice" means something.
    static let pageSize = 20
    static let pipelineDepth = 4
    static var batchSize: Int { pageSize / pipelineDepth }
    static let workers = 8
    static let maxFailures = 3
    static let topic = "com.example.crash"
    static let users = 32
    /// The app's configured webhook endpoint, subscribed to every event.
    static let webhook = "loop"
    /// The shortest webhook lease Herald accepts: events a killed node had claimed wait this long (from the claim).
    static let webhookLease = 30

    /// The kill point of the process's first run; each run after it takes the next point.
    static let pointOffset = Int.random(in: 0..<KillPoint.allCases.count)

    /// Runs the loop on `store`; without `HERALD_CRASH_SEED`, its first run kills at the point `firstPoint` after
    /// ``pointOffset`` (so the default runs of both stores, SQLite's then PostgreSQL's, kill at all three points).
    /// - Parameter powerLoss: Whether each kill is a power loss too (the database on LazyFS), and with
    ///   which setting; nil for `kill -9` alone. `runsVariable` names the variable that sets the runs.
    static func run(
        store: Store, defaultRuns: Int, firstPoint: Int, powerLoss: PowerLoss? = nil,
        runsVariable: String = "HERALD_CRASH_RUNS"
    ) async throws {
        let environment = ProcessInfo.processInfo.environment
        let runs = environment[runsVariable].flatMap(Int.init) ?? defaultRuns
        let seed =
            environment["HERALD_CRASH_SEED"].flatMap { UInt64($0.replacingOccurrences(of: "0x", with: ""), radix: 16) }
            ?? UInt64.random(in: 0...UInt64.max)
        let point = environment["HERALD_CRASH_POINT"].flatMap(KillPoint.init(rawValue:))
        let name = powerLoss.map { "power loss (\($0.rawValue))" } ?? "crash loop"
        print(
            "\(name) \(store.rawValue): \(runs) runs, HERALD_CRASH_SEED=\(String(seed, radix: 16)), page size \(pageSize)"
        )
        // One webhook receiver for the whole loop: each run's server posts to its own path on it.
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        var figures: [CrashRun.Figures] = []
        for index in 0..<runs {
            let runSeed = seed &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15
            let first = environment["HERALD_CRASH_SEED"] == nil ? pointOffset + firstPoint : Int(seed % 3)
            // The unsafe power loss aims at accept, where writes are being acknowledged: the loss it must show is of
            // those answered since the last sync (SQLite's checkpointer syncs the log every 250 ms even then).
            let killPoint = powerLoss == .unsafe ? .accept : point ?? KillPoint.allCases[(first + index) % 3]
            let run = CrashRun(
                store: store, index: index + 1, runs: runs, seed: runSeed, killPoint: killPoint, powerLoss: powerLoss,
                receiver: receiver)
            let result = try await run.execute()
            print(result.line)
            figures.append(result)
            // One loss is what the unsafe run must show: the runs left are not needed.
            if powerLoss == .unsafe, result.lostSends + result.lostRegistrations > 0 { break }
        }
        if powerLoss == .unsafe {
            let lost = figures.reduce(0) { $0 + $1.lostSends + $1.lostRegistrations }
            #expect(
                lost > 0,
                "\(name): no acknowledged write lost in \(figures.count) power losses: the test cannot tell the settings apart"
            )
        }
        print("\(name) \(store.rawValue) summary (seed \(String(seed, radix: 16))):")
        print(CrashRun.Figures.tableHeader)
        for result in figures { print(result.tableRow) }
    }
}

/// How a device answers at its provider's mock.
enum DeviceKind: String, Sendable {
    /// 200 after a few milliseconds.
    case good
    /// 500 to its first request (retried), 200 afterwards.
    case flaky
    /// 410 Unregistered (dated after its registration): invalid at once.
    case gone
    /// 400 BadDeviceToken: invalid at once.
    case bad
    /// 400 with a reason that is not about the token: a failure that counts, every time.
    case rejecting

    var receivesEverything: Bool { self == .good || self == .flaky }

    static func random(using rng: inout SeededGenerator) -> DeviceKind {
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<66: .good
        case 66..<78: .flaky
        case 78..<86: .gone
        case 86..<92: .bad
        default: .rejecting
        }
    }
}

/// The provider a device is reached through.
enum Route: String, Sendable {
    case apns, fcm

    static func random(using rng: inout SeededGenerator) -> Route {
        Int.random(in: 0..<5, using: &rng) < 3 ? .apns : .fcm
    }
}

/// The two mock providers of a run.
struct Providers: Sendable {
    let apns: ObservedAPNsServer
    let fcm: MockFCMServer
}

/// A request one of the mocks received, whichever it was.
struct ProviderRequest {
    var token: String
    var status: Int
    var notificationID: String
    var badge: Int?
    /// The credential it carried (APNs provider token, FCM access token): each server process has its own, so
    /// two requests with the same one came from the same life of the server.
    var credential: String
}

/// What the traffic did, as the clients saw it.
final class TrafficLog: Sendable {
    struct Device: Sendable {
        var token: String
        var user: String
        var kind: DeviceKind
        var service: Route
        /// The registration clock when its registration was answered (nil: never answered).
        var registeredAt: Int?
        var id: String?
    }

    struct Send: Sendable {
        var seq: Int
        var key: String
        /// The target users; nil: a broadcast.
        var users: [String]?
        var badge: Bool
        /// The registration clock when the POST started: devices answered before it are in its audience.
        var startClock: Int
        /// The status answered; nil: no answer (the server died).
        var status: Int?
        var id: String?
    }

    struct State: Sendable {
        var clock = 0
        var devices: [String: Device] = [:]
        /// Users with an answered good device: the ones sends pick.
        var users: [String] = []
        var sends: [Send] = []
        var accepted = 0
        var postsInFlight = 0
        var registrationsInFlight = 0
        var nextUser = 0
        var reRegistrations = 0
    }

    let state = Mutex(State())
}

/// `kill -9` for the running server, fired once, from wherever the kill point is detected.
final class KillSwitch: Sendable {
    let pid = Atomic<Int32>(0)
    let fired = Atomic<Bool>(false)
    let detail = Mutex("")

    /// Kills the server unless it was killed already; returns whether this call did.
    @discardableResult
    func fire(_ why: @autoclosure () -> String) -> Bool {
        let pid = pid.load(ordering: .acquiring)
        guard pid > 0, fired.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return false }
        kill(pid, SIGKILL)
        let text = why()
        detail.withLock { $0 = text }
        return true
    }

    var hasFired: Bool { fired.load(ordering: .acquiring) }
}

/// The fan-out kill point's hold on the webhook receiver, so that the kill comes during a webhook delivery: at the
/// point's threshold the receiver is frozen (SIGSTOP), so the next request Herald sends it stays unanswered; once
/// one sits unread in its socket, ``holding`` says so and the kill may come. Thawed after the kill, the receiver
/// reads and prints what the dead server sent it: the requests whose attempts the kill cut off (it had answered
/// none of them, frozen since before it printed them).
final class ReceiverFreeze: Sendable {
    let receiver: WebhookReceiver
    private struct State {
        var frozenAt: ContinuousClock.Instant?
        /// The requests the receiver had printed when it stopped (nil until it has).
        var requestsBefore: Int?
        /// Whether a request of Herald's was seen unread at the frozen receiver.
        var sawRequest = false
        /// What the kill may say of the webhook delivery it cuts off; nil until it may come.
        var holding: String?
    }

    private let state = Mutex(State())

    init(receiver: WebhookReceiver) { self.receiver = receiver }

    /// Freezes the receiver unless it is frozen already; returns true.
    func start() -> Bool {
        state.withLock { state in
            guard state.frozenAt == nil else { return true }
            receiver.freeze()
            state.frozenAt = .now
            return true
        }
    }

    /// What the kill may say of the webhook delivery it cuts off; nil until a request of Herald's is held.
    var holding: String? { state.withLock { $0.holding } }

    /// Until the kill: looks at the frozen receiver's socket until a request of Herald's sits unread in it (sent
    /// whole: 20 ms later), or, when none came in 1.5 s (Herald waits on a request the receiver read before it
    /// stopped, or no event was due), lets the kill come without one.
    func watch(until killSwitch: KillSwitch) async {
        while !killSwitch.hasFired && !Task.isCancelled {
            let (frozenAt, counted) = state.withLock {
                ($0.holding == nil ? $0.frozenAt : nil, $0.requestsBefore != nil)
            }
            if frozenAt != nil, !counted {
                // What it printed before it stopped (SIGSTOP takes effect at once, but not synchronously).
                if receiver.isStopped {
                    let count = receiver.requests().count
                    state.withLock { $0.requestsBefore = count }
                }
            } else if let frozenAt {
                let unread = receiver.unreadBytes()
                if unread > 0 {
                    try? await Task.sleep(for: .milliseconds(20))
                    state.withLock {
                        $0.sawRequest = true
                        $0.holding = "a request of \(receiver.unreadBytes()) bytes unread at the frozen receiver"
                    }
                } else if frozenAt.duration(to: .now) > .milliseconds(1500) {
                    // Herald waits on a request the receiver read before it stopped, or none was due.
                    state.withLock { $0.holding = "no request came to the frozen receiver in 1.5 s" }
                }
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// After the kill: thaws the receiver and returns the requests it then read and printed, those the kill cut
    /// off (none when it was not frozen).
    func thaw() async throws -> [WebhookReceiver.Request] {
        let (frozen, counted, sawRequest) = state.withLock {
            ($0.frozenAt != nil, $0.requestsBefore, $0.sawRequest)
        }
        guard frozen else { return [] }
        let before = counted ?? receiver.requests().count
        receiver.resume()
        try await waitUntil("the thawed webhook receiver to read what the dead server sent", timeout: .seconds(20)) {
            receiver.unreadBytes() == 0 && (!sawRequest || receiver.requests().count > before)
        }
        return Array(receiver.requests().dropFirst(before))
    }
}

/// Counts each notification's answers at the mock, to find the end of a batch, and schedules one kill.
final class BatchWatch: Sendable {
    private let counts = Mutex<[String: Int]>([:])
    private let scheduled = Atomic<Bool>(false)

    /// Counts an answer for the notification `id`; returns its answers so far.
    func answered(_ id: String) -> Int {
        counts.withLock { counts in
            counts[id, default: 0] += 1
            return counts[id] ?? 0
        }
    }

    /// Whether this call is the first to schedule the kill.
    func schedule() -> Bool {
        scheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }
}

/// One run of the loop: fresh store, traffic, one kill, restart, checks.
struct CrashRun {
    let store: CrashLoop.Store
    let index: Int
    let runs: Int
    let seed: UInt64
    let killPoint: CrashLoop.KillPoint
    /// Whether the kill is a power loss too (the database on LazyFS, its unsynced bytes dropped).
    var powerLoss: PowerLoss?
    /// The loop's webhook receiver: the run's endpoint posts every event to ``webhookPath`` on it.
    let receiver: WebhookReceiver

    /// The path of this run's endpoint on the receiver, which tells its requests from other runs'.
    var webhookPath: String { "/run-\(index)" }

    /// How many devices may get a notification twice, per notification and in a run. After `kill -9`, what
    /// was sent and not yet committed: one page of a notification, a page per worker in a run. After a power
    /// loss, also the page commits not yet synced (engine commits are not synced by design; the log is synced
    /// by the next acknowledged write): at most the pages in flight in every batch of the pipeline.
    var duplicateBound: (perNotification: Int, perRun: Int) {
        let pages = powerLoss == nil ? 1 : CrashLoop.pipelineDepth
        return (CrashLoop.pageSize * pages, CrashLoop.pageSize * CrashLoop.workers * pages)
    }

    /// What one run did, for the printed line and the summary table.
    struct Figures {
        var store: String
        var run: String
        var seed: UInt64
        var killPoint: String
        var killDetail = ""
        var posts = 0
        var accepted = 0
        var unanswered = 0
        var unansweredExisting = 0
        var notifications = 0
        var registrations = 0
        var devices = 0
        var requests = 0
        /// Distinct (notification, device) pairs the providers answered 200.
        var delivered = 0
        var duplicates = 0
        var maxDuplicatesPerNotification = 0
        var badgeCauses = ""
        var restartListening: Duration = .zero
        var restartDone: Duration = .zero
        /// A power loss: the bytes dropped, and the acknowledged sends and registrations that were lost.
        var unsynced = 0
        var lostSends = 0
        var lostRegistrations = 0
        /// Webhook requests received, distinct events, events received more than once (always with their id),
        /// requests received before the kill, and how long after the restart the outbox was delivered.
        var events = 0
        var eventIDs = 0
        var eventsTwice = 0
        var eventsBeforeKill = 0
        /// Requests the kill cut off (Herald's attempt in flight at the frozen receiver), and the events by type.
        var eventsInFlight = 0
        /// Requests the kill tore (their head sent, not their body).
        var eventsTorn = 0
        var eventTypes = ""
        var webhooksDone: Duration = .zero

        static let tableHeader = """
            | store | run | kill point | POSTs | accepted | unanswered (exist) | notifications | devices | \
            provider requests | delivered | devices twice (max per notification) | webhook requests / events \
            (twice) / before the kill (in flight) | restart: listening / all done / webhooks delivered |
            |---|---|---|---|---|---|---|---|---|---|---|---|---|
            """

        var tableRow: String {
            "| \(store) | \(run) | \(killPoint) | \(posts) | \(accepted) | \(unanswered) (\(unansweredExisting)) | "
                + "\(notifications) | \(devices) | \(requests) | \(delivered) | \(duplicates) "
                + "(\(maxDuplicatesPerNotification)) | \(events) / \(eventIDs) (\(eventsTwice)) / \(eventsBeforeKill) "
                + "(\(eventsInFlight)) | \(CrashRun.seconds(restartListening)) / \(CrashRun.seconds(restartDone)) / "
                + "\(CrashRun.seconds(webhooksDone)) |"
        }

        var line: String {
            "crash run \(store) \(run) (HERALD_CRASH_SEED=\(String(seed, radix: 16)) HERALD_CRASH_RUNS=1 "
                + "HERALD_CRASH_POINT=\(killPoint)): kill \(killPoint) (\(killDetail)); "
                + "POSTs \(posts), accepted \(accepted), unanswered \(unanswered) (\(unansweredExisting) exist), "
                + "notifications \(notifications); registrations \(registrations), devices \(devices); provider "
                + "requests \(requests), delivered \(delivered), devices twice \(duplicates) (max "
                + "\(maxDuplicatesPerNotification) per notification); badges over notifications delivered: "
                + "\(badgeCauses); webhooks: \(events) requests, \(eventIDs) events (\(eventTypes)), \(eventsTwice) "
                + "received twice, \(eventsBeforeKill) before the kill (\(eventsInFlight) in flight, \(eventsTorn) torn); restart "
                + "\(CrashRun.seconds(restartListening)) to listen, \(CrashRun.seconds(restartDone)) until all done, "
                + "\(CrashRun.seconds(webhooksDone)) until the webhook outbox was delivered"
                + (unsynced != 0
                    ? "; power loss dropped \(unsynced < 0 ? "PostgreSQL's" : "\(unsynced)") unsynced bytes, lost "
                        + "\(lostSends) accepted sends and \(lostRegistrations) answered registrations" : "")
        }
    }

    /// A server's output for a failure: from its crash report's first line when it crashed, else its last lines.
    static func excerpt(_ output: String) -> String {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        let crash = lines.firstIndex { $0.contains("Fatal error") || $0.contains("💣") || $0.contains("Crash") }
        let shown = crash.map { lines[max(0, $0 - 10)..<min(lines.count, $0 + 40)] } ?? lines.suffix(30)
        return shown.joined(separator: "\n")
    }

    static func seconds(_ duration: Duration) -> String {
        let value = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return String(format: "%.2f s", value)
    }

    func execute() async throws -> Figures {
        var rng = SeededGenerator(state: seed)
        var figures = Figures(
            store: store.rawValue, run: "\(index)/\(runs)", seed: seed, killPoint: killPoint.rawValue)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database: PostgresTestDatabase? =
            store == .sqlite
            ? nil
            : powerLoss == nil
                ? try await PostgresTestDatabase.create()
                : try await PostgresPowerLoss.database(synchronousCommit: powerLoss == .durable)
        let lazyFS = powerLoss == nil || store == .postgres ? nil : try await LazyFSMount(in: directory)
        defer { lazyFS?.stopNow() }
        let sqliteFile = lazyFS.map { $0.path + "/herald.sqlite" } ?? directory.file("herald.sqlite")
        let ca = try TestCertificateAuthority()
        let key = TestAPNsAuthKey()
        let apns = try await ObservedAPNsServer.start(ca: ca, credentials: [key.credential(topics: [CrashLoop.topic])])
        let account = TestServiceAccount.shared
        let fcm = try await MockFCMServer.start(ca: ca, serviceAccount: account)
        let providers = Providers(apns: apns, fcm: fcm)
        let config = try writeConfig(
            directory: directory, ca: ca, key: key, account: account, providers: providers, database: database,
            sqliteFile: sqliteFile)
        let sql = SQLRunner(sqliteFile: database == nil ? sqliteFile : nil, postgresURL: database?.url)

        let traffic = TrafficLog()
        let killSwitch = KillSwitch()
        // A run that fails half-way leaves no server behind.
        var servers: [Process] = []
        defer { for process in servers where process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let server = try HeraldProcess(["serve", "--config", config, "--port", "0"])
        servers.append(server.process)
        let address = try await server.line(startingWith: "Herald is listening on ")
        let serverKey = try await server.line(startingWith: "server key: ")
        killSwitch.pid.store(server.process.processIdentifier, ordering: .releasing)

        // Devices of some users, each user's first one good, registered before any send.
        var seedTokens: [String] = []
        for user in 0..<CrashLoop.users {
            for device in 0..<Int.random(in: 3...5, using: &rng) {
                let kind = device == 0 ? .good : DeviceKind.random(using: &rng)
                seedTokens.append(
                    prepare(
                        user: "u\(user)", kind: kind, service: .random(using: &rng), providers: providers,
                        traffic: traffic, rng: &rng))
            }
        }
        traffic.state.withLock { $0.nextUser = CrashLoop.users }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (offset, token) in seedTokens.enumerated() {
                if offset >= 8 { try await group.next() }
                group.addTask { _ = try await register(token, address: address, key: serverKey, traffic: traffic) }
            }
            try await group.waitForAll()
        }
        #expect(
            traffic.state.withLock { $0.devices.values.allSatisfy { $0.registeredAt != nil } },
            "a seed device was not registered; the server's output:\n\(Self.excerpt(server.text))")
        if powerLoss == .unsafe {
            // The unsafe settings would lose the app's keys and these devices too, made before any traffic: they are
            // made durable first (a checkpoint syncs the log), so that the loss the run shows is the traffic's and
            // the restarted server still knows its keys.
            _ = try await sql.rows(store == .sqlite ? "PRAGMA wal_checkpoint(PASSIVE)" : "CHECKPOINT")
        }

        // The kill point.
        let threshold = Int.random(in: 50...600, using: &rng)
        let acceptTrigger = Int.random(in: 6...40, using: &rng)
        let commitDelay = Duration.microseconds(Int.random(in: 0...3000, using: &rng))
        let batches = BatchWatch()
        let freeze = ReceiverFreeze(receiver: receiver)
        defer { freeze.receiver.resume() }
        switch killPoint {
        case .accept: break
        case .fanout:
            // Killed from inside the mock, before an answer from the threshold-th on is written: requests are on
            // the wire. And during webhook delivery: at the threshold the receiver is frozen (SIGSTOP), and the kill
            // comes at the first answer after a request of Herald's sits unread at it (``ReceiverFreeze``).
            apns.onAnswer { answer in
                guard answer.number >= threshold else { return }
                guard freeze.start(), let held = freeze.holding else { return }
                killSwitch.fire(
                    "fan-out: at answer \(answer.number), \(max(0, apns.requests.count - answer.number + 1)) requests "
                        + "unanswered; webhook delivery: \(held)")
            }
        case .commit:
            // Killed a few milliseconds after the mock answered the last request of a batch (a notification's
            // answer count reached a multiple of the batch size): the worker is committing that batch.
            apns.onAnswer { answer in
                guard let id = Self.heraldID(answer.body) else { return }
                let count = batches.answered(id)
                guard answer.number >= threshold, count % CrashLoop.batchSize == 0, batches.schedule() else { return }
                let number = answer.number
                Task {
                    try? await Task.sleep(for: commitDelay)
                    killSwitch.fire(
                        "commit: \(commitDelay) after answer \(number), closing a batch of \(id.prefix(8))…")
                }
            }
        }

        // Traffic: six senders, two registrars, until the kill; and a watch on the webhook receiver.
        let senderSeeds = (0..<6).map { _ in rng.next() }
        let registrarSeeds = (0..<2).map { _ in rng.next() }
        let run = index
        let watch = Task { await freeze.watch(until: killSwitch) }
        await withTaskGroup(of: Void.self) { group in
            for (number, senderSeed) in senderSeeds.enumerated() {
                group.addTask {
                    await sender(
                        number: number, run: run, seed: senderSeed, address: address, key: serverKey, traffic: traffic,
                        killSwitch: killSwitch, acceptTrigger: killPoint == .accept ? acceptTrigger : nil)
                }
            }
            for registrarSeed in registrarSeeds {
                group.addTask {
                    await registrar(
                        seed: registrarSeed, address: address, key: serverKey, providers: providers, traffic: traffic,
                        killSwitch: killSwitch)
                }
            }
            // If the traffic ends before the kill point came (it should not), the kill comes late, and says so.
            await group.waitForAll()
        }
        if !killSwitch.hasFired { killSwitch.fire("late: the traffic ended before the kill point") }
        watch.cancel()
        _ = try await server.exitStatus()
        apns.onAnswer(nil)
        // What the receiver got from the dead server (thawed, it reads the request the kill cut off): after a power
        // loss, each is of a fact that must have survived.
        let cutOff = try await freeze.thaw()
        let beforeKill = receiver.requests(path: webhookPath)
        figures.killDetail = killSwitch.detail.withLock { $0 }
        if powerLoss != nil, store == .postgres {
            // PostgreSQL's power loss: stopped at once, every byte it did not fsync dropped, recovered.
            try await PostgresPowerLoss.crash()
            figures.unsynced = -1
        }
        if let lazyFS {
            // The power loss: once the server is dead, every byte it did not sync is gone.
            let usage = try await lazyFS.usage()
            #expect(usage < 100, "LazyFS's cache is full (\(usage) %): it wrote through, and hid any loss")
            figures.unsynced = try await lazyFS.unsyncedBytes()
            try await lazyFS.clearCache()
        }

        if store == .sqlite {
            let check = try await sql.rows("PRAGMA integrity_check")
            #expect(
                check == ["ok"], "integrity_check right after \(lazyFS == nil ? "kill -9" : "the power loss"): \(check)"
            )
        }

        if store == .postgres {
            // The dead server's webhook claims end as their lease would, without the test waiting it out (a
            // shared database cannot tell a dead node from a slow one; MultiNodeTests.webhooksAcrossNodes waits
            // out a real lease). SQLite's restart releases them itself.
            _ = try await sql.rows(
                "UPDATE webhook_deliveries SET locked_until = 0 WHERE state = 'pending' AND locked_by IS NOT NULL")
        }

        // Restart and let everything finish.
        let restartStart = ContinuousClock.now
        let second = try HeraldProcess(["serve", "--config", config, "--port", "0"])
        servers.append(second.process)
        let secondAddress = try await second.line(startingWith: "Herald is listening on ")
        figures.restartListening = ContinuousClock.now - restartStart
        let accepted = traffic.state.withLock { $0.sends.filter { $0.status == 202 }.compactMap(\.id) }
        var notifications: [[String: Any]] = []
        try await waitUntil(
            "every accepted notification final after the restart", timeout: .seconds(120), every: .milliseconds(100)
        ) {
            notifications = try await list("\(secondAddress)/v1/notifications", key: serverKey)
            let ids = Set(notifications.compactMap { $0["id"] as? String })
            let final = notifications.allSatisfy {
                ["done", "failed", "canceled", "expired"].contains($0["status"] as? String)
            }
            // The unsafe run loses some of them for good: it waits for what is there to finish.
            let settledLosses = powerLoss == .unsafe && ContinuousClock.now - restartStart > .seconds(5)
            return final && (ids.isSuperset(of: accepted) || settledLosses)
        }
        figures.restartDone = ContinuousClock.now - restartStart
        if powerLoss != .unsafe {
            // Every event written is delivered: those the dead server had claimed once their lease has ended.
            var backlog: Int?
            try await waitUntil(
                "the webhook outbox delivered after the restart", timeout: .seconds(CrashLoop.webhookLease + 90),
                every: .milliseconds(200), detail: { "backlog \(backlog.map(String.init) ?? "unknown")" }
            ) {
                let answer = try await request(
                    "GET", "\(secondAddress)/v1/webhooks/\(CrashLoop.webhook)", bearer: serverKey)
                backlog = Self.object(answer.body)?["backlog"] as? Int
                return answer.status == 200 && backlog == 0
            }
            figures.webhooksDone = ContinuousClock.now - restartStart
        }
        let installations = try await list("\(secondAddress)/v1/installations", key: serverKey)
        second.process.terminate()
        #expect(try await second.exitStatus(timeout: .seconds(60)) == 0, "graceful stop after the restart")
        let ledger = try await sql.rows(
            "SELECT notification_id, coalesce(installation_id, ''), outcome FROM deliveries"
        )
        .map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }

        // What the restarted server lost of what was acknowledged: accepted sends, answered registrations.
        let listed = Set(notifications.compactMap { $0["id"] as? String })
        figures.lostSends = accepted.filter { !listed.contains($0) }.count
        let suffixes = Set(installations.compactMap { $0["token_suffix"] as? String })
        figures.lostRegistrations = traffic.state.withLock { state in
            state.devices.values.filter { $0.registeredAt != nil && !suffixes.contains(String($0.token.suffix(8))) }
                .count
        }
        if powerLoss == .unsafe {
            // Losses are expected, and counted over the runs (``CrashLoop/run``).
            let sends = traffic.state.withLock { $0.sends }
            figures.posts = sends.count
            figures.accepted = sends.filter { $0.status == 202 }.count
            figures.notifications = notifications.count
            figures.devices = installations.count
            // The unsafe settings promise nothing of the events either: they are counted, not checked.
            let requests = receiver.requests(path: webhookPath)
            figures.events = requests.count
            figures.eventIDs = Set(requests.map(\.webhookID)).count
            figures.eventsBeforeKill = beforeKill.count
        } else {
            #expect(figures.lostSends == 0, "\(figures.lostSends) accepted sends lost")
            #expect(figures.lostRegistrations == 0, "\(figures.lostRegistrations) answered registrations lost")
            try await verify(
                traffic: traffic, providers: providers, notifications: notifications, installations: installations,
                ledger: ledger,
                sql: sql, figures: &figures)
            try await verifyWebhooks(
                beforeKill: beforeKill, cutOff: cutOff, notifications: notifications, sql: sql, figures: &figures)
        }

        try await apns.shutdown()
        try await fcm.shutdown()
        if let database { try await database.drop() }
        return figures
    }

    // MARK: Traffic

    /// A token of the route's shape: APNs hex, or an FCM registration token.
    static func token(_ service: Route, using rng: inout SeededGenerator) -> String {
        switch service {
        case .apns:
            return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &rng)) }.joined()
        case .fcm:
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
            let part = { (count: Int, rng: inout SeededGenerator) in
                String((0..<count).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &rng)] })
            }
            return "\(part(22, &rng)):APA91b\(part(134, &rng))"
        }
    }

    /// Makes up a device, scripts its answers at its provider's mock and records it, before it is registered.
    func prepare(
        user: String, kind: DeviceKind, service: Route, providers: Providers, traffic: TrafficLog,
        rng: inout SeededGenerator
    ) -> String {
        let token = Self.token(service, using: &rng)
        let delay = Duration.milliseconds(Int.random(in: 1...6, using: &rng))
        switch (service, kind) {
        case (.apns, .good): providers.apns.script(token: token, .success(after: delay))
        case (.apns, .flaky):
            providers.apns.script(token: token, .internalServerError, times: 1)
            providers.apns.script(token: token, .success(after: delay))
        case (.apns, .gone):
            // Dated after the registration, so it counts (an older 410 is ignored).
            providers.apns.script(token: token, .unregistered(since: Date().addingTimeInterval(3600)))
        case (.apns, .bad): providers.apns.script(token: token, .badDeviceToken)
        case (.apns, .rejecting): providers.apns.script(token: token, .error(status: 400, reason: "BadExpirationDate"))
        case (.fcm, .good): providers.fcm.script(token: token, .success(after: delay))
        case (.fcm, .flaky):
            providers.fcm.script(token: token, .internalError, times: 1)
            providers.fcm.script(token: token, .success(after: delay))
        case (.fcm, .gone): providers.fcm.script(token: token, .unregistered)
        case (.fcm, .bad): providers.fcm.script(token: token, .invalidToken)
        case (.fcm, .rejecting):
            // INVALID_ARGUMENT about the message, not the token: a failure that counts against the device.
            providers.fcm.script(
                token: token,
                .error(
                    status: 400, rpcStatus: "INVALID_ARGUMENT", message: "Invalid value at 'message.android.ttl'",
                    errorCode: "INVALID_ARGUMENT"))
        }
        traffic.state.withLock {
            $0.devices[token] = TrafficLog.Device(token: token, user: user, kind: kind, service: service)
        }
        return token
    }

    /// Registers a prepared device; returns the status (nil: no answer).
    @discardableResult
    func register(_ token: String, address: String, key: String, traffic: TrafficLog) async throws -> Int? {
        let (user, platform) = traffic.state.withLock { state in
            state.registrationsInFlight += 1
            return (state.devices[token]!.user, state.devices[token]!.service == .apns ? "ios" : "android")
        }
        defer { traffic.state.withLock { $0.registrationsInFlight -= 1 } }
        let answer: (status: Int, body: String)
        do {
            answer = try await request(
                "POST", "\(address)/v1/installations", bearer: key,
                json: #"{"platform":"\#(platform)","token":"\#(token)","user_id":"\#(user)"}"#)
        } catch {
            return nil
        }
        let id = Self.object(answer.body)?["id"] as? String
        traffic.state.withLock { state in
            guard answer.status == 201 || answer.status == 200, var device = state.devices[token] else { return }
            if device.registeredAt == nil {
                device.registeredAt = state.clock
                state.clock += 1
            }
            device.id = id
            state.devices[token] = device
            if device.kind == .good, !state.users.contains(user) { state.users.append(user) }
        }
        return answer.status
    }

    func registrar(
        seed: UInt64, address: String, key: String, providers: Providers, traffic: TrafficLog,
        killSwitch: KillSwitch
    ) async {
        var rng = SeededGenerator(state: seed)
        for _ in 0..<200 where !killSwitch.hasFired {
            if Int.random(in: 0..<5, using: &rng) == 0 {
                // The same good token again: an update, never a second installation.
                let again = traffic.state.withLock { state in
                    state.devices.values.filter { $0.kind == .good && $0.registeredAt != nil }.map(\.token).sorted()
                        .randomElement(using: &rng)
                }
                if let again {
                    let status = try? await register(again, address: address, key: key, traffic: traffic)
                    if let status, !killSwitch.hasFired { #expect(status == 200, "registering a known token again") }
                    traffic.state.withLock { $0.reRegistrations += 1 }
                }
            } else {
                let (user, kind): (String, DeviceKind) = traffic.state.withLock { state in
                    if Int.random(in: 0..<3, using: &rng) == 0 {
                        defer { state.nextUser += 1 }
                        return ("n\(state.nextUser)", .good)
                    }
                    let user = "u\(Int.random(in: 0..<CrashLoop.users, using: &rng))"
                    return (user, DeviceKind.random(using: &rng))
                }
                let token = prepare(
                    user: user, kind: kind, service: .random(using: &rng), providers: providers, traffic: traffic,
                    rng: &rng)
                let status = try? await register(token, address: address, key: key, traffic: traffic)
                if let status, !killSwitch.hasFired { #expect(status == 201, "a new registration") }
            }
            try? await Task.sleep(for: .milliseconds(Int.random(in: 10...40, using: &rng)))
        }
    }

    func sender(
        number: Int, run: Int, seed: UInt64, address: String, key: String, traffic: TrafficLog,
        killSwitch: KillSwitch, acceptTrigger: Int?
    ) async {
        var rng = SeededGenerator(state: seed)
        for _ in 0..<60 where !killSwitch.hasFired {
            let roll = Int.random(in: 0..<10, using: &rng)
            let (seq, body): (Int, String) = traffic.state.withLock { state in
                let seq = state.sends.count
                let key = "crash-r\(run)-s\(seq)"
                var users: [String]?
                var badge = false
                let body: String
                if roll < 2 {
                    body = #"{"target":{"all":true},"payload":{"title":"s\#(seq)"},"idempotency_key":"\#(key)"}"#
                } else {
                    var chosen: [String] = []
                    for _ in 0..<Int.random(in: 1...3, using: &rng) {
                        if let user = state.users.randomElement(using: &rng), !chosen.contains(user) {
                            chosen.append(user)
                        }
                    }
                    users = chosen
                    badge = roll >= 4
                    let list = chosen.map { "\"\($0)\"" }.joined(separator: ",")
                    let badgeField = badge ? #","badge":"increment""# : ""
                    body =
                        #"{"target":{"user_ids":[\#(list)]},"payload":{"title":"s\#(seq)"\#(badgeField)},"idempotency_key":"\#(key)"}"#
                }
                state.sends.append(
                    TrafficLog.Send(seq: seq, key: key, users: users, badge: badge, startClock: state.clock))
                state.postsInFlight += 1
                return (seq, body)
            }
            // Past the trigger, the kill lands 0–3 ms into this POST: parsing, committing or answering it.
            let armed = acceptTrigger.map { trigger in traffic.state.withLock { $0.accepted >= trigger } } ?? false
            let intoPost = Duration.microseconds(Int.random(in: 0...3000, using: &rng))
            async let posted = Self.post(body, address: address, key: key)
            if armed {
                try? await Task.sleep(for: intoPost)
                let (accepted, inFlight) = traffic.state.withLock { ($0.accepted, $0.postsInFlight) }
                killSwitch.fire("accept: \(intoPost) into a POST, \(inFlight) in flight, \(accepted) accepted before")
            }
            let answer = await posted
            traffic.state.withLock { state in
                state.postsInFlight -= 1
                state.sends[seq].status = answer?.status
                state.sends[seq].id = answer.flatMap { Self.object($0.body)?["id"] as? String }
                if answer?.status == 202 { state.accepted += 1 }
            }
            if let answer, !killSwitch.hasFired {
                #expect(answer.status == 202, "send s\(seq): \(answer.body)")
            }
            try? await Task.sleep(for: .milliseconds(Int.random(in: 5...30, using: &rng)))
        }
    }

    /// POSTs a notification; nil when no answer came (the server died).
    static func post(_ body: String, address: String, key: String) async -> (status: Int, body: String)? {
        try? await request("POST", "\(address)/v1/notifications", bearer: key, json: body)
    }

    // MARK: Checks

    func verify(
        traffic: TrafficLog, providers: Providers, notifications: [[String: Any]], installations: [[String: Any]],
        ledger: [[String]], sql: SQLRunner, figures: inout Figures
    ) async throws {
        let state = traffic.state.withLock { $0 }
        let sendsByKey = Dictionary(uniqueKeysWithValues: state.sends.map { ($0.key, $0) })
        let requests = Self.requests(providers)
        figures.posts = state.sends.count
        figures.accepted = state.sends.filter { $0.status == 202 }.count
        figures.unanswered = state.sends.filter { $0.status == nil }.count
        figures.registrations = state.devices.count + state.reRegistrations
        figures.requests = requests.count
        figures.notifications = notifications.count
        figures.delivered = Set(requests.filter { $0.status == 200 }.map { "\($0.notificationID) \($0.token)" }).count

        // What the mock saw, per notification and token: the statuses answered, and the badges sent.
        var answers: [String: [String: [Int]]] = [:]
        var badgeRetries: [String: Int] = [:]
        var badgeNotificationsDelivered: [String: Set<String>] = [:]
        var refusedAsInvalid: Set<String> = []
        var rejections: [String: Set<String>] = [:]
        for request in requests {
            let (token, id) = (request.token, request.notificationID)
            answers[id, default: [:]][token, default: []].append(request.status)
            let kind = state.devices[token]?.kind
            // Every refusal of a gone or bad device says its token is invalid (APNs 410 / 400 BadDeviceToken, FCM
            // 404 UNREGISTERED / 400 INVALID_ARGUMENT on message.token); a rejecting device's 400 is a failure.
            if kind == .gone || kind == .bad, request.status != 200, request.status != 500 {
                refusedAsInvalid.insert(token)
            }
            if kind == .rejecting, request.status == 400 { rejections[token, default: []].insert(id) }
            if request.badge != nil {
                if request.status == 500 { badgeRetries[token, default: 0] += 1 }
                if request.status == 200 { badgeNotificationsDelivered[token, default: []].insert(id) }
            }
        }

        // Every notification is final and came from a POST; every accepted one is done and reached its audience.
        let byID = Dictionary(notifications.compactMap { n in (n["id"] as? String).map { ($0, n) } }) { a, _ in a }
        for send in state.sends where send.status == 202 {
            guard let id = send.id else { continue }
            #expect(byID[id]?["status"] as? String == "done", "accepted s\(send.seq) \(id): \(byID[id] ?? [:])")
        }
        var duplicates = 0
        var maxDuplicates = 0
        var ledgerCounts: [String: [String: Int]] = [:]
        for row in ledger where row.count == 3 { ledgerCounts[row[0], default: [:]][row[2], default: 0] += 1 }
        for notification in notifications {
            let id = notification["id"] as? String ?? "?"
            let status = notification["status"] as? String
            #expect(status == "done", "notification \(id) ended \(status ?? "nil")")
            guard let key = notification["idempotency_key"] as? String, let send = sendsByKey[key] else {
                Issue.record("notification \(id) matches no POST: \(notification)")
                continue
            }
            if send.status == nil { figures.unansweredExisting += 1 }
            #expect(send.status == nil || send.status == 202, "s\(send.seq) answered \(send.status ?? 0) yet exists")
            let received = answers[id] ?? [:]
            // The audience: devices of the target answered before the POST started that receive everything.
            let audience = state.devices.values.filter { device in
                guard device.kind.receivesEverything, let at = device.registeredAt, at < send.startClock else {
                    return false
                }
                return send.users.map { $0.contains(device.user) } ?? true
            }
            let lost = audience.filter { !(received[$0.token] ?? []).contains(200) }
            #expect(
                lost.isEmpty,
                "s\(send.seq) \(id) (\(send.status.map(String.init) ?? "unanswered")): \(lost.count) of \(audience.count) devices never got it"
            )
            if let users = send.users {
                let strangers = received.keys.filter { token in
                    state.devices[token].map { !users.contains($0.user) } ?? true
                }
                #expect(strangers.isEmpty, "s\(send.seq) reached \(strangers.count) devices outside its users")
            }
            // A device that got it twice (a 500 and its retry are one delivery).
            let twice = received.values.filter { $0.filter { $0 != 500 }.count > 1 }.count
            duplicates += twice
            maxDuplicates = max(maxDuplicates, twice)
            #expect(twice <= duplicateBound.perNotification, "s\(send.seq) \(id): \(twice) devices got it twice")

            // Counts add up and match the ledger (delivery_log: all keeps every outcome).
            let counts = notification["counts"] as? [String: Any] ?? [:]
            func count(_ name: String) -> Int { counts[name] as? Int ?? 0 }
            #expect(
                count("targeted")
                    == count("sent") + count("failed") + count("invalid") + count("skipped_preferences")
                    + count("skipped_expired"), "\(id) counts \(counts)")
            let rows = ledgerCounts[id] ?? [:]
            #expect(
                (rows["delivered"] ?? 0, rows["failed"] ?? 0, rows["invalid"] ?? 0)
                    == (count("sent"), count("failed"), count("invalid")), "\(id) counts \(counts), ledger \(rows)")
        }
        figures.duplicates = duplicates
        figures.maxDuplicatesPerNotification = maxDuplicates
        #expect(duplicates <= duplicateBound.perRun, "\(duplicates) duplicates in one run")

        // Installations: one per token, every answered registration there, state as the mock's answers make it.
        figures.devices = installations.count
        let tokensBySuffix = Dictionary(grouping: state.devices.keys) { String($0.suffix(8)) }
        var seen: Set<String> = []
        var failedRows: [String: Int] = [:]
        for row in ledger where row.count == 3 && row[2] == "failed" { failedRows[row[1], default: 0] += 1 }
        // The ledger tells only what the providers said: a delivery the provider answered 200, an invalid token
        // it refused, for that device and notification.
        var tokenOfInstallation: [String: String] = [:]
        for installation in installations {
            if let id = installation["id"] as? String, let suffix = installation["token_suffix"] as? String,
                let token = tokensBySuffix[suffix]?.first
            {
                tokenOfInstallation[id] = token
            }
        }
        var unfounded: [String] = []
        for row in ledger where row.count == 3 && ["delivered", "invalid"].contains(row[2]) {
            guard let token = tokenOfInstallation[row[1]] else { continue }
            let statuses = answers[row[0]]?[token] ?? []
            let founded = row[2] == "delivered" ? statuses.contains(200) : statuses.contains { $0 != 200 && $0 != 500 }
            if !founded { unfounded.append("\(row[2]) \(row[0]) …\(token.suffix(8)): \(statuses)") }
        }
        #expect(unfounded.isEmpty, "ledger rows no provider answer backs: \(unfounded.prefix(5))")
        // And the other way: a device that is never refused got a ledger row for every notification it received
        // (a crash may send a page twice, never leave a delivery unrecorded).
        let installationOfToken = Dictionary(tokenOfInstallation.map { ($0.value, $0.key) }) { a, _ in a }
        let recorded = Set(ledger.filter { $0.count == 3 }.map { "\($0[0]) \($0[1])" })
        var unrecorded: [String] = []
        for (id, byToken) in answers {
            for (token, statuses) in byToken where statuses.contains(200) {
                guard state.devices[token]?.kind.receivesEverything == true,
                    let installation = installationOfToken[token]
                else { continue }
                if !recorded.contains("\(id) \(installation)") { unrecorded.append("\(id) …\(token.suffix(8))") }
            }
        }
        #expect(unrecorded.isEmpty, "\(unrecorded.count) deliveries with no ledger row: \(unrecorded.prefix(5))")
        // Badges. A notification counts itself in a device's badge once, on its first attempt, with an atomic
        // increment; a retry sends the badge as stored then (the latest count, which a later notification may have
        // raised) without incrementing it. Only a crash adds increments: a page sent and not committed is sent again
        // with new ones, and a kill between an increment and its send leaves one that no request carries.
        // A notification's first request to a device is an increment. A request after a 500 for the same
        // notification from the same life of the server (the same provider credential) is a retry: it must carry a
        // number some first request carried. After a restart a request may be either (a committed retry, or a page
        // sent again): a number no first request carried counts as an increment.
        var badgeSends: [String: [String: [ProviderRequest]]] = [:]
        for request in requests where request.badge != nil {
            badgeSends[request.token, default: [:]][request.notificationID, default: []].append(request)
        }
        var reusedNumbers: [String] = []
        var recounted: [String] = []
        /// Per device: the increments its requests show.
        var increments: [String: Int] = [:]
        for (token, byNotification) in badgeSends {
            // The first requests: one increment each, never one number for two notifications in one server life.
            var owner: [Int: (id: String, credential: String)] = [:]
            for (id, sent) in byNotification {
                guard let first = sent.first, let number = first.badge else { continue }
                if let other = owner[number], other.id != id, other.credential == first.credential {
                    reusedNumbers.append("…\(token.suffix(8)) \(number): \(other.id), \(id)")
                }
                owner[number] = (id, first.credential)
            }
            var resent: Set<Int> = []
            for (id, sent) in byNotification {
                for (previous, request) in zip(sent, sent.dropFirst()) {
                    guard let number = request.badge, owner[number] == nil else { continue }
                    if previous.status == 500, previous.credential == request.credential {
                        // A retry that incremented carries a number no first request carried.
                        recounted.append("…\(token.suffix(8)) \(id): \(number)")
                    } else {
                        resent.insert(number)
                    }
                }
            }
            increments[token] = owner.count + resent.count
        }
        #expect(reusedNumbers.isEmpty, "badge numbers of two notifications: \(reusedNumbers.prefix(3))")
        #expect(recounted.isEmpty, "\(recounted.count) retries counted in the badge again: \(recounted.prefix(3))")
        var badgeCauses = (twice: 0, retried: 0, cutOff: 0)
        for installation in installations {
            let suffix = installation["token_suffix"] as? String ?? ""
            guard let token = tokensBySuffix[suffix]?.first, let device = state.devices[token] else {
                Issue.record("installation of no registered token: \(installation)")
                continue
            }
            #expect(!seen.contains(token), "two installations hold the token …\(suffix)")
            seen.insert(token)
            let id = installation["id"] as? String ?? ""
            let valid = installation["valid"] as? Bool
            let failures = installation["failure_count"] as? Int ?? -1
            let badge = installation["badge"] as? Int ?? -1
            #expect(installation["user_id"] as? String == device.user, "…\(suffix) changed user")
            switch device.kind {
            case .good, .flaky:
                #expect(
                    valid == true && failures == 0,
                    "\(device.kind) …\(suffix): valid \(valid ?? false), failures \(failures)")
            case .gone, .bad:
                #expect(
                    valid == !refusedAsInvalid.contains(token),
                    "\(device.kind) …\(suffix): valid \(valid ?? false), refused \(refusedAsInvalid.contains(token))")
            case .rejecting:
                #expect(
                    failures == failedRows[id] ?? 0,
                    "…\(suffix): failure_count \(failures), ledger \(failedRows[id] ?? 0)")
                #expect(
                    failures <= rejections[token]?.count ?? 0, "…\(suffix): \(failures) failures, mock refused fewer")
                #expect(
                    valid == (failures < CrashLoop.maxFailures),
                    "…\(suffix): \(failures) failures, valid \(valid ?? false)")
            }
            // Each increment a request shows was stored; a kill between an increment and its send stores one that
            // no request shows (at most one batch per worker). A power loss rolls back increments not synced, with
            // the page commits after them, and sending the notification again counts it again — except to a device
            // that refused a push since and is no longer sent to: its badge may stay below the numbers its refused
            // pushes carried, which it never displayed.
            let shown = increments[token] ?? 0
            let refusedSince = powerLoss != nil && !device.kind.receivesEverything
            #expect(
                (badge >= shown || refusedSince) && badge <= shown + CrashLoop.workers,
                "\(device.kind) …\(suffix): badge \(badge), \(shown) increments sent")
            if device.kind.receivesEverything {
                let delivered = badgeNotificationsDelivered[token]?.count ?? 0
                badgeCauses.twice += shown - delivered
                badgeCauses.retried += badgeRetries[token] ?? 0
                badgeCauses.cutOff += badge - shown
            }
        }
        figures.badgeCauses =
            "+\(badgeCauses.twice) sent twice, +\(badgeCauses.cutOff) cut off, \(badgeCauses.retried) retries not counted"
        for device in state.devices.values where device.registeredAt != nil {
            #expect(seen.contains(device.token), "registered …\(device.token.suffix(8)) is missing")
        }

        // The database itself.
        try await sql.check(
            [
                (
                    "jobs of missing notifications",
                    "SELECT count(*) FROM jobs WHERE kind = 'notification' AND reference NOT IN (SELECT id FROM notifications)"
                ),
                (
                    "jobs of final notifications",
                    "SELECT count(*) FROM jobs j JOIN notifications n ON n.id = j.reference WHERE j.kind = 'notification'"
                ),
                ("locked jobs after a graceful stop", "SELECT count(*) FROM jobs WHERE locked_by IS NOT NULL"),
                ("pending deliveries", "SELECT count(*) FROM pending_deliveries"),
                (
                    "notifications not final",
                    "SELECT count(*) FROM notifications WHERE status NOT IN ('done', 'failed', 'canceled', 'expired')"
                ),
                (
                    "installations sharing a token",
                    "SELECT count(*) FROM (SELECT 1 FROM installations GROUP BY app_id, service, token_index HAVING count(*) > 1) d"
                ),
                (
                    "ledger rows twice for one device",
                    "SELECT count(*) FROM (SELECT 1 FROM deliveries WHERE installation_id IS NOT NULL AND outcome NOT IN ('retrying', 'fell_back') GROUP BY notification_id, installation_id HAVING count(*) > 1) d"
                ),
                (
                    "ledger rows of missing notifications",
                    "SELECT count(*) FROM deliveries WHERE notification_id NOT IN (SELECT id FROM notifications)"
                ),
                (
                    "ledger rows of missing installations",
                    "SELECT count(*) FROM deliveries WHERE installation_id IS NOT NULL AND installation_id NOT IN (SELECT id FROM installations)"
                ),
                (
                    "negative badges or failure counts",
                    "SELECT count(*) FROM installations WHERE badge < 0 OR failure_count < 0"
                ),
            ])
        if store == .sqlite {
            #expect(try await sql.rows("PRAGMA integrity_check") == ["ok"])
            #expect(try await sql.rows("PRAGMA foreign_key_check") == [])
        }
    }

    /// The run's webhook events against the facts in the recovered database (docs/webhooks.md, "Delivery"): every
    /// request verified by both libraries; an event received twice only under its own id, with the same body; every
    /// fact's event received (a notification's final status, a provider's invalidation, each failed delivery of
    /// the ledger), and no event of a fact the database does not hold — after a power loss, in particular none of
    /// those received before it.
    func verifyWebhooks(
        beforeKill: [WebhookReceiver.Request], cutOff: [WebhookReceiver.Request], notifications: [[String: Any]],
        sql: SQLRunner, figures: inout Figures
    ) async throws {
        let all = receiver.requests(path: webhookPath)
        figures.events = all.count
        figures.eventsBeforeKill = beforeKill.count
        // A request the kill tore (Herald died between its head and its body: the receiver read no JSON body) is not
        // a delivery; its event must come whole afterwards. Only the dead server's last request may be torn.
        let torn = all.filter(\.torn)
        figures.eventsTorn = torn.count
        let lastBefore = beforeKill.map(\.number).max() ?? 0
        #expect(
            torn.allSatisfy { $0.number == lastBefore },
            "torn webhook requests that are not the killed server's last: \(torn.map(\.summary)) (last \(lastBefore))")
        let received = all.filter { !$0.torn }
        let unverified = received.filter { !$0.verified || $0.method != "POST" || $0.eventID != $0.webhookID }
        #expect(
            unverified.isEmpty,
            "\(unverified.count) webhook requests not verified by both libraries: \(unverified.prefix(3).map(\.summary))"
        )
        let offSchema = received.filter { !$0.schemaValid }
        #expect(
            offSchema.isEmpty,
            "\(offSchema.count) webhook bodies not what /openapi.yaml's webhooks allow: \(offSchema.prefix(3).map(\.summary))"
        )
        // One event per id, whatever number of times it came.
        var events: [String: WebhookReceiver.Request] = [:]
        var times: [String: Int] = [:]
        var changed: [String] = []
        for request in received {
            times[request.webhookID, default: 0] += 1
            if let first = events[request.webhookID] {
                if first.body != request.body {
                    changed.append("\(request.webhookID): \(first.body) / \(request.body)")
                }
            } else {
                events[request.webhookID] = request
            }
        }
        #expect(changed.isEmpty, "an event received again with another body: \(changed.prefix(2))")
        let neverWhole = torn.filter { events[$0.webhookID] == nil }
        #expect(neverWhole.isEmpty, "torn webhook requests never received whole: \(neverWhole.map(\.summary))")
        figures.eventIDs = events.count
        figures.eventsTwice = times.values.filter { $0 > 1 }.count
        figures.eventTypes = Dictionary(grouping: events.values, by: \.type).sorted { $0.key < $1.key }
            .map { "\($0.value.count) \($0.key)" }.joined(separator: ", ")

        // The facts, from the database the restarted server left: each final notification, each installation a
        // provider invalidated (invalid, with an `invalid` ledger row: a device deactivated by its failures is not
        // one), each failed, invalid or retried delivery of the ledger (`delivery_log: all` keeps every one).
        let finalStatuses = ["done", "failed", "canceled", "expired"]
        var finals: [String: [String: Any]] = [:]
        for notification in notifications {
            guard let id = notification["id"] as? String,
                finalStatuses.contains(notification["status"] as? String ?? "")
            else { continue }
            finals[id] = notification
        }
        let failures = try await sql.rows(
            """
            SELECT notification_id, coalesce(installation_id, ''), outcome, attempts FROM deliveries
            WHERE outcome IN ('failed', 'invalid', 'retrying')
            """
        ).map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
        let invalid = Set(try await sql.rows("SELECT id FROM installations WHERE NOT valid"))
        var facts: [String: Int] = [:]
        for id in finals.keys { facts["final \(id)"] = 1 }
        var invalidatedBy: [String: Set<String>] = [:]
        for row in failures where row.count == 4 {
            facts["failed \(row[0]) \(row[1]) \(row[2]) \(row[3])", default: 0] += 1
            if row[2] == "invalid", invalid.contains(row[1]) { invalidatedBy[row[1], default: []].insert(row[0]) }
        }
        for installation in invalidatedBy.keys { facts["invalidated \(installation)"] = 1 }

        // The events, by the fact each tells of.
        func fact(_ event: WebhookReceiver.Request) -> String? {
            switch event.type {
            case "notification.completed", "notification.expired", "notification.canceled":
                "final \(event.notificationID)"
            case "installation.invalidated": "invalidated \(event.installationID)"
            case "delivery.failed":
                "failed \(event.notificationID) \(event.installationID) \(event.outcome) \(event.attempts)"
            default: nil
            }
        }
        var told: [String: Set<String>] = [:]
        var mismatched: [String] = []
        for event in events.values {
            guard let fact = fact(event) else {
                Issue.record("an event the loop makes no fact for: \(event.summary)")
                continue
            }
            told[fact, default: []].insert(event.webhookID)
            if event.type.hasPrefix("notification."), let record = finals[event.notificationID] {
                // Its type and data say what the database says: the status, and the counts as the API shows them.
                let status = record["status"] as? String ?? ""
                let type = ["done": "completed", "failed": "completed"][status] ?? status
                let counts = record["counts"] as? [String: Any] ?? [:]
                let differing = event.counts.filter { counts[$0.key] as? Int != $0.value }
                if event.type != "notification.\(type)" || event.status != status || !differing.isEmpty {
                    mismatched.append("\(event.summary): stored \(status), counts \(counts)")
                }
            }
            if event.type == "installation.invalidated",
                invalidatedBy[event.installationID].map({ !$0.contains(event.notificationID) }) == true
            {
                mismatched.append("\(event.summary): the ledger has its invalid row in another notification")
            }
        }
        #expect(
            mismatched.isEmpty,
            "\(mismatched.count) events that say otherwise than the database: \(mismatched.prefix(3))")
        // Every fact told, once (under one id); no event of a fact the database does not hold.
        let lost = facts.filter { (told[$0.key]?.count ?? 0) < $0.value }.keys.sorted()
        #expect(
            lost.isEmpty,
            "\(lost.count) facts in the database whose webhook event never arrived: \(lost.prefix(5))")
        let twice = told.filter { $0.value.count > (facts[$0.key] ?? 0) && facts[$0.key] != nil }
        let twiceTold = twice.sorted { $0.key < $1.key }.prefix(3).map { fact, ids in
            "\(fact) (\(facts[fact] ?? 0) in the database): "
                + ids.sorted().compactMap { events[$0] }.map { "\($0.webhookID) \($0.body)" }.joined(separator: " | ")
        }
        #expect(twice.isEmpty, "\(twice.count) facts told under more ids than they are facts: \(twiceTold)")
        let invented = told.filter { facts[$0.key] == nil }
        #expect(
            invented.isEmpty,
            "\(invented.count) events of facts the database does not hold: \(invented.keys.sorted().prefix(5))")
        // The events received before the kill: after a power loss, what was delivered must have been durable.
        let undone = beforeKill.filter { event in fact(event).map { facts[$0] == nil } ?? true }
        #expect(
            undone.isEmpty,
            "\(undone.count) events received before the \(powerLoss == nil ? "kill" : "power loss") whose fact is missing after it: \(undone.prefix(3).map(\.summary))"
        )
        // The requests the kill cut off (sent to the frozen receiver, never answered): each came again after the
        // restart, with its id.
        figures.eventsInFlight = cutOff.count
        let again = Set(received.filter { $0.number > lastBefore }.map(\.webhookID))
        let notAgain = cutOff.filter { !again.contains($0.webhookID) }
        #expect(notAgain.isEmpty, "events in flight at the kill that never came again: \(notAgain.map(\.summary))")

        // The outbox holds exactly the events received, each delivered.
        let outbox = try await sql.rows("SELECT event_id, state FROM webhook_deliveries")
            .map { $0.split(separator: "|").map(String.init) }
        let undelivered = outbox.filter { $0.count != 2 || $0[1] != "delivered" }
        #expect(undelivered.isEmpty, "\(undelivered.count) outbox rows not delivered: \(undelivered.prefix(5))")
        let written = Set(outbox.compactMap(\.first))
        let unreceived = written.subtracting(events.keys)
        let unwritten = Set(events.keys).subtracting(written)
        #expect(
            unreceived.isEmpty && unwritten.isEmpty,
            "outbox and receiver differ: \(unreceived.count) written, not received \(unreceived.prefix(3)); \(unwritten.count) received, not in the outbox \(unwritten.prefix(3))"
        )
    }

    // MARK: Helpers

    func writeConfig(
        directory: TemporaryDirectory, ca: TestCertificateAuthority, key: TestAPNsAuthKey, account: TestServiceAccount,
        providers: Providers, database: PostgresTestDatabase?, sqliteFile: String
    ) throws -> String {
        let keyFile = directory.file("AuthKey.p8")
        try key.p8PEM.write(toFile: keyFile, atomically: false, encoding: .utf8)
        let accountFile = directory.file("service-account.json")
        try account.json(tokenURI: providers.fcm.tokenURI).write(
            toFile: accountFile, atomically: false, encoding: .utf8)
        for file in [keyFile, accountFile] {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        }
        let caFile = directory.file("ca.pem")
        try ca.rootPEM.write(toFile: caFile, atomically: false, encoding: .utf8)
        let secret = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let databaseLines =
            database.map { "database: \($0.url)\nsecret_key: \(secret)" }
            ?? "database: \(sqliteFile)\nsqlite:\n  synchronous: \(powerLoss?.synchronous ?? "full")"
        let config = directory.file("herald.yaml")
        try """
        \(databaseLines)
        app:
          default:
            delivery_log: all
            webhooks: [\(CrashLoop.webhook)]
            webhook:
              \(CrashLoop.webhook):
                url: http://127.0.0.1:\(receiver.port)\(webhookPath)
                events: ['*']
                secret: \(receiver.secret)
            apns:
              key_file: \(keyFile)
              key_id: \(key.keyID)
              team_id: \(key.teamID)
              topic: \(CrashLoop.topic)
              url: https://127.0.0.1:\(providers.apns.port)
              ca_file: \(caFile)
            fcm:
              service_account_file: \(accountFile)
              url: https://127.0.0.1:\(providers.fcm.port)
              ca_file: \(caFile)
        engine:
          page_size: \(CrashLoop.pageSize)
          pipeline_depth: \(CrashLoop.pipelineDepth)
          workers: \(CrashLoop.workers)
          poll_interval_ms: 100
          lease_seconds: 3
          max_failures: \(CrashLoop.maxFailures)
          retry:
            base_ms: 50
            cap_seconds: 1
            max_attempts: 4
        webhooks:
          allow_http: true
          allow_networks: ["127.0.0.1/32"]
          lease_seconds: \(CrashLoop.webhookLease)
        """.write(toFile: config, atomically: false, encoding: .utf8)
        return config
    }

    /// Every record of a list route, page after page.
    func list(_ url: String, key: String) async throws -> [[String: Any]] {
        var records: [[String: Any]] = []
        var cursor: String?
        repeat {
            let page = try await request(
                "GET", url + "?limit=1000" + (cursor.map { "&cursor=\($0)" } ?? ""), bearer: key)
            try #require(page.status == 200, "\(url): \(page.body)")
            let object = Self.object(page.body) ?? [:]
            records += object["data"] as? [[String: Any]] ?? []
            cursor = object["next_cursor"] as? String
        } while cursor != nil
        return records
    }

    static func object(_ body: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any]
    }

    static func json(_ body: [UInt8]) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
    }

    /// The notification id Herald puts beside `aps`.
    static func heraldID(_ body: [UInt8]) -> String? {
        (json(body)?["herald"] as? [String: Any])?["id"] as? String
    }

    /// Every request both mocks received that carried a Herald notification.
    static func requests(_ providers: Providers) -> [ProviderRequest] {
        let apns = providers.apns.requests.compactMap { request -> ProviderRequest? in
            let body = json(request.body)
            guard let token = request.token, let id = (body?["herald"] as? [String: Any])?["id"] as? String else {
                return nil
            }
            let badge = (body?["aps"] as? [String: Any])?["badge"] as? Int
            let credential = request.headers.first { $0.0 == "authorization" }?.1 ?? ""
            return ProviderRequest(
                token: token, status: request.status, notificationID: id, badge: badge, credential: credential)
        }
        let fcm = providers.fcm.requests.compactMap { request -> ProviderRequest? in
            let message = json(request.body)?["message"] as? [String: Any]
            guard let token = request.token, let id = (message?["data"] as? [String: Any])?["herald_id"] as? String
            else { return nil }
            let notification = (message?["android"] as? [String: Any])?["notification"] as? [String: Any]
            return ProviderRequest(
                token: token, status: request.status, notificationID: id,
                badge: notification?["notification_count"] as? Int, credential: request.accessToken ?? "")
        }
        return apns + fcm
    }
}

/// Runs SQL on the run's database with the `sqlite3` or `psql` command.
struct SQLRunner {
    let sqliteFile: String?
    let postgresURL: String?

    func rows(_ query: String) async throws -> [String] {
        let arguments =
            if let sqliteFile { ["sqlite3", "-batch", "-separator", "|", sqliteFile, query] } else {
                ["psql", postgresURL ?? "", "-X", "-A", "-t", "-F", "|", "-c", query]
            }
        let (status, out, err) = try await ScriptProcess.run(arguments)
        try #require(status == 0, "\(query): \(err)")
        return out.split(separator: "\n").map(String.init)
    }

    /// Expects each counting query to answer 0.
    func check(_ queries: [(String, String)]) async throws {
        for (what, query) in queries {
            let answer = try await rows(query)
            #expect(answer == ["0"], "\(what): \(answer)")
        }
    }
}

/// The loop's webhook receiver: `scripts/webhook-receiver.py`, a real HTTP server that verifies every request's
/// Standard Webhooks signature with the `standardwebhooks` and `svix` libraries, checks its body against the
/// committed `docs/openapi.yaml`'s `webhooks`, answers 204 and prints one JSON line per request as soon as it has
/// read it (before it answers). Its output goes to a file read incrementally: a loop receives thousands.
final class WebhookReceiver: Sendable {
    /// One request it received, with what the checks read of its event.
    struct Request: Sendable {
        /// Its number in the receiver's output (1 for the first request).
        var number: Int
        var method: String
        var path: String
        var webhookID: String
        var answer: String
        /// Both libraries verified its signature.
        var verified: Bool
        var error: String
        /// Its body is what the OpenAPI document's schema for its type allows.
        var schemaValid: Bool
        var schemaError: String
        /// It came with no JSON body: its sender died between its head and its body.
        var torn: Bool
        /// The body, serialized again with sorted keys: the same event gives the same text.
        var body: String
        var eventID: String
        var type: String
        var notificationID: String
        var installationID: String
        var outcome: String
        var attempts: Int
        var status: String
        var counts: [String: Int]

        var summary: String {
            "#\(number) \(type) \(webhookID) (answer \(answer), verified \(verified)\(error.isEmpty ? "" : ": \(error)"), "
                + "schema \(schemaValid)\(schemaError.isEmpty ? "" : ": \(schemaError)")) notification \(notificationID) "
                + "installation \(installationID) \(outcome)"
        }
    }

    /// The signing secret, which the runs' endpoints are configured with.
    let secret: String
    let port: Int
    private let process: Process
    private let input: Pipe
    private let directory: TemporaryDirectory
    private let outputPath: String
    /// The bytes of its output parsed so far, and the requests they held.
    private let parsed = Mutex<(offset: UInt64, requests: [Request])>((0, []))

    /// Starts a receiver on a free port, with a new secret.
    static func start() async throws -> WebhookReceiver {
        let secret = "whsec_" + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let openAPI = TestPython.repository.appendingPathComponent("docs/openapi.yaml").path
        let arguments = try TestPython.tools.command(
            TestPython.script("webhook-receiver.py"), ["--port", "0", "--secret", secret, "--openapi", openAPI])
        let directory = try TemporaryDirectory()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let input = Pipe()
        process.standardInput = input
        let outputPath = directory.file("stdout")
        for file in [outputPath, directory.file("stderr")] {
            _ = FileManager.default.createFile(atPath: file, contents: nil)
        }
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: directory.file("stderr")))
        try process.run()
        var port: Int?
        try await waitUntil("the webhook receiver's port", timeout: .seconds(60), every: .milliseconds(25)) {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first, text.contains("\n") {
                port =
                    (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["listening"] as? Int
                return true
            }
            return !process.isRunning
        }
        guard let port else {
            let errors = (try? String(contentsOfFile: directory.file("stderr"), encoding: .utf8)) ?? ""
            kill(process.processIdentifier, SIGKILL)
            throw TestFailure("the webhook receiver did not say its port: \(errors)")
        }
        return WebhookReceiver(
            secret: secret, port: port, process: process, input: input, directory: directory, outputPath: outputPath)
    }

    private init(
        secret: String, port: Int, process: Process, input: Pipe, directory: TemporaryDirectory, outputPath: String
    ) {
        self.secret = secret
        self.port = port
        self.process = process
        self.input = input
        self.directory = directory
        self.outputPath = outputPath
    }

    /// Every request received so far (on `path`, when given), in the order received.
    func requests(path: String? = nil) -> [Request] {
        let all = parsed.withLock { state -> [Request] in
            guard let handle = FileHandle(forReadingAtPath: outputPath) else { return state.requests }
            defer { try? handle.close() }
            try? handle.seek(toOffset: state.offset)
            let data = (try? handle.readToEnd()) ?? Data()
            // Only whole lines: the last may still be being written.
            guard let end = data.lastIndex(of: 0x0A) else { return state.requests }
            for line in data[data.startIndex..<end].split(separator: 0x0A) {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                    object["listening"] == nil
                else { continue }
                state.requests.append(Self.request(object))
            }
            state.offset += UInt64(end - data.startIndex + 1)
            return state.requests
        }
        return path.map { path in all.filter { $0.path == path } } ?? all
    }

    /// What its standard error says (its access log, and why it stopped).
    var errors: String { (try? String(contentsOfFile: directory.file("stderr"), encoding: .utf8)) ?? "" }

    /// Freezes it (SIGSTOP): it reads and answers nothing until ``resume()``, while the kernel still accepts
    /// connections and requests for it.
    func freeze() { kill(process.processIdentifier, SIGSTOP) }

    /// Lets it run again (SIGCONT).
    func resume() { kill(process.processIdentifier, SIGCONT) }

    /// Whether it is stopped (`T` in `/proc/<pid>/stat`).
    var isStopped: Bool {
        let handle = FileHandle(forReadingAtPath: "/proc/\(process.processIdentifier)/stat")
        defer { try? handle?.close() }
        let stat = String(decoding: (try? handle?.readToEnd()) ?? Data(), as: UTF8.self)
        // pid (comm) state …: the state follows the command's closing parenthesis.
        guard let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(after: close)...].split(separator: " ").first == "T"
    }

    /// The bytes sent to it that it has not read: its connections' receive queues (`/proc/net/tcp`).
    func unreadBytes() -> Int {
        // Read to its end: its size says 0, and a read of that size gets its first page alone.
        let handle = FileHandle(forReadingAtPath: "/proc/net/tcp")
        defer { try? handle?.close() }
        let table = String(decoding: (try? handle?.readToEnd()) ?? Data(), as: UTF8.self)
        let local = ":" + String(format: "%04X", port)
        var unread = 0
        // sl local_address rem_address st tx_queue:rx_queue …; 01 is ESTABLISHED.
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 4, fields[1].hasSuffix(local), fields[3] == "01",
                let queue = fields[4].split(separator: ":").last, let bytes = Int(queue, radix: 16)
            else { continue }
            unread += bytes
        }
        return unread
    }

    /// Stops it: the end of its input ends it, SIGTERM too.
    func stop() {
        resume()
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
    }

    private static func request(_ line: [String: Any]) -> Request {
        let body = line["body"] as? [String: Any] ?? [:]
        let data = body["data"] as? [String: Any] ?? [:]
        let text = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])).map {
            String(decoding: $0, as: UTF8.self)
        }
        return Request(
            number: line["n"] as? Int ?? 0, method: line["method"] as? String ?? "",
            path: line["path"] as? String ?? "",
            webhookID: line["id"] as? String ?? "", answer: line["answer"] as? String ?? "",
            verified: line["verified_standardwebhooks"] as? Bool == true && line["verified_svix"] as? Bool == true
                && line["error"] is NSNull,
            error: line["error"] as? String ?? "", schemaValid: line["schema_valid"] as? Bool == true,
            schemaError: line["schema_error"] as? String ?? "", torn: line["body"] as? [String: Any] == nil,
            body: text ?? "", eventID: body["id"] as? String ?? "",
            type: body["type"] as? String ?? "", notificationID: data["notification_id"] as? String ?? "",
            installationID: data["installation_id"] as? String ?? "", outcome: data["outcome"] as? String ?? "",
            attempts: data["attempts"] as? Int ?? -1, status: data["status"] as? String ?? "",
            counts: (data["counts"] as? [String: Any] ?? [:]).compactMapValues { $0 as? Int })
    }
}

import Foundation
import HeraldCore
import HeraldSQLite
import HeraldTestSupport
import Logging
import Synchronization
import Testing

@testable import HeraldEngine

/// The direct channel's confirm rule without sockets or sleeps: the state machine on dates alone,
/// the node's channels on a clock moved by hand with in-memory writers, two nodes over an
/// in-memory relay, and the engine's page that does not wait for a confirmation.
@Suite("Direct channel: the confirm window as a state machine")
struct ConfirmWindowTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("confirmed in time: the waiting event settles as confirmed and nothing is left to expire")
    func confirmedInTime() {
        var window = ConfirmWindow<String>(window: .seconds(10))
        let deadline = window.sent("c1", ticket: "n1", installationID: "i1", session: 1, at: start)
        #expect(deadline == start.addingTimeInterval(10))
        #expect(window.nextDeadline == deadline)
        #expect(window.confirm("c1", session: 2) == nil, "a confirmation on another channel is unknown")
        #expect(window.confirm("c1", session: 1)?.ticket == "n1")
        #expect(window.confirm("c1", session: 1) == nil, "settled once")
        #expect(window.nextDeadline == nil)
        #expect(window.expire(now: start.addingTimeInterval(60)).sessions.isEmpty)
    }

    @Test("a missed window tears down that channel: everything waiting on it settles, other channels keep waiting")
    func missedWindow() {
        var window = ConfirmWindow<String>(window: .seconds(10))
        _ = window.sent("a", ticket: "n1", installationID: "i1", session: 1, at: start)
        _ = window.sent("b", ticket: "n2", installationID: "i1", session: 1, at: start.addingTimeInterval(5))
        let later = window.sent("c", ticket: "n3", installationID: "i2", session: 2, at: start.addingTimeInterval(3))
        #expect(window.expire(now: start.addingTimeInterval(9.9)).sessions.isEmpty, "not yet")
        let (sessions, missed) = window.expire(now: start.addingTimeInterval(10))
        #expect(sessions == [1])
        #expect(missed.map(\.ticket) == ["n1", "n2"], "the one not yet due goes with its channel")
        #expect(window.nextDeadline == later)
        #expect(window.confirm("b", session: 1) == nil, "a torn-down channel confirms nothing more")
        #expect(window.reason(.unconfirmed) == "not confirmed within 10 s: the channel was torn down")
    }

    @Test("a channel that closes or is replaced settles what waited on it, with its reason")
    func closeWithPending() {
        var window = ConfirmWindow<String>(window: .seconds(10))
        _ = window.sent("a", ticket: "n1", installationID: "i1", session: 1, at: start)
        _ = window.sent("b", ticket: "n2", installationID: "i2", session: 2, at: start)
        #expect(window.end(session: 1).map(\.ticket) == ["n1"])
        #expect(window.end(session: 1).isEmpty)
        #expect(window.waiting.count == 1)
        #expect(window.reason(.channelClosed) == "the channel closed before the device confirmed")
        #expect(window.reason(.channelReplaced) == "a new channel replaced this one")
    }

    /// A node's channels on a clock moved by hand, recording what the engine would be told.
    final class Node: Sendable {
        let channels: DirectChannels
        /// The node's wall clock and what its timers sleep on (the relay's ticks, its wait for an
        /// answer): only the test moves it.
        let clock: ManualClock
        let settled = Locked<[(String, String, PendingDelivery.Reason)]>([])
        let written = Locked<[[String: JSONValue]]>([])
        let tornDown = Locked(0)

        init(start: Date, window: Duration = .seconds(10), relay: (any ChannelRelay)? = nil, node: String = "n") {
            let clock = ManualClock(start: start)
            self.clock = clock
            channels = DirectChannels(
                confirmWindow: window, node: node, relay: relay, lease: .milliseconds(300), now: { clock.date },
                clock: clock)
            let settled = self.settled
            channels.onSettle { notification, installation, reason in
                settled.mutate { $0.append((notification, installation, reason)) }
            }
        }

        func open(_ installationID: String, confirms: Bool) async -> DirectChannels.Session {
            let written = self.written
            let tornDown = self.tornDown
            return await channels.open(
                appID: "app", installationID: installationID, confirms: confirms,
                write: { event in written.mutate { $0.append(event) } },
                onTeardown: { tornDown.mutate { $0 += 1 } })
        }

        func advance(by duration: Duration) { clock.advance(by: duration) }
        var reasons: [PendingDelivery.Reason] { settled.value.map(\.2) }
        var lastConfirmID: String? {
            guard case .string(let id)? = written.value.last?["hass_confirm_id"] else { return nil }
            return id
        }
    }

    @Test("without support_confirm, writing is delivery: nothing waits")
    func withoutConfirm() async {
        let node = Node(start: start)
        _ = await node.open("i1", confirms: false)
        let outcome = await node.channels.deliver(["message": .string("hi")], to: "i1", notificationID: "n1")
        #expect(outcome == .delivered(confirmed: false))
        #expect(node.written.value.first?["hass_confirm_id"] == nil)
        #expect(node.channels.state.withLock { $0.confirms.waiting.isEmpty })
        #expect(
            await node.channels.deliver(["message": .string("hi")], to: "other", notificationID: "n1") == .notConnected)
    }

    @Test("a confirming channel: confirmed in time, missed on the clock (torn down), closed, replaced")
    func channelsOnTheClock() async throws {
        let node = Node(start: start)
        let session = await node.open("i1", confirms: true)
        #expect(
            await node.channels.deliver(["message": .string("one")], to: "i1", notificationID: "n1")
                == .confirming(until: start.addingTimeInterval(10)))
        let confirmID = try #require(node.lastConfirmID)
        #expect(confirmID.count == 32)
        #expect(await node.channels.confirm(session, confirmID: confirmID))
        #expect(await node.channels.confirm(session, confirmID: confirmID) == false)
        #expect(node.reasons == [.confirmed])

        // Missed: nothing happens until the clock passes the deadline.
        _ = await node.channels.deliver(["message": .string("two")], to: "i1", notificationID: "n2")
        node.advance(by: .seconds(9))
        await node.channels.expireMissed()
        #expect(node.channels.isOpen("i1"))
        node.advance(by: .seconds(1))
        await node.channels.expireMissed()
        #expect(!node.channels.isOpen("i1"))
        #expect(node.tornDown.value == 1)
        #expect(node.reasons == [.confirmed, .unconfirmed])

        // Closed with one waiting.
        let second = await node.open("i1", confirms: true)
        _ = await node.channels.deliver(["message": .string("three")], to: "i1", notificationID: "n3")
        await node.channels.close(second)
        #expect(node.reasons.last == .channelClosed)

        // Replaced by a newer channel of the same device.
        _ = await node.open("i1", confirms: true)
        _ = await node.channels.deliver(["message": .string("four")], to: "i1", notificationID: "n4")
        _ = await node.open("i1", confirms: true)
        #expect(node.reasons.last == .channelReplaced)
        #expect(node.settled.value.map(\.0) == ["n1", "n2", "n3", "n4"])
    }

    /// Herald kept its callbacks as the value of a `Mutex` once: each read re-abstracted the closure
    /// through `withLock`'s `inout` and wrote it back wrapped in two more thunks (two more heap
    /// contexts), so every confirmation, which reads the callback, made every later one a level
    /// deeper: the soak's memory and CPU grew with the confirmations since start, and some tens of
    /// thousands of reads later releasing the chain overflowed the stack. Reading it must keep
    /// nothing: 40,000 reads kept 2-4 MB then. The least growth of three rounds is taken, so
    /// that memory something else touched during one round does not count.
    @Test("reading the settle callback keeps nothing: 40,000 reads leave the process's memory where it was")
    func readingTheCallbackKeepsNothing() async throws {
        let channels = DirectChannels(confirmWindow: .seconds(10), node: "n", now: { Date(timeIntervalSince1970: 0) })
        let settled = Locked(0)
        channels.onSettle { _, _, _ in settled.mutate { $0 += 1 } }
        for _ in 0..<1_000 { _ = channels.settledAction }
        var growth: [Int] = []
        for _ in 0..<3 {
            let before = try Self.residentBytes()
            for _ in 0..<40_000 { _ = channels.settledAction }
            growth.append(try Self.residentBytes() - before)
        }
        #expect(growth.min()! < 1 << 20, "40,000 reads of the callback kept \(growth.map { $0 >> 10 }) KiB")
        await channels.settledAction?("n1", "i1", .confirmed)
        #expect(settled.value == 1)
    }

    /// The process's resident memory (`/proc/self/statm`, its second field in pages).
    static func residentBytes() throws -> Int {
        let statm = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8)
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { throw TestFailure("unreadable statm: \(statm)") }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    @Test("relay across nodes: the holder's confirmation and its missed window come back to the sending node")
    func relayAcrossNodes() async throws {
        let relay = InMemoryRelay()
        let holder = Node(start: start, relay: relay, node: "holder")
        let sender = Node(start: start, relay: relay, node: "sender")
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await holder.channels.runRelay() }
            group.addTask { await sender.channels.runRelay() }
            // A message posted before its node listens is lost, as the relay allows.
            try await waitUntil("both nodes listening") { relay.isListening("holder") && relay.isListening("sender") }
            let session = await holder.open("i1", confirms: true)
            #expect(await sender.channels.anyOpenAnywhere(now: start))
            let outcome = await sender.channels.deliver(["message": .string("one")], to: "i1", notificationID: "n1")
            #expect(outcome == .confirming(until: start.addingTimeInterval(10)))
            #expect(await holder.channels.confirm(session, confirmID: try #require(holder.lastConfirmID)))
            try await waitUntil("the confirmation back on the sender") { sender.reasons == [.confirmed] }
            #expect(holder.reasons.isEmpty, "the holder's own engine is told nothing")

            _ = await sender.channels.deliver(["message": .string("two")], to: "i1", notificationID: "n2")
            holder.advance(by: .seconds(10))
            // The holder's relay loop looks at the clock at its next tick (a third of the lease).
            try await waitUntil("the holder's relay loop waiting for its tick") { holder.clock.sleepers == 1 }
            holder.clock.advance(by: .milliseconds(100))
            try await waitUntil("the missed window back on the sender", detail: { "\(sender.reasons)" }) {
                sender.reasons == [.confirmed, .unconfirmed]
            }
            #expect(!holder.channels.isOpen("i1"))
            #expect(sender.settled.value.map(\.0) == ["n1", "n2"])
            group.cancelAll()
        }
    }

    @Test("a page with a confirming device commits at once; the confirmation settles it after the job returned")
    func pageDoesNotWaitForTheConfirmation() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteStore(
            path: directory.file("herald.sqlite"), cipher: Fixtures.cipher(), syncsAccepted: false)
        try await store.migrate()
        let transport = RecordingTransport()
        let clock = ManualClock(start: start)
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let dispatcher = Dispatcher(
            store: store, transports: ["app": AppTransports([transport])],
            configuration: EngineConfiguration(cleanupInterval: nil, channelConfirmWindow: .seconds(60)),
            logger: logger, now: { clock.date })
        let installation = try await store.register(
            InstallationRegistration(
                platform: .ios, service: .apns, token: .device(Fixtures.apnsToken()),
                profile: InstallationProfile(userID: "ann")),
            appID: "app", now: start
        ).installation.id
        let written = Locked<[[String: JSONValue]]>([])
        let session = await dispatcher.channels.open(
            appID: "app", installationID: installation, confirms: true,
            write: { event in written.mutate { $0.append(event) } }, onTeardown: {})
        let sent = try await dispatcher.submit(
            SendRequest(
                target: NotificationTarget(audience: .userIDs(["ann"])), payload: NotificationPayload(body: "x")),
            appID: "app")
        guard case .accepted(let notification, _) = sent else { throw TestFailure("not accepted") }

        #expect(try await dispatcher.runDueJobs() == 1, "the job returns without the confirmation")
        let waiting = try #require(try await store.notification(id: notification.id))
        #expect(waiting.status == .sending)
        #expect(try await store.nextPending(notificationID: notification.id) == start.addingTimeInterval(61))
        guard case .string(let confirmID)? = written.value.first?["hass_confirm_id"] else {
            throw TestFailure("no hass_confirm_id")
        }

        #expect(await dispatcher.channels.confirm(session, confirmID: confirmID))
        #expect(try await dispatcher.runDueJobs() == 1, "the confirmation made it due now")
        let done = try #require(try await store.notification(id: notification.id))
        #expect(done.status == .done)
        #expect(done.counts.sent == 1)
        #expect(transport.pushes.isEmpty, "nothing went to the cloud")
    }
}

/// Nodes' holds and messages in memory: what PostgreSQL's table and NOTIFY do for real nodes.
final class InMemoryRelay: ChannelRelay {
    private let state = Mutex<(holders: [String: String], streams: [String: AsyncStream<String>.Continuation])>(
        ([:], [:]))

    func attachChannel(installationID: String, node: String, until: Date) async throws {
        state.withLock { $0.holders[installationID] = node }
    }

    func detachChannel(installationID: String, node: String) async throws {
        state.withLock { state in
            if state.holders[installationID] == node { state.holders[installationID] = nil }
        }
    }

    func renewChannels(node: String, until: Date) async throws {}

    func channelHolders(of installationIDs: [String], now: Date) async throws -> [String: String] {
        state.withLock { state in state.holders.filter { installationIDs.contains($0.key) } }
    }

    func anyChannelHeld(now: Date) async throws -> Bool { state.withLock { !$0.holders.isEmpty } }

    /// Whether `node` listens for its messages.
    func isListening(_ node: String) -> Bool { state.withLock { $0.streams[node] != nil } }

    func post(_ message: String, to node: String) async throws {
        _ = state.withLock { $0.streams[node] }?.yield(message)
    }

    func listen(for node: String, into messages: AsyncStream<String>.Continuation) async {
        state.withLock { $0.streams[node] = messages }
        while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(50)) }
        messages.finish()
    }
}

/// A value behind a lock, shareable by closures.
final class Locked<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    init(_ value: Value) { storage = Mutex(value) }
    var value: Value { storage.withLock { $0 } }
    func mutate(_ change: (inout Value) -> Void) { storage.withLock { change(&$0) } }
}

import Foundation
import HeraldCore
import HeraldSQLite
import HeraldTestSupport
import Logging
import Synchronization
import Testing

@testable import HeraldEngine

/// A direct-only device waits for its channel (`offline`) and is woken when it connects. A device
/// that connects while a page is being sent to it connects between the page's look and its commit:
/// the connect's wake finds nothing committed yet, so the page's commit must see the channel itself.
@Suite("Direct channel: a device connecting while its page is sent")
struct OfflineWakeTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("it gets the push once the page commits, not at the next recheck an hour later")
    func connectDuringPage() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteStore(
            path: directory.file("herald.sqlite"), cipher: Fixtures.cipher(), syncsAccepted: false)
        try await store.migrate()
        let clock = ManualClock(start: start)
        // The device connects at the moment the page looks for its channel on other nodes.
        let relay = LookupRelay()
        let channels = DirectChannels(
            confirmWindow: .seconds(10), node: "a", relay: relay, lease: .seconds(30), now: { clock.date },
            clock: clock)
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let dispatcher = Dispatcher(
            store: store, transports: ["app": AppTransports([RecordingTransport()])],
            configuration: EngineConfiguration(cleanupInterval: nil), logger: logger, now: { clock.date },
            clock: clock, channels: channels)
        let device = try await store.register(
            InstallationRegistration(platform: .android, service: .direct, token: .device("device-1")),
            appID: "app", now: start
        ).installation.id
        let written = Locked<[[String: JSONValue]]>([])
        relay.onFirstLookup {
            _ = await channels.open(
                appID: "app", installationID: device, confirms: false,
                write: { event in written.mutate { $0.append(event) } }, onTeardown: {})
        }
        let sent = try await dispatcher.submit(
            SendRequest(
                target: NotificationTarget(audience: .installationIDs([device])),
                payload: NotificationPayload(body: "x")),
            appID: "app")
        guard case .accepted(let notification, _) = sent else { throw TestFailure("not accepted") }

        _ = try await dispatcher.runDueJobs()
        #expect(relay.lookups == 1, "the page found the device away")
        #expect(written.value.count == 1, "the push reached the channel")
        let done = try #require(try await store.notification(id: notification.id))
        #expect(done.status == .done)
        #expect(done.counts.sent == 1)
        #expect(try await store.nextPending(notificationID: notification.id) == nil)
    }
}

/// An in-memory relay (``InMemoryRelay``) that runs an action at the first lookup of a channel's
/// holder, before answering it: what a device connecting at that instant looks like.
final class LookupRelay: ChannelRelay {
    private let relay = InMemoryRelay()
    private let state = Mutex<(action: (@Sendable () async -> Void)?, lookups: Int)>((nil, 0))

    /// Runs `action` at the first lookup.
    func onFirstLookup(_ action: @escaping @Sendable () async -> Void) { state.withLock { $0.action = action } }

    /// How many lookups there were.
    var lookups: Int { state.withLock { $0.lookups } }

    func channelHolders(of installationIDs: [String], now: Date) async throws -> [String: String] {
        let action = state.withLock { state in
            state.lookups += 1
            defer { state.action = nil }
            return state.action
        }
        let holders = try await relay.channelHolders(of: installationIDs, now: now)
        await action?()
        return holders
    }

    func attachChannel(installationID: String, node: String, until: Date) async throws {
        try await relay.attachChannel(installationID: installationID, node: node, until: until)
    }

    func detachChannel(installationID: String, node: String) async throws {
        try await relay.detachChannel(installationID: installationID, node: node)
    }

    func renewChannels(node: String, until: Date) async throws {}

    func anyChannelHeld(now: Date) async throws -> Bool { try await relay.anyChannelHeld(now: now) }

    func post(_ message: String, to node: String) async throws { try await relay.post(message, to: node) }

    func listen(for node: String, into messages: AsyncStream<String>.Continuation) async {
        await relay.listen(for: node, into: messages)
    }
}

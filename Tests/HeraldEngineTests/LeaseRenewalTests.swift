import Foundation
import HeraldCore
import HeraldTestSupport
import Logging
import Synchronization
import Testing

@testable import HeraldEngine

/// A job's lease is renewed by its page commits and, while its worker works it, every third of the
/// lease: a page slower than the lease is not taken over by another worker while its own lives.
@Suite("Leases: a job worked longer than its lease")
struct LeaseRenewalTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("its node renews the lease every third of it, so no other worker can claim the job")
    func renewedWhileWorked() async throws {
        let store = MemoryStore()
        let clock = ManualClock(start: start)
        let provider = GatedTransport()
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let dispatcher = Dispatcher(
            store: store, transports: ["app": AppTransports([provider])],
            configuration: EngineConfiguration(workers: 1, lease: .seconds(30), cleanupInterval: nil),
            logger: logger, now: { clock.date }, clock: clock)
        _ = try await store.register(
            InstallationRegistration(platform: .ios, service: .apns, token: .device(Fixtures.apnsToken())),
            appID: "app", now: start)
        let worker = Task { try await DispatchWorker(dispatcher: dispatcher, node: "test").run() }
        defer { worker.cancel() }
        try await waitUntil("the worker waiting for work") { dispatcher.wakeups.waiting == 1 }
        let sent = try await dispatcher.submit(
            SendRequest(target: NotificationTarget(audience: .all), payload: NotificationPayload(title: "Hi")),
            appID: "app")
        guard case .accepted(let notification, _) = sent else { throw TestFailure("not accepted") }
        try await waitUntil("the page at the provider") { provider.waiting }

        // Four thirds of the lease pass while the provider holds the page: at each third the lease is
        // renewed to a whole lease from then (a lease not renewed since the last third would end
        // before the probe).
        for third in 1...4 {
            clock.advance(by: .seconds(10))
            try await waitUntil("the lease renewed at \(third) thirds") {
                try await store.queueStatistics(now: clock.date.addingTimeInterval(29)).running == 1
            }
        }
        let claimed = try await store.claimJob(
            kinds: [.notification], owner: "another", now: clock.date, lockedUntil: clock.date.addingTimeInterval(30))
        #expect(claimed == nil, "the job was taken over while its worker lived")

        provider.open()
        try await waitUntil("the notification done") {
            try await store.notification(id: notification.id)?.status == .done
        }
        #expect(provider.pushes == 1)
    }
}

/// A provider that holds every send until the test opens it.
final class GatedTransport: Transport {
    private let state = Mutex<(open: Bool, held: [CheckedContinuation<Void, Never>], pushes: Int)>((false, [], 0))

    var service: PushService { .apns }

    func validate(_ notification: PushNotification, now: Date) throws(HeraldError) {}

    func send(_ pushes: [OutgoingPush], of notification: PushNotification, now: Date) async -> [TransportResult] {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let open = state.withLock { state in
                state.pushes += pushes.count
                if !state.open { state.held.append(continuation) }
                return state.open
            }
            if open { continuation.resume() }
        }
        return pushes.map { _ in TransportResult(.delivered(providerID: nil)) }
    }

    func shutdown() async {}

    /// Whether a send waits for the gate.
    var waiting: Bool { state.withLock { !$0.held.isEmpty } }

    /// How many pushes were handed to it.
    var pushes: Int { state.withLock { $0.pushes } }

    /// Lets every held send (and every later one) through.
    func open() {
        let held = state.withLock { state in
            state.open = true
            defer { state.held.removeAll() }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }
}

import Foundation
import HeraldCore
import Synchronization

/// A transport that delivers in memory: it records every push the engine hands it and answers each
/// with what `answer` says (delivered, by default), so engine tests see what was sent, to whom and
/// how often, without a network or a mock server.
public final class RecordingTransport: Transport {
    /// One push as the engine handed it over.
    public struct Push: Sendable {
        public var notificationID: String
        public var recipient: Recipient
        public var badge: Int?
    }

    public let service: PushService
    private let answer: @Sendable (OutgoingPush) -> TransportResult
    private let state = Mutex<(pushes: [Push], waiters: [(count: Int, CheckedContinuation<Void, Never>)])>(([], []))

    /// A transport for `service` answering each push with `answer`.
    public init(
        service: PushService = .apns,
        answer: @escaping @Sendable (OutgoingPush) -> TransportResult = { _ in
            TransportResult(.delivered(providerID: nil))
        }
    ) {
        self.service = service
        self.answer = answer
    }

    public func validate(_ notification: PushNotification, now: Date) throws(HeraldError) {}

    public func send(_ pushes: [OutgoingPush], of notification: PushNotification, now: Date) async -> [TransportResult]
    {
        let ready = state.withLock { state in
            state.pushes += pushes.map {
                Push(notificationID: notification.id, recipient: $0.recipient, badge: $0.badge)
            }
            let count = state.pushes.count
            let ready = state.waiters.filter { $0.count <= count }.map(\.1)
            state.waiters.removeAll { $0.count <= count }
            return ready
        }
        for waiter in ready { waiter.resume() }
        return pushes.map(answer)
    }

    public func shutdown() async {}

    /// Every push so far, in order.
    public var pushes: [Push] { state.withLock { $0.pushes } }

    /// Returns once at least `count` pushes have been sent.
    public func waitForPushes(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.pushes.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }
}

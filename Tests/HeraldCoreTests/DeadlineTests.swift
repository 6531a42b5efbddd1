import HeraldCore
import HeraldTestSupport
import Synchronization
import Testing

@Suite("withDeadline: an operation raced against the injected clock")
struct DeadlineTests {
    struct Boom: Error {}
    struct NoAnswer: Error {}

    /// A task reading the first of `messages` within `limit` on `clock`.
    static func firstMessage(
        of messages: AsyncStream<String>, within limit: Duration, on clock: ManualClock,
        onDeadline: @escaping @Sendable () async throws -> Void
    ) -> Task<String?, any Error> {
        Task {
            try await withDeadline(limit, clock: clock) {
                var reader = messages.makeAsyncIterator()
                return await reader.next()
            } onDeadline: {
                try await onDeadline()
            }
        }
    }

    @Test("an operation that ends first gives its value, and its timer is gone when the call returns")
    func operationFirst() async throws {
        let clock = ManualClock()
        #expect(try await withDeadline(.seconds(5), clock: clock) { 42 } == 42)
        #expect(clock.sleepers == 0)
        await #expect(throws: Boom.self) {
            try await withDeadline(.seconds(5), clock: clock) { () async throws -> Int in throw Boom() }
        }
        #expect(clock.sleepers == 0)
    }

    @Test("past the deadline the call throws DeadlineExceeded; the operation was cancelled and has ended")
    func deadlineCancelsAndAwaits() async throws {
        let clock = ManualClock()
        let idle = ManualClock()
        let ended = Mutex(false)
        let call = Task {
            try await withDeadline(.seconds(5), clock: clock) {
                // Holds until cancelled: no one moves this clock.
                let slept = (try? await idle.sleep(for: .seconds(1))) != nil
                ended.withLock { $0 = true }
                return slept
            }
        }
        try await waitUntil("the deadline's timer and the operation") { clock.sleepers == 1 && idle.sleepers == 1 }
        clock.advance(by: .seconds(4))
        #expect(clock.sleepers == 1, "the deadline passed early")
        clock.advance(by: .seconds(1))
        let error = await #expect(throws: DeadlineExceeded.self) { try await call.value }
        #expect(error?.limit == .seconds(5))
        #expect(ended.withLock { $0 }, "the call returned before its operation ended")
    }

    @Test("an onDeadline that returns lets the operation end its own way: the stream it reads finished")
    func onDeadlineEndsTheOperation() async throws {
        let clock = ManualClock()
        let (messages, socket) = AsyncStream<String>.makeStream()
        let call = Self.firstMessage(of: messages, within: .seconds(10), on: clock) { socket.finish() }
        try await waitUntil("the deadline's timer") { clock.sleepers == 1 }
        clock.advance(by: .seconds(10))
        #expect(try await call.value == nil)
    }

    @Test("an onDeadline that throws ends the call with its error; before the deadline the operation's value wins")
    func onDeadlineThrows() async throws {
        let clock = ManualClock()
        let (messages, socket) = AsyncStream<String>.makeStream()
        let first = Self.firstMessage(of: messages, within: .seconds(10), on: clock) { throw NoAnswer() }
        try await waitUntil("the deadline's timer") { clock.sleepers == 1 }
        socket.yield("hello")
        #expect(try await first.value == "hello")

        let second = Task {
            try await withDeadline(.seconds(10), clock: clock) {
                try await ManualClock().sleep(for: .seconds(1))
            } onDeadline: {
                throw NoAnswer()
            }
        }
        try await waitUntil("the deadline's timer") { clock.sleepers == 1 }
        clock.advance(by: .seconds(10))
        await #expect(throws: NoAnswer.self) { try await second.value }
    }

    @Test(
        "leaveCancelled: past the deadline the call answers without waiting for an operation that ignores cancellation")
    func leaveCancelled() async throws {
        let clock = ManualClock()
        let gate = Gate()
        let cancelled = Mutex(false)
        let call = Task {
            try await withDeadline(.seconds(5), clock: clock, overrun: .leaveCancelled) {
                await withTaskCancellationHandler {
                    await gate.wait()
                } onCancel: {
                    cancelled.withLock { $0 = true }
                }
            } onDeadline: {
                throw NoAnswer()
            }
        }
        try await waitUntil("the deadline's timer and the operation") { clock.sleepers == 1 && gate.waiting }
        clock.advance(by: .seconds(5))
        await #expect(throws: NoAnswer.self) { try await call.value }
        #expect(cancelled.withLock { $0 })
        #expect(gate.waiting, "the operation was waited for")
        gate.open()
        #expect(try await withDeadline(.seconds(5), clock: clock, overrun: .leaveCancelled) { 7 } == 7)
    }

    @Test("a cancelled caller: the operation is cancelled, the call throws CancellationError, onDeadline does not run")
    func callerCancelled() async throws {
        let clock = ManualClock()
        let idle = ManualClock()
        let ran = Mutex(false)
        let call = Task {
            try await withDeadline(.seconds(5), clock: clock) {
                try await idle.sleep(for: .seconds(1))
            } onDeadline: {
                ran.withLock { $0 = true }
            }
        }
        try await waitUntil("the deadline's timer and the operation") { clock.sleepers == 1 && idle.sleepers == 1 }
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        #expect(idle.sleepers == 0)
        #expect(!ran.withLock { $0 })
    }

    @Test(
        "a cancelled caller whose operation does not heed cancellation: the deadline still holds, and onDeadline ends the operation then"
    )
    func callerCancelledOperationDeaf() async throws {
        let clock = ManualClock()
        let gate = Gate()
        let ran = Mutex(false)
        let answer = Mutex<Int?>(nil)
        let call = Task {
            let value = try await withDeadline(.seconds(5), clock: clock) {
                await gate.wait()
                return 7
            } onDeadline: {
                ran.withLock { $0 = true }
                gate.open()
            }
            answer.withLock { $0 = value }
        }
        try await waitUntil("the deadline's timer and the operation") { clock.sleepers == 1 && gate.waiting }
        call.cancel()
        try await Task.sleep(for: .milliseconds(50))
        #expect(!ran.withLock { $0 }, "the cancellation ran onDeadline")
        clock.advance(by: .seconds(4))
        try await Task.sleep(for: .milliseconds(50))
        #expect(!ran.withLock { $0 }, "the deadline passed early")
        clock.advance(by: .seconds(1))
        // Before, the call waited for the operation for ever.
        try await waitUntil("the call's end, once its deadline passed") { answer.withLock { $0 } != nil }
        #expect(answer.withLock { $0 } == 7)
        #expect(ran.withLock { $0 })
        try await waitUntil("no timer left") { clock.sleepers == 0 }
    }
}

/// Holds whoever waits until it is opened; cancellation does not end the wait.
private final class Gate: Sendable {
    private let state = Mutex<(opened: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    var waiting: Bool { state.withLock { $0.waiter != nil } }

    func wait() async {
        await withCheckedContinuation { continuation in
            let opened = state.withLock { state in
                if !state.opened { state.waiter = continuation }
                return state.opened
            }
            if opened { continuation.resume() }
        }
    }

    func open() {
        state.withLock { state in
            state.opened = true
            return state.waiter.take()
        }?.resume()
    }
}

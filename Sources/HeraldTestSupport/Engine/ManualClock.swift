import Foundation
import HeraldCore
import Synchronization

/// The one clock of Herald's tests, which moves only when a test says so. Like a machine's, it
/// has two faces: a monotonic ``Clock`` that timers sleep on (``now``), and a wall clock that
/// stamps records and decides what is due (``date``, what the product's `now: () -> Date`
/// closures are given). ``advance(by:)`` moves both and resumes every sleeper whose deadline it
/// passes; ``set(_:)`` sets the wall clock alone, forwards or back, as an administrator (or NTP)
/// sets a machine's, and wakes no timer. Injected into the engine as its clock, its idle workers
/// never poll on their own, so a test sees exactly the work that wake-ups and hand-offs cause.
public final class ManualClock: Clock, Sendable {
    /// An instant of the manual clock: the time advanced since it was made.
    public struct Instant: InstantProtocol {
        public var offset: Duration

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var date: Date
        var sleepers: [UInt64: Sleeper] = [:]
        var nextID: UInt64 = 0
    }

    private let state: Mutex<State>

    /// A clock at offset zero whose wall clock reads `start`.
    public init(start: Date = Date()) { state = Mutex(State(date: start)) }

    public var now: Instant { state.withLock { $0.now } }

    /// The wall clock's time.
    public var date: Date { state.withLock { $0.date } }
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// How many sleepers wait now.
    public var sleepers: Int { state.withLock { $0.sleepers.count } }

    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resume: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let resume { continuation.resume(with: resume) }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves both faces forward by `duration` (not negative: a monotonic clock never goes back;
    /// ``set(_:)`` the wall clock instead) and wakes the sleepers whose deadline is now past.
    public func advance(by duration: Duration) {
        precondition(duration >= .zero, "a monotonic clock never goes back: set(_:) the wall clock instead")
        let due = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            state.date = state.date.addingTimeInterval(duration.timeInterval)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { state.sleepers.removeValue(forKey: id) }
            return due.values.map(\.continuation)
        }
        for continuation in due { continuation.resume() }
    }

    /// Sets the wall clock to `date`; the monotonic face and its sleepers are left alone.
    public func set(_ date: Date) { state.withLock { $0.date = date } }
}

import Synchronization

/// The error ``withDeadline(_:clock:overrun:operation:onDeadline:)`` throws by default when the
/// deadline passes first.
public struct DeadlineExceeded: Error, Sendable {
    /// How long the operation was given.
    public let limit: Duration

    /// The deadline of `limit` passed.
    public init(limit: Duration) {
        self.limit = limit
    }
}

/// What becomes of an operation that a deadline ended the call of.
public enum DeadlineOverrun: Sendable {
    /// Cancelled, and awaited: the operation runs in a child task and the call returns once it has
    /// ended, so nothing outlives the call.
    case awaitCancelled
    /// Cancelled, and left to end on its own: the operation runs in a task of its own, for work
    /// that may not heed cancellation (a statement on a PostgreSQL connection the server ended,
    /// docs/reliability.md) when the caller must answer regardless.
    case leaveCancelled
}

/// `operation`'s result or error, unless `limit` passes on `clock` first; then `onDeadline` runs.
///
/// - When `onDeadline` throws (without one, ``DeadlineExceeded``), the call throws its error and the
///   operation is cancelled: awaited or left to itself, as `overrun` says.
/// - When `onDeadline` returns, the call goes on waiting for the operation: `onDeadline` has done
///   what ends it (closed the socket it reads, failed what it waits for).
///
/// When the caller's task is cancelled, the operation is cancelled and, with ``DeadlineOverrun/awaitCancelled``,
/// awaited: the call throws its error (`CancellationError` for one that heeds it) once it has ended, and
/// `onDeadline` does not run. The deadline still holds while it is awaited: an operation that does not heed
/// cancellation (a statement whose promise a PostgreSQL session ended under it never completes) and is still
/// running at the deadline has `onDeadline` run then, as it would have without the cancellation. Without that,
/// a cancelled call would wait for such an operation for ever: a worker cancelled with its sibling pages, stuck
/// on one store call while its job's lease is renewed (docs/reliability.md, "PostgreSQL ending Herald's sessions").
/// - Throws: The operation's error, `onDeadline`'s, or `CancellationError`.
public func withDeadline<Value: Sendable>(
    _ limit: Duration, clock: any Clock<Duration> = ContinuousClock(), overrun: DeadlineOverrun = .awaitCancelled,
    operation: @escaping @Sendable () async throws -> Value,
    onDeadline: (@Sendable () async throws -> Void)? = nil
) async throws -> Value {
    let onDeadline = onDeadline ?? { throw DeadlineExceeded(limit: limit) }
    switch overrun {
    case .awaitCancelled:
        return try await awaitingCancelled(limit, clock: clock, operation: operation, onDeadline: onDeadline)
    case .leaveCancelled:
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            let answer = ResumeOnce(continuation)
            let work = Task {
                do {
                    answer.resume(with: .success(try await operation()))
                } catch {
                    answer.resume(with: .failure(error))
                }
            }
            Task {
                guard (try? await clock.sleep(for: limit)) != nil else { return }
                do {
                    try await onDeadline()
                } catch {
                    // Cancelled before the caller is answered, so the caller never sees an answer whose operation
                    // is not cancelled yet (cancelling one that has ended does nothing).
                    work.cancel()
                    answer.resume(with: .failure(error))
                }
            }
        }
    }
}

/// ``withDeadline(_:clock:overrun:operation:onDeadline:)`` with ``DeadlineOverrun/awaitCancelled``, on
/// `clock` opened (its instants are its own type).
private func awaitingCancelled<Value: Sendable, C: Clock<Duration>>(
    _ limit: Duration, clock: C, operation: @escaping @Sendable () async throws -> Value,
    onDeadline: @escaping @Sendable () async throws -> Void
) async throws -> Value {
    let deadline = clock.now.advanced(by: limit)
    let ended = OperationEnd()
    return try await withThrowingTaskGroup(of: DeadlineRace<Value>.self) { group in
        group.addTask {
            defer { ended.resolve(deadlinePassed: false) }
            return .finished(try await operation())
        }
        group.addTask {
            if (try? await clock.sleep(until: deadline, tolerance: nil)) == nil {
                // Cancelled with the caller: the group awaits the operation, which may not heed it. The
                // deadline holds until the operation ends.
                guard await ended.deadlinePassed(deadline, on: clock) else { return .operationEnded }
            }
            try await onDeadline()
            return .deadlinePassed
        }
        defer { group.cancelAll() }
        while let outcome = try await group.next() {
            if case .finished(let value) = outcome { return value }
        }
        preconditionFailure("the operation's task ended without its outcome")
    }
}

/// Which of the two tasks of ``withDeadline(_:clock:overrun:operation:onDeadline:)`` ended.
private enum DeadlineRace<Value: Sendable>: Sendable {
    case finished(Value)
    case deadlinePassed
    /// The caller was cancelled and the operation ended before the deadline.
    case operationEnded
}

/// Whichever comes first for a cancelled call: its operation's end or its deadline. A cancelled task cannot
/// sleep, so the deadline is slept on by a task of its own (only on this path: a cancelled call).
private final class OperationEnd: Sendable {
    private enum State {
        case running(waiter: CheckedContinuation<Bool, Never>?)
        /// Whether the deadline passed first.
        case resolved(deadlinePassed: Bool)
    }

    private let state = Mutex(State.running(waiter: nil))

    /// The first of the operation's end (false) and the deadline (true) settles it; a later one is ignored.
    func resolve(deadlinePassed: Bool) {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard case .running(let waiter) = state else { return nil }
            state = .resolved(deadlinePassed: deadlinePassed)
            return waiter
        }
        waiter?.resume(returning: deadlinePassed)
    }

    /// Waits, whatever the task's cancellation, for the operation's end (false) or `deadline` on `clock` (true).
    func deadlinePassed<C: Clock>(_ deadline: C.Instant, on clock: C) async -> Bool {
        // The common way here: the operation ended and the call cancelled its timer. No task is started for it
        // (one per PostgreSQL call showed in the profile of the one-notification path, docs/performance.md).
        let ended = state.withLock { state -> Bool? in
            if case .resolved(let deadlinePassed) = state { deadlinePassed } else { nil }
        }
        if let ended { return ended }
        let timer = Task.detached {
            try? await clock.sleep(until: deadline, tolerance: nil)
            self.resolve(deadlinePassed: true)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let resolved = state.withLock { state -> Bool? in
                switch state {
                case .resolved(let deadlinePassed): return deadlinePassed
                case .running:
                    state = .running(waiter: continuation)
                    return nil
                }
            }
            if let resolved { continuation.resume(returning: resolved) }
        }
    }
}

/// A continuation resumed by the first of several callers; the others are ignored.
public final class ResumeOnce<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, any Error>?>

    /// Wraps `continuation`, which no one else resumes.
    public init(_ continuation: CheckedContinuation<Value, any Error>) {
        self.continuation = Mutex(continuation)
    }

    /// Resumes the continuation with `result` unless a caller did already; whether this one did.
    @discardableResult
    public func resume(with result: Result<Value, any Error>) -> Bool {
        guard let continuation = continuation.withLock({ $0.take() }) else { return false }
        continuation.resume(with: result)
        return true
    }
}

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
/// the call throws `CancellationError` once the operation has ended; `onDeadline` does not run.
/// - Throws: The operation's error, `onDeadline`'s, or `CancellationError`.
public func withDeadline<Value: Sendable>(
    _ limit: Duration, clock: any Clock<Duration> = ContinuousClock(), overrun: DeadlineOverrun = .awaitCancelled,
    operation: @escaping @Sendable () async throws -> Value,
    onDeadline: (@Sendable () async throws -> Void)? = nil
) async throws -> Value {
    let onDeadline = onDeadline ?? { throw DeadlineExceeded(limit: limit) }
    switch overrun {
    case .awaitCancelled:
        return try await withThrowingTaskGroup(of: DeadlineRace<Value>.self) { group in
            group.addTask { .finished(try await operation()) }
            group.addTask {
                try await clock.sleep(for: limit)
                try await onDeadline()
                return .deadlinePassed
            }
            defer { group.cancelAll() }
            while let outcome = try await group.next() {
                if case .finished(let value) = outcome { return value }
            }
            preconditionFailure("the operation's task ended without its outcome")
        }
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
                    if answer.resume(with: .failure(error)) { work.cancel() }
                }
            }
        }
    }
}

/// Which of the two tasks of ``withDeadline(_:clock:overrun:operation:onDeadline:)`` ended.
private enum DeadlineRace<Value: Sendable>: Sendable {
    case finished(Value)
    case deadlinePassed
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

import Synchronization

/// Opens once the store's `PostgresClient.run()` has been entered: every lease waits for it, so that
/// none reaches the pool before it runs (PostgresNIO warns of each one that does, and queues it).
final class PoolStarted: Sendable {
    private struct State {
        var started = false
        var waiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// The pool runs: every waiter goes on, and every later one at once.
    func open() {
        let waiters = state.withLock { state in
            state.started = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the pool runs.
    /// - Throws: `CancellationError` when the task is cancelled first (a call's deadline passed).
    func wait() async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resume: Result<Void, any Error>? = state.withLock { state in
                    if state.started { return .success(()) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let resume { continuation.resume(with: resume) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(throwing: CancellationError())
        }
    }
}

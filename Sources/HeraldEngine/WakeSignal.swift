import Synchronization

/// Wakes idle workers: ``signal()`` resumes every worker waiting in ``wait()``, or, when none is
/// waiting, leaves one wake-up for the next to wait (work that arrived while all were busy).
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Wakes every waiting worker (or the next one to wait).
    func signal() {
        let waiters = state.withLock { state in
            defer { state.waiters.removeAll() }
            if state.waiters.isEmpty { state.pending = true }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Consumes a pending wake-up, if there is one.
    func take() -> Bool {
        state.withLock { state in
            defer { state.pending = false }
            return state.pending
        }
    }

    /// Returns at the next signal (at once when one is pending), or when the task is cancelled.
    func wait() async {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    if state.pending || Task.isCancelled {
                        state.pending = false
                        return true
                    }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}

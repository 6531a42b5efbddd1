import Synchronization

/// Wakes idle workers one at a time: ``signal()`` resumes the worker that has waited longest in
/// ``wait()``, or, when none is waiting, leaves one wake-up for the next to wait (work that arrived
/// while all were busy). Waking one worker per job, not all of them, keeps the others asleep: each
/// woken worker would otherwise look for work (a claim through the store) and find none. A worker
/// that finds work signals again, so a burst wakes as many workers as it has jobs.
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Wakes the longest-waiting worker (or the next one to wait).
    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let first = state.waiters.keys.min() else {
                state.pending = true
                return nil
            }
            return state.waiters.removeValue(forKey: first)
        }
        waiter?.resume()
    }

    /// Wakes every waiting worker (shutdown).
    func signalAll() {
        let waiters = state.withLock { state in
            defer { state.waiters.removeAll() }
            state.pending = true
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// How many workers wait now.
    var waiting: Int { state.withLock { $0.waiters.count } }

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

import HeraldTestSupport
import Synchronization

/// A thread-safe, append-only list of what a mock server received, which tests can wait on.
final class RequestLog<Record: Sendable>: Sendable {
    private struct Waiter: Sendable {
        let count: Int
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State: Sendable {
        var records: [Record] = []
        var waiters: [Int: Waiter] = [:]
        var nextWaiterID = 0
    }

    private let state = Mutex(State())

    init() {}

    /// Everything recorded so far, oldest first.
    var records: [Record] {
        state.withLock { $0.records }
    }

    /// How many records there are.
    var count: Int {
        state.withLock { $0.records.count }
    }

    /// Appends a record and wakes the waiters it satisfies.
    func append(_ record: Record) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.records.append(record)
            let count = state.records.count
            let satisfied = state.waiters.filter { $0.value.count <= count }
            for id in satisfied.keys {
                state.waiters[id] = nil
            }
            return satisfied.values.map(\.continuation)
        }
        for continuation in ready {
            continuation.resume()
        }
    }

    /// Waits until at least `count` records exist.
    /// - Throws: ``MockServerError`` when `timeout` passes first; `CancellationError` when the task is cancelled.
    func wait(forCount count: Int, timeout: Duration) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.wait(forCount: count) }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw MockServerError.timedOut(expected: count, received: self.count, after: timeout)
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    private func wait(forCount count: Int) async throws {
        let id = state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    if state.records.count >= count { return .success(()) }
                    // Checked under the lock that the cancellation handler takes, so a cancellation either sees
                    // the waiter or is seen here.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = Waiter(count: count, continuation: continuation)
                    return nil
                }
                if let outcome {
                    continuation.resume(with: outcome)
                }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }
}

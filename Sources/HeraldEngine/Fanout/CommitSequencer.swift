/// Lets batches sent concurrently commit one after another in the order they were read, so the
/// fan-out cursor only moves forward. Once a commit fails (the job's lock was lost, or the batch
/// failed to send), later batches are told not to commit.
actor CommitSequencer {
    private var next = 0
    private var failed = false
    private var waiting: [Int: CheckedContinuation<Bool, Never>] = [:]

    /// Waits until every batch before `index` has finished; true when they all committed.
    func turn(_ index: Int) async -> Bool {
        if index == next { return !failed }
        return await withCheckedContinuation { waiting[index] = $0 }
    }

    /// Marks batch `index` finished (committed or not) and lets the next one go.
    func finish(_ index: Int, committed: Bool) {
        precondition(index == next, "batches finish in order")
        failed = failed || !committed
        next += 1
        waiting.removeValue(forKey: next)?.resume(returning: !failed)
    }
}

import Foundation
import HeraldCore

extension MemoryStore: JobQueue {
    public func scheduleJob(kind: JobKind, reference: String, runAt: Date) async throws {
        change { $0.scheduleJob(kind: kind, reference: reference, runAt: runAt) }
    }

    public func claimJob(kinds: [JobKind], owner: String, now: Date, lockedUntil: Date) async throws -> Job? {
        change { state in
            let due = state.jobs.values.filter { kinds.contains($0.kind) && $0.runAt <= now && $0.isFree(at: now) }
            guard let next = due.min(by: { ($0.runAt, $0.id) < ($1.runAt, $1.id) }), var job = state.jobs[next.id]
            else { return nil }
            job.lockedBy = owner
            job.lockedUntil = lockedUntil
            job.attempts += 1
            state.jobs[job.id] = job
            return Job(id: job.id, kind: job.kind, reference: job.reference, attempts: job.attempts)
        }
    }

    public func releaseJob(id: Int64, owner: String, runAt: Date, error: String?) async throws {
        change { state in
            guard state.jobs[id]?.lockedBy == owner else { return }
            state.jobs[id]?.lockedBy = nil
            state.jobs[id]?.lockedUntil = nil
            state.jobs[id]?.runAt = runAt
            state.jobs[id]?.lastError = error
        }
    }

    public func finishJob(id: Int64, owner: String) async throws {
        change { state in
            if state.jobs[id]?.lockedBy == owner { state.jobs[id] = nil }
        }
    }

    public func renewJob(id: Int64, owner: String, lockedUntil: Date) async throws -> Bool {
        change { state in
            guard state.jobs[id]?.lockedBy == owner else { return false }
            state.jobs[id]?.lockedUntil = lockedUntil
            return true
        }
    }

    public func jobSignals() -> AsyncStream<Void> { signals.stream() }

    public func queueStatistics(now: Date) async throws -> QueueStatistics {
        read { state in
            var statistics = QueueStatistics()
            for job in state.jobs.values {
                if !job.isFree(at: now) {
                    statistics.running += 1
                } else if job.runAt <= now {
                    statistics.due += 1
                    statistics.oldestDueAt = min(statistics.oldestDueAt ?? job.runAt, job.runAt)
                } else {
                    statistics.scheduled += 1
                }
            }
            return statistics
        }
    }

    /// Unlocks every leased job, as a SQL store opened again after its node died does (SQLite's
    /// `recoverJobs()` when `herald serve` starts): a test of what a restart finds shares one
    /// memory store between the engine that stopped and the one that starts.
    /// - Returns: How many jobs were unlocked.
    public func recoverJobs() -> Int {
        change { state in
            var unlocked = 0
            for (id, job) in state.jobs where job.lockedBy != nil {
                state.jobs[id]?.lockedBy = nil
                state.jobs[id]?.lockedUntil = nil
                unlocked += 1
            }
            return unlocked
        }
    }
}

extension MemoryStore.State {
    /// Stores a job unless one of the kind and reference exists (then moves its run time earlier).
    mutating func scheduleJob(kind: JobKind, reference: String, runAt: Date) {
        workAdded = true
        if let existing = jobs.values.first(where: { $0.kind == kind && $0.reference == reference }) {
            jobs[existing.id]?.runAt = min(existing.runAt, runAt)
            return
        }
        insertJob(kind: kind, reference: reference, runAt: runAt)
    }

    /// Stores a new job, leased when `lease` is given.
    @discardableResult
    mutating func insertJob(kind: JobKind, reference: String, runAt: Date, lease: JobLease? = nil) -> Job {
        let id = nextJobID
        nextJobID += 1
        var job = MemoryStore.StoredJob(id: id, kind: kind, reference: reference, runAt: runAt)
        if let lease {
            job.lockedBy = lease.owner
            job.lockedUntil = lease.until
            job.attempts = 1
        }
        jobs[id] = job
        return Job(id: id, kind: kind, reference: reference, attempts: job.attempts)
    }

    /// Whether `owner` holds the job.
    func holds(_ jobID: Int64, owner: String) -> Bool { jobs[jobID]?.lockedBy == owner }
}

import Foundation
import Synchronization

/// Durable units of work with leases: a worker claims a due job until its lease ends, and a job
/// whose worker died is due again when the lease expires.
public protocol JobQueue: Sendable {
    /// Stores a job unless one with the same kind and reference exists (then moves its run time
    /// earlier when `runAt` is earlier).
    func scheduleJob(kind: JobKind, reference: String, runAt: Date) async throws

    /// Locks the next due job of one of `kinds` for `owner` until `lockedUntil`: a job whose
    /// lock expired (its worker died) is due again.
    func claimJob(kinds: [JobKind], owner: String, now: Date, lockedUntil: Date) async throws -> Job?

    /// Unlocks the job and sets when it is due next.
    func releaseJob(id: Int64, owner: String, runAt: Date, error: String?) async throws

    /// Deletes a finished job.
    func finishJob(id: Int64, owner: String) async throws

    /// Extends the lease `owner` holds on a job to `lockedUntil`: a worker renews the lease of a job
    /// it is still working, so that no other worker takes over a job whose worker lives.
    /// - Returns: False when `owner` holds the job no more (its lease ran out and another worker
    ///   claimed it, or it was finished or released).
    func renewJob(id: Int64, owner: String, lockedUntil: Date) async throws -> Bool

    /// Signals new or sooner work: yields after this store (on any node sharing it) stored a job,
    /// moved one earlier, or made deliveries due, so idle workers claim at once instead of at
    /// their next poll. Each call returns a new stream; it ends when the store closes.
    func jobSignals() -> AsyncStream<Void>

    /// The queue at `now`, for metrics: jobs due and not running, running (leased), scheduled for
    /// later, and when the longest-waiting due job became due.
    func queueStatistics(now: Date) async throws -> QueueStatistics
}

/// The job queue at one instant.
public struct QueueStatistics: Sendable, Equatable {
    /// Jobs due and not held by a worker.
    public var due: Int
    /// Jobs held by a worker (leased).
    public var running: Int
    /// Jobs due later.
    public var scheduled: Int
    /// When the longest-waiting due job became due; nil when none is due.
    public var oldestDueAt: Date?

    /// A snapshot.
    public init(due: Int = 0, running: Int = 0, scheduled: Int = 0, oldestDueAt: Date? = nil) {
        self.due = due
        self.running = running
        self.scheduled = scheduled
        self.oldestDueAt = oldestDueAt
    }
}

/// A durable unit of work.
public struct Job: Sendable, Equatable {
    public var id: Int64
    public var kind: JobKind
    /// What the job is about (a notification id).
    public var reference: String
    /// Claims so far, this one included.
    public var attempts: Int

    /// Creates a job value.
    public init(id: Int64, kind: JobKind, reference: String, attempts: Int) {
        self.id = id
        self.kind = kind
        self.reference = reference
        self.attempts = attempts
    }
}

/// What a job is for; stores keep it as the text of ``rawValue`` (the `kind` column).
public enum JobKind: RawRepresentable, Sendable, Hashable {
    /// A notification's fan-out (reference: the notification's id).
    case notification
    /// One range of a large notification's target (reference: `<notification id>#<index>`).
    case range
    /// The registry's clean-up (reference: `registry`).
    case cleanup
    /// A kind this version does not know (a row written by another version): the engine logs it
    /// and finishes the job. Carries the stored text, which names none of the cases above.
    case unknown(String)

    /// The kind a stored text names.
    public init(rawValue: String) {
        switch rawValue {
        case "notification": self = .notification
        case "range": self = .range
        case "cleanup": self = .cleanup
        default: self = .unknown(rawValue)
        }
    }

    /// The stored text.
    public var rawValue: String {
        switch self {
        case .notification: "notification"
        case .range: "range"
        case .cleanup: "cleanup"
        case .unknown(let text): text
        }
    }
}

/// Fans one "there is new work" signal out to every listener's stream: what a store's
/// ``JobQueue/jobSignals()`` returns. A listener that has not caught up keeps one pending signal
/// (more would say nothing new).
public final class JobSignalHub: Sendable {
    private let listeners = Mutex<[UInt64: AsyncStream<Void>.Continuation]>([:])
    private let nextID = Atomic<UInt64>(0)

    /// Creates a hub with no listeners.
    public init() {}

    /// A new listener's stream; it ends with ``finish()``.
    public func stream() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        continuation.onTermination = { [weak self] _ in
            _ = self?.listeners.withLock { $0.removeValue(forKey: id) }
        }
        listeners.withLock { $0[id] = continuation }
        return stream
    }

    /// Tells every listener there is work.
    public func signal() {
        for listener in listeners.withLock({ Array($0.values) }) { listener.yield() }
    }

    /// Ends every stream (the store is closing).
    public func finish() {
        for listener in listeners.withLock({ listeners in
            defer { listeners.removeAll() }
            return Array(listeners.values)
        }) { listener.finish() }
    }
}

/// A job stored already leased to this node (a small notification handed to a local worker in
/// memory, see the engine's handoff): the owner and lease end it is inserted with, and the job the
/// store made, once the inserting write has returned.
///
/// A job inserted under a lease announces nothing (``JobQueue/jobSignals()``): no worker of any
/// node needs to look for it. If the node dies before working it, the lease runs out and any
/// node's workers claim it as they claim every job.
public final class JobLease: Sendable {
    /// Who holds the job (what the worker commits its pages as).
    public let owner: String
    /// When the lease ends unless a commit renews it.
    public let until: Date
    private let granted = Mutex<Job?>(nil)

    /// A lease to insert a job with.
    public init(owner: String, until: Date) {
        self.owner = owner
        self.until = until
    }

    /// The job inserted under this lease; nil until the store has inserted it (and when the
    /// write inserted none, as for a repeated idempotency key).
    public var job: Job? { granted.withLock { $0 } }

    /// Records the job the store inserted (stores call it inside the inserting write).
    public func grant(_ job: Job) {
        granted.withLock { $0 = job }
    }
}

import Foundation
import HeraldCore
import Synchronization

/// The engine's store (``EngineStore``) in memory: the job queue, notifications and their ledger,
/// fan-out cursors and ranges, pending deliveries, preferences and badges, the page commit, provider
/// pauses and rate buckets, and the registry's changes, with the meaning the SQL stores give them
/// (the store conformance suite's engine cases, `EngineConformance.cases`, run against it). The
/// engine's unit tests run on it: no files, no database, nothing to open or migrate.
///
/// Every method reads and changes the state under one lock, so what a SQL store does in one
/// transaction happens here all at once (a page commit refused for a lost lease writes nothing).
/// It holds nothing at rest: tokens are kept as registered, not sealed as the SQL stores seal them
/// with their ``TokenCipher``, and everything goes with the value.
///
/// Beyond the contract it offers what a test arranges or inspects through the API's side of a SQL
/// store: ``setPreferences(appID:installationID:preferences:now:)``, ``installation(appID:id:)``,
/// ``ledger(notificationID:)`` and ``recoverJobs()``.
public final class MemoryStore: Sendable {
    let state = Mutex(State())
    let signals = JobSignalHub()

    /// Creates an empty store.
    public init() {}

    deinit { signals.finish() }

    /// Everything the store holds.
    struct State {
        var installations: [String: Installation] = [:]
        var preferences: [String: Preferences] = [:]
        var notifications: [String: StoredNotification] = [:]
        var jobs: [Int64: StoredJob] = [:]
        var nextJobID: Int64 = 1
        var pending: [PendingKey: PendingDelivery] = [:]
        var ranges: [String: [Int: FanoutRange]] = [:]
        var buckets: [String: Date] = [:]
        var pauses: [PauseKey: Date] = [:]
        /// Whether a change since the last signal stored a job, moved one earlier or made deliveries due.
        var workAdded = false
        /// How many first pages ``resolveFirstPages(_:)`` has read (what a test counts of the store's reads).
        var firstPagesRead = 0
    }

    /// How many first pages of handed notifications the engine has read here.
    public var firstPagesRead: Int { state.withLock { $0.firstPagesRead } }

    /// A notification with what its row holds beside it.
    struct StoredNotification {
        var notification: PushNotification
        var cursor: String?
        var ledger: [DeliveryRecord] = []
    }

    /// A row of the job queue.
    struct StoredJob {
        var id: Int64
        var kind: JobKind
        var reference: String
        var runAt: Date
        var lockedBy: String?
        var lockedUntil: Date?
        var attempts = 0
        var lastError: String?

        /// Whether no worker holds it at `now` (never claimed, released, or its lease ran out).
        func isFree(at now: Date) -> Bool { lockedUntil.map { $0 < now } ?? true }
    }

    /// A pending delivery's key: one per recipient of a notification.
    struct PendingKey: Hashable {
        var notificationID: String
        var recipient: String
    }

    /// A provider pause's key.
    struct PauseKey: Hashable {
        var appID: String
        var service: PushService
        var scope: String
    }

    /// Runs `body` on the state under the lock, then tells idle workers when it added work, as a SQL
    /// store does after the transaction commits.
    func change<Result: Sendable, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let (result, added) = try state.withLock { (state) throws(Failure) -> (Result, Bool) in
            defer { state.workAdded = false }
            return (try body(&state), state.workAdded)
        }
        if added { signals.signal() }
        return result
    }

    /// Reads the state under the lock.
    func read<Result: Sendable>(_ body: (State) -> Result) -> Result {
        state.withLock { state in body(state) }
    }
}

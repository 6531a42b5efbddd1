import Dispatch
import GRDB
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Small writes from concurrent callers committed together (registrations, accepted sends and
/// events, and the engine's job claims, page commits and releases): each runs in its own
/// savepoint of a shared transaction, and each caller gets its answer only once that transaction
/// has committed.
///
/// SQLite has one writer, and a commit costs far more than a one-row write: the write-ahead log
/// gets every page the transaction dirtied (the row's table page and one page per index).
/// Writes arriving together dirty the same index pages, so committing them together writes each
/// page once. A write that throws rolls back its own savepoint only; a commit that fails fails
/// every write of the batch, none of which is then stored.
///
/// Durability. A durable write (a registration, an accepted send or event: what Herald answers
/// `2xx` for) is answered only once the log is on disk, by ``WALSync``. The writer syncs it itself
/// right after the commit when no sync runs (a thread woken per commit cost more than the wait), and
/// the writes that arrive meanwhile commit together after it; when a sync runs already, the batch
/// waits for the next one on the sync's thread and the writer goes on. The engine's own bookkeeping (job claims, page
/// commits, releases) is answered at once: a process crash loses none of it (the log is written),
/// and after a power loss the engine resumes from the last synced commit, which the next durable
/// write or checkpoint (every 250 ms under `herald serve`) makes recent.
final class GroupCommit: Sendable {
    /// How many writes one transaction takes at most, so a burst cannot hold the writer long.
    static let maximumBatch = 256

    private struct Write: Sendable {
        /// Whether the caller is answered only once the write is on disk.
        let durable: Bool
        /// Runs the write in its savepoint and returns how to answer the caller after the commit.
        let run: @Sendable (Database) -> @Sendable () -> Void
        /// Answers the caller with the commit's failure.
        let fail: @Sendable (any Error) -> Void
    }

    private struct Queue {
        var writes: [Write] = []
        var draining = false
        /// Writes submitted since the start.
        var submitted = 0
        /// How many of `writes` are durable.
        var durable = 0
    }

    private let database: DatabasePool
    private let walSync: WALSync
    private let queue = Mutex(Queue())
    /// The least time between two syncs the writer makes (nanoseconds; 0: none).
    private let syncInterval: UInt64
    /// When the writer's last sync ended (the monotonic clock's nanoseconds; the writer's queue alone uses it).
    private let lastSync = Mutex<UInt64>(0)

    /// - Parameter syncInterval: Durable writes that come less than this after the writer's last sync wait for
    ///   the rest of it, and commit and sync together: under load a sync serves several, and when writes come
    ///   further apart than that none waits.
    init(database: DatabasePool, walSync: WALSync, syncInterval: Duration = .zero) {
        self.database = database
        self.walSync = walSync
        let (seconds, attoseconds) = syncInterval.components
        self.syncInterval = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    /// How many writes have been submitted since the start (tests use it to know a batch has formed).
    var submitted: Int { queue.withLock { $0.submitted } }

    /// Runs `body` in the next shared transaction and returns its result once that has committed
    /// (`durable`: and reached the disk; a batch holding one durable write is synced whole).
    func write<Value: Sendable>(
        durable: Bool, _ body: @escaping @Sendable (Database) throws -> Value
    ) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let write = Write(
                durable: durable,
                run: { db in
                    let result: Result<Value, any Error> = Result {
                        var value: Value?
                        try db.inSavepoint {
                            value = try body(db)
                            return .commit
                        }
                        guard let value else { throw DatabaseError(message: "A grouped write returned nothing.") }
                        return value
                    }
                    return { continuation.resume(with: result) }
                },
                fail: { continuation.resume(throwing: $0) })
            let leads = queue.withLock { queue in
                queue.writes.append(write)
                queue.submitted += 1
                if durable { queue.durable += 1 }
                defer { queue.draining = true }
                return !queue.draining
            }
            if leads { database.asyncWriteWithoutTransaction { db in self.drain(db) } }
        }
    }

    /// Waits, on the writer's queue, for the rest of ``syncInterval`` after the last sync when durable writes
    /// wait and the batch is not full: the writes that come meanwhile commit and sync with them.
    private func holdForCompany() {
        guard syncInterval > 0, walSync.isEnabled else { return }
        let (durable, count) = queue.withLock { ($0.durable, $0.writes.count) }
        guard durable > 0, count < Self.maximumBatch else { return }
        let since = DispatchTime.now().uptimeNanoseconds &- lastSync.withLock { $0 }
        guard since < syncInterval else { return }
        usleep(UInt32((syncInterval - since) / 1_000))
    }

    /// Commits batches until no write waits, on the writer's own queue: a batch that commits is
    /// followed at once by the writes that arrived meanwhile, without a hop through the shared
    /// executor that the waiting requests themselves queue on.
    private func drain(_ db: Database) {
        while true {
            holdForCompany()
            let batch: [Write] = queue.withLock { queue in
                let batch = Array(queue.writes.prefix(Self.maximumBatch))
                queue.writes.removeFirst(batch.count)
                queue.durable -= batch.count { $0.durable }
                if batch.isEmpty { queue.draining = false }
                return batch
            }
            if batch.isEmpty { return }
            do {
                var answers: [@Sendable () -> Void] = []
                try db.inTransaction {
                    answers = batch.map { $0.run(db) }
                    return .commit
                }
                // The engine's writes are answered now; the durable ones once the log is on disk.
                var durable: [(answer: @Sendable () -> Void, fail: @Sendable (any Error) -> Void)] = []
                for (write, answer) in zip(batch, answers) {
                    if write.durable { durable.append((answer, write.fail)) } else { answer() }
                }
                if !durable.isEmpty {
                    let waiting = durable
                    walSync.afterSync(
                        here: true,
                        done: { for write in waiting { write.answer() } },
                        failed: { error in for write in waiting { write.fail(error) } })
                    if syncInterval > 0 { lastSync.withLock { $0 = DispatchTime.now().uptimeNanoseconds } }
                }
            } catch {
                walSync.noteFailure(error)
                for write in batch { write.fail(error) }
            }
        }
    }
}

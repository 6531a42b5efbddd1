import GRDB
import Synchronization

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
    }

    private let database: DatabasePool
    private let walSync: WALSync
    private let queue = Mutex(Queue())

    init(database: DatabasePool, walSync: WALSync) {
        self.database = database
        self.walSync = walSync
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
                defer { queue.draining = true }
                return !queue.draining
            }
            if leads { database.asyncWriteWithoutTransaction { db in self.drain(db) } }
        }
    }

    /// Commits batches until no write waits, on the writer's own queue: a batch that commits is
    /// followed at once by the writes that arrived meanwhile, without a hop through the shared
    /// executor that the waiting requests themselves queue on.
    private func drain(_ db: Database) {
        while true {
            let batch: [Write] = queue.withLock { queue in
                let batch = Array(queue.writes.prefix(Self.maximumBatch))
                queue.writes.removeFirst(batch.count)
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
                }
            } catch {
                walSync.noteFailure(error)
                for write in batch { write.fail(error) }
            }
        }
    }
}

import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Makes committed writes durable without holding SQLite's writer.
///
/// The writer commits with `synchronous = NORMAL`: a commit is in the write-ahead log (it survives
/// the process: `kill -9`, a crash) but reaches the disk only at the next checkpoint, so a power
/// loss or a kernel crash could roll it back. A caller that must not be answered before its write
/// is on disk (Herald answers `2xx` for a registration, an accepted send or event, an update) asks
/// for the next sync: one thread calls `fdatasync` on the log file, and every caller whose commit
/// returned before that call started is answered when it ends. The writer never waits for the
/// disk, and one sync serves every commit made while the previous one ran (a group commit of the
/// log's flushes, as PostgreSQL's WAL writer does). The log is one file written in order, so
/// syncing it makes every frame in it durable, the commit frames of those callers included.
final class WALSync: Sendable {
    /// What waits for the next sync: answers for success and for a failed sync.
    private struct Waiter: Sendable {
        let done: @Sendable () -> Void
        let failed: @Sendable (any Error) -> Void
    }

    private struct State {
        var waiting: [Waiter] = []
        var syncing = false
        /// The log file, opened at the first sync (the database creates it).
        var descriptor: Int32 = -1
        var syncs = 0
    }

    /// The write-ahead log's path (`<database>-wal`).
    private let path: String
    /// Whether callers wait for the disk at all (`sqlite.synchronous: normal` answers at once).
    let isEnabled: Bool
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "herald.sqlite.wal-sync")

    init(databasePath: String, enabled: Bool = true) {
        path = databasePath + "-wal"
        isEnabled = enabled
    }

    deinit {
        let descriptor = state.withLock { $0.descriptor }
        if descriptor >= 0 { close(descriptor) }
    }

    /// How many syncs have run (tests).
    var syncs: Int { state.withLock { $0.syncs } }

    /// Returns once everything committed before the call is on disk.
    /// - Throws: ``WALSyncError`` when the log cannot be opened or synced.
    func sync() async throws {
        guard isEnabled else { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            afterSync(done: { continuation.resume() }, failed: { continuation.resume(throwing: $0) })
        }
    }

    /// Calls `done` once everything committed before the call is on disk, or `failed` with why not.
    func afterSync(done: @escaping @Sendable () -> Void, failed: @escaping @Sendable (any Error) -> Void) {
        guard isEnabled else { return done() }
        let starts = state.withLock { state in
            state.waiting.append(Waiter(done: done, failed: failed))
            defer { state.syncing = true }
            return !state.syncing
        }
        if starts { queue.async { self.run() } }
    }

    /// Syncs while callers wait; each round answers those that were waiting when it began.
    private func run() {
        while true {
            let (round, descriptor): ([Waiter], Int32) = state.withLock { state in
                defer { state.waiting.removeAll() }
                if state.waiting.isEmpty { state.syncing = false }
                return (state.waiting, state.descriptor)
            }
            if round.isEmpty { return }
            let result = Result { try flush(descriptor) }
            for waiter in round {
                switch result {
                case .success: waiter.done()
                case .failure(let error): waiter.failed(error)
                }
            }
        }
    }

    /// One `fdatasync` of the log, opening it first if needed.
    private func flush(_ known: Int32) throws {
        var descriptor = known
        if descriptor < 0 {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw WALSyncError(operation: "open", code: errno) }
            state.withLock { $0.descriptor = descriptor }
        }
        guard fdatasync(descriptor) == 0 else { throw WALSyncError(operation: "fdatasync", code: errno) }
        state.withLock { $0.syncs += 1 }
    }
}

/// The write-ahead log could not be made durable: what failed, with the system's error number.
struct WALSyncError: Error, CustomStringConvertible {
    let operation: String
    let code: Int32

    var description: String { "\(operation) of the SQLite write-ahead log failed: \(String(cString: strerror(code)))" }
}

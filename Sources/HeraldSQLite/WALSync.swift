import Dispatch
import GRDB
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
/// returned before that call started is answered when it ends. One sync serves every commit made
/// while the previous one ran (a group commit of the log's flushes, as PostgreSQL's WAL writer
/// does). When no sync runs, the group commit's writer makes it itself (``afterSync(here:done:failed:)``):
/// waking this thread for it cost two thread switches per commit on the one-notification path. The log is one file written in order, so
/// syncing it makes every frame in it durable, the commit frames of those callers included.
///
/// The log's descriptor is opened at the first sync, and again whenever the path names another file
/// than the one open (SQLite deletes the log when its last connection closes and creates it anew);
/// each time, the directory is synced too, so the log's (and the database's) directory entry
/// survives a power loss before SQLite's first checkpoint syncs it. A failed `fdatasync` fails every
/// later sync as well, until Herald is restarted: after one, the kernel may have dropped the log's
/// dirty pages and a later `fdatasync` that succeeds would not bring them back (PostgreSQL's
/// "fsyncgate"), so nothing more is answered as durable (docs/reliability.md, "A failed fsync"). A
/// sync SQLite makes itself fails them the same way (``noteFailure(_:)``): the log's header when a
/// commit starts reusing the log after a checkpoint, and a checkpoint's syncs of the log and the
/// database.
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
        /// The open log's device and inode, to notice the path naming a new log.
        var file: (device: UInt64, inode: UInt64) = (0, 0)
        var syncs = 0
        /// The first failed sync: every later one fails with it.
        var failure: WALSyncError?
    }

    /// The write-ahead log's path (`<database>-wal`).
    private let path: String
    /// Whether callers wait for the disk at all (`sqlite.synchronous: normal` answers at once).
    let isEnabled: Bool
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "herald.sqlite.wal-sync")
    /// `fdatasync` (tests inject a failing one).
    private let dataSync: @Sendable (Int32) -> Int32

    init(
        databasePath: String, enabled: Bool = true,
        dataSync: @escaping @Sendable (Int32) -> Int32 = { fdatasync($0) }
    ) {
        path = databasePath + "-wal"
        isEnabled = enabled
        self.dataSync = dataSync
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
    /// - Parameter here: When no sync runs, run it on the calling thread (one round: the waiters of that
    ///   moment), instead of waking the sync's own thread for it. The group commit's writer passes true: it
    ///   has just committed and has nothing better to do than wait for the disk, and the writes that arrive
    ///   meanwhile commit together after it. When a sync runs already, the caller is answered by it or the
    ///   round after, as always.
    func afterSync(
        here: Bool = false, done: @escaping @Sendable () -> Void, failed: @escaping @Sendable (any Error) -> Void
    ) {
        guard isEnabled else { return done() }
        let starts = state.withLock { state in
            state.waiting.append(Waiter(done: done, failed: failed))
            defer { state.syncing = true }
            return !state.syncing
        }
        guard starts else { return }
        if here {
            round()
            // Waiters that came during that round go to the sync's thread, which answers them as it does.
            let more = state.withLock { state in
                if state.waiting.isEmpty { state.syncing = false }
                return state.syncing
            }
            if more { queue.async { self.run() } }
        } else {
            queue.async { self.run() }
        }
    }

    /// Looks at an error of a write or a checkpoint: when it is a sync SQLite made itself that failed
    /// (`SQLITE_IOERR_FSYNC`, `SQLITE_IOERR_DIR_FSYNC`), every later sync fails as after a failed
    /// `fdatasync` of the log here.
    func noteFailure(_ error: any Error) {
        guard let error = error as? DatabaseError,
            error.extendedResultCode == .SQLITE_IOERR_FSYNC || error.extendedResultCode == .SQLITE_IOERR_DIR_FSYNC
        else { return }
        // SQLite keeps the system's error number on the connection, gone with the error: EIO stands for it.
        let failure = WALSyncError(operation: "SQLite's own sync", code: EIO)
        state.withLock { state in
            if state.failure == nil { state.failure = failure }
        }
    }

    /// Syncs while callers wait; each round answers those that were waiting when it began.
    private func run() {
        while round() {}
    }

    /// One sync, answering those that were waiting when it began; false when none were (then no sync
    /// runs until the next caller starts one).
    @discardableResult
    private func round() -> Bool {
        let (round, descriptor): ([Waiter], Int32) = state.withLock { state in
            defer { state.waiting.removeAll() }
            if state.waiting.isEmpty { state.syncing = false }
            return (state.waiting, state.descriptor)
        }
        if round.isEmpty { return false }
        let result = Result { try flush(descriptor) }
        for waiter in round {
            switch result {
            case .success: waiter.done()
            case .failure(let error): waiter.failed(error)
            }
        }
        return true
    }

    /// One `fdatasync` of the log, opening it (and syncing its directory) first when the path names
    /// another file than the open one.
    private func flush(_ known: Int32) throws {
        if let failure = state.withLock({ $0.failure }) { throw failure.repeated }
        var descriptor = known
        var named = stat()
        let exists = stat(path, &named) == 0
        let current = state.withLock { $0.file }
        if descriptor < 0 || (exists && (UInt64(named.st_dev), UInt64(named.st_ino)) != current) {
            descriptor = try reopen(replacing: descriptor)
        }
        guard dataSync(descriptor) == 0 else {
            let failure = WALSyncError(operation: "fdatasync", code: errno)
            state.withLock { $0.failure = failure }
            throw failure
        }
        state.withLock { $0.syncs += 1 }
    }

    /// Opens the log in place of `old`, and syncs the directory that holds it.
    private func reopen(replacing old: Int32) throws -> Int32 {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw WALSyncError(operation: "open", code: errno) }
        var opened = stat()
        guard fstat(descriptor, &opened) == 0 else {
            let code = errno
            close(descriptor)
            throw WALSyncError(operation: "fstat", code: code)
        }
        let slash = path.lastIndex(of: "/")
        let directoryPath = slash.map { String(path[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        let directory = open(directoryPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else {
            let code = errno
            close(descriptor)
            throw WALSyncError(operation: "open of the log's directory", code: code)
        }
        defer { close(directory) }
        guard fsync(directory) == 0 else {
            let failure = WALSyncError(operation: "fsync of the log's directory", code: errno)
            close(descriptor)
            state.withLock { $0.failure = failure }
            throw failure
        }
        if old >= 0 { close(old) }
        state.withLock { state in
            state.descriptor = descriptor
            state.file = (UInt64(opened.st_dev), UInt64(opened.st_ino))
        }
        return descriptor
    }
}

/// The write-ahead log could not be made durable: what failed, with the system's error number.
struct WALSyncError: Error, CustomStringConvertible {
    let operation: String
    let code: Int32
    /// Whether this sync was refused for an earlier failed one (nothing was tried).
    var earlier = false

    /// The error a later sync fails with.
    var repeated: WALSyncError {
        var error = self
        error.earlier = true
        return error
    }

    var description: String {
        let what = "\(operation) of the SQLite write-ahead log failed"
        let why = String(cString: strerror(code))
        guard earlier else { return "\(what): \(why)" }
        return "\(what) earlier (\(why)): the kernel may have dropped unsynced data, so nothing more is accepted "
            + "until Herald is restarted"
    }
}

extension WALSync {
    /// The inode of the file open on `descriptor`, nil when it cannot be read (tests).
    static func inode(ofDescriptor descriptor: Int32) -> UInt64? {
        var status = stat()
        return fstat(descriptor, &status) == 0 ? UInt64(status.st_ino) : nil
    }

    /// The inode of the file at `path`, nil when there is none (tests).
    static func inode(atPath path: String) -> UInt64? {
        var status = stat()
        return stat(path, &status) == 0 ? UInt64(status.st_ino) : nil
    }
}

import GRDB
import Synchronization

/// A few read-only connections that answer small reads on the calling thread.
///
/// `DatabasePool`'s asynchronous reads run on a reader's queue, another thread: the caller's task
/// is suspended, the reader's thread woken, and the task resumed on its own thread once the read is
/// done, two thread switches for a read of one row. On the one-notification path two reads (the
/// device a Matrix pushkey or an SNS endpoint names, the handed notification's first page) cost
/// more in those switches than in SQLite (docs/performance.md, the one-notification path). A read
/// here runs on the calling thread instead (GRDB's synchronous read: `DispatchQueue.sync` on a
/// connection's idle queue runs the block where it is called), on one of these connections, each
/// used by one caller at a time. When all are in use the read goes to the pool as before, so a
/// caller never waits here for another.
///
/// Only reads that touch a few rows by an index come here: the thread a read runs on is an event
/// loop's, which serves other connections meanwhile. They are WAL readers: a writer never blocks
/// them, and they see the last commit.
final class InlineReaders: Sendable {
    /// Connections not in use now.
    private let idle: Mutex<[DatabaseQueue]>

    /// Opens `count` read-only connections to the database at `path` with `configuration`.
    init(path: String, configuration: Configuration, count: Int) throws {
        var configuration = configuration
        configuration.readonly = true
        // A reader waits only while SQLite recovers the log (the first connection after a crash).
        configuration.busyMode = .timeout(1)
        idle = Mutex(try (0..<count).map { _ in try DatabaseQueue(path: path, configuration: configuration) })
    }

    /// `body`'s value from a connection here, on the calling thread; nil when every one is in use.
    /// - Parameter transaction: Whether `body`'s statements read one snapshot (a transaction around them);
    ///   a body of one statement needs none (a statement reads one snapshot), and spares its `BEGIN` and `COMMIT`.
    func read<T>(transaction: Bool = true, _ body: (Database) throws -> T) throws -> T? {
        guard let connection = idle.withLock({ $0.popLast() }) else { return nil }
        defer { idle.withLock { $0.append(connection) } }
        return transaction ? try connection.read(body) : try connection.unsafeRead(body)
    }
}

extension SQLiteStore {
    /// A small read (a few rows by an index) on the calling thread when an ``InlineReaders``
    /// connection is free, else on the pool's readers.
    /// - Parameter oneStatement: `body` runs one statement: on the calling thread it needs no transaction.
    func smallRead<T: Sendable>(
        oneStatement: Bool = false, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        if let value = try inlineReaders.read(transaction: !oneStatement, body) { return value }
        return try await database.read(body)
    }
}

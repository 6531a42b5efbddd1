import Dispatch
import GRDB
import HeraldTestSupport
import Synchronization
import Testing

@testable import HeraldSQLite

@Suite("SQLite group commit")
struct GroupCommitTests {
    /// A store whose writer is held by an open transaction until `release` is signalled, with
    /// `count` grouped writes queued behind it: the odd ones insert a row and then throw.
    private func queuedBehindBusyWriter(
        count: Int
    ) async throws -> (
        SQLiteStore, [Result<Int, any Error>], commits: Int
    ) {
        let directory = try TemporaryDirectory()
        let store = try SQLiteStore(path: directory.file("g.sqlite"), cipher: Fixtures.cipher())
        try await store.migrate()
        try await store.database.write { db in try db.execute(sql: "CREATE TABLE probe (n INTEGER PRIMARY KEY)") }
        let counter = CommitCounter()
        store.database.add(transactionObserver: counter, extent: .databaseLifetime)
        let release = DispatchSemaphore(value: 0)
        async let blocker: Void = store.database.write { _ in release.wait() }
        let results = try await withThrowingTaskGroup(of: (Int, Result<Int, any Error>).self) { group in
            for n in 0..<count {
                group.addTask {
                    do {
                        let value = try await store.groupCommit.write(durable: n % 3 == 0) { db in
                            try db.execute(sql: "INSERT INTO probe (n) VALUES (?)", arguments: [n])
                            if n % 2 == 1 { throw DatabaseError(message: "write \(n) refused") }
                            return n
                        }
                        return (n, .success(value))
                    } catch {
                        return (n, .failure(error))
                    }
                }
            }
            // Every write waits behind the blocker: in the batch the drain took, or after it.
            while store.groupCommit.submitted < count { try await Task.sleep(for: .milliseconds(5)) }
            counter.reset()
            release.signal()
            var results = [Result<Int, any Error>?](repeating: nil, count: count)
            for try await (n, result) in group { results[n] = result }
            return results.compactMap { $0 }
        }
        try await blocker
        return (store, results, counter.count)
    }

    @Test("Writes queued together commit in one or two transactions; a failing one rolls back alone")
    func batchesAndIsolates() async throws {
        let count = 60
        let (store, results, commits) = try await queuedBehindBusyWriter(count: count)
        #expect(commits <= 2, "\(commits) commits for \(count) writes")
        for (n, result) in results.enumerated() {
            switch result {
            case .success(let value): #expect(n % 2 == 0 && value == n)
            case .failure(let error): #expect(n % 2 == 1, "\(n): \(error)")
            }
        }
        let stored = try await store.database.read { db in try Int.fetchAll(db, sql: "SELECT n FROM probe ORDER BY n") }
        #expect(stored == Array(stride(from: 0, to: count, by: 2)))
    }

    @Test("A durable write is answered after a sync of the log; the engine's are not synced for")
    func durability() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteStore(path: directory.file("d.sqlite"), cipher: Fixtures.cipher())
        try await store.migrate()
        try await store.database.write { db in try db.execute(sql: "CREATE TABLE probe (n INTEGER PRIMARY KEY)") }
        let before = store.walSync.syncs
        try await store.groupCommit.write(durable: false) { db in
            try db.execute(sql: "INSERT INTO probe (n) VALUES (1)")
        }
        #expect(store.walSync.syncs == before)
        try await store.groupCommit.write(durable: true) { db in
            try db.execute(sql: "INSERT INTO probe (n) VALUES (2)")
        }
        #expect(store.walSync.syncs == before + 1)
        // Writes outside the group (updates, deletes) are durable too.
        try await store.durableWrite { db in try db.execute(sql: "INSERT INTO probe (n) VALUES (3)") }
        #expect(store.walSync.syncs == before + 2)
        // The writer itself stays at GRDB's WAL setting, NORMAL (1): its commits do not sync; the syncs are WALSync's.
        #expect(try await store.database.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } == 1)
    }

    @Test(
        "With a sync interval, durable writes that come less than it after a sync wait for the rest of it and share one commit and one sync"
    )
    func syncInterval() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteStore(
            path: directory.file("s.sqlite"), cipher: Fixtures.cipher(), syncInterval: .seconds(1))
        try await store.migrate()
        try await store.database.write { db in try db.execute(sql: "CREATE TABLE probe (n INTEGER PRIMARY KEY)") }
        let counter = CommitCounter()
        store.database.add(transactionObserver: counter, extent: .databaseLifetime)
        try await store.groupCommit.write(durable: true) { db in try db.execute(sql: "INSERT INTO probe (n) VALUES (0)")
        }
        let syncs = store.walSync.syncs
        counter.reset()
        // Ten right after that sync (submitted within microseconds of each other, well inside the second).
        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 1...10 {
                group.addTask {
                    try await store.groupCommit.write(durable: true) { db in
                        try db.execute(sql: "INSERT INTO probe (n) VALUES (?)", arguments: [n])
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(store.walSync.syncs == syncs + 1)
        #expect(counter.count == 1)
        #expect(try await store.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM probe") } == 11)
    }
}

/// Counts the commits that inserted into `probe`.
private final class CommitCounter: TransactionObserver, Sendable {
    private struct State {
        var commits = 0
        var changed = false
    }
    private let state = Mutex(State())
    var count: Int { state.withLock { $0.commits } }
    func reset() { state.withLock { $0.commits = 0 } }
    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { eventKind.tableName == "probe" }
    func databaseDidChange(with event: DatabaseEvent) { state.withLock { $0.changed = true } }
    func databaseDidCommit(_ db: Database) {
        state.withLock { state in
            if state.changed { state.commits += 1 }
            state.changed = false
        }
    }
    func databaseDidRollback(_ db: Database) { state.withLock { $0.changed = false } }
}

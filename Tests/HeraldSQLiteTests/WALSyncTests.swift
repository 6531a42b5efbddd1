import Foundation
import GRDB
import HeraldCore
import HeraldTestSupport
import Synchronization
import Testing

@testable import HeraldSQLite

#if canImport(Glibc)
    import Glibc
#endif

@Suite("WALSync: the log's sync, its descriptor and a failed fdatasync")
struct WALSyncTests {
    /// `fdatasync` as scripted: each call takes the next answer (0, or an errno to fail with), then succeeds;
    /// the descriptors it was called with are kept.
    final class ScriptedSync: Sendable {
        private let state: Mutex<(answers: [Int32], calls: [Int32])>
        init(_ answers: [Int32]) { state = Mutex((answers, [])) }
        var calls: [Int32] { state.withLock { $0.calls } }

        func callAsFunction(_ descriptor: Int32) -> Int32 {
            let answer = state.withLock { state -> Int32 in
                state.calls.append(descriptor)
                return state.answers.isEmpty ? 0 : state.answers.removeFirst()
            }
            guard answer != 0 else { return 0 }
            errno = answer
            return -1
        }
    }

    /// A database's path in `directory` whose write-ahead log exists (what WALSync opens and syncs).
    static func databaseWithLog(in directory: TemporaryDirectory) -> String {
        let database = directory.file("w.sqlite")
        FileManager.default.createFile(atPath: database + "-wal", contents: Data("frames".utf8))
        return database
    }

    @Test("A failed fdatasync fails that sync and every later one, without trying again (fsyncgate)")
    func failedSyncIsFinal() async throws {
        let directory = try TemporaryDirectory()
        let database = Self.databaseWithLog(in: directory)
        let scripted = ScriptedSync([0, EIO])
        let sync = WALSync(databasePath: database, dataSync: { scripted($0) })
        try await sync.sync()
        #expect(sync.syncs == 1)
        let failed = await #expect(throws: WALSyncError.self) { try await sync.sync() }
        #expect(failed?.earlier == false)
        #expect(failed?.code == EIO)
        // The disk would answer now; Herald does not ask it again and answers nothing as durable.
        for _ in 0..<3 {
            let later = await #expect(throws: WALSyncError.self) { try await sync.sync() }
            #expect(later?.earlier == true)
            #expect(later.map { "\($0)" }?.contains("until Herald is restarted") == true)
            #expect(HeraldError.classify(try #require(later))?.code == "storage_unavailable")
        }
        #expect(scripted.calls.count == 2)
        #expect(sync.syncs == 1)
    }

    @Test(
        "A sync SQLite makes itself that fails (the log's header at its reuse, a checkpoint) fails every later sync too"
    )
    func sqliteSyncFailureIsFinal() async throws {
        let directory = try TemporaryDirectory()
        let database = Self.databaseWithLog(in: directory)
        let scripted = ScriptedSync([])
        let sync = WALSync(databasePath: database, dataSync: { scripted($0) })
        // Other failures of a write or a checkpoint (busy, full, a constraint, a read error) change nothing.
        for code in [ResultCode.SQLITE_BUSY, .SQLITE_FULL, .SQLITE_CONSTRAINT, .SQLITE_IOERR_READ] {
            sync.noteFailure(DatabaseError(resultCode: code))
            try await sync.sync()
        }
        sync.noteFailure(DatabaseError(resultCode: .SQLITE_IOERR_FSYNC))
        for _ in 0..<2 {
            let later = await #expect(throws: WALSyncError.self) { try await sync.sync() }
            #expect(later?.earlier == true)
            #expect(later.map { "\($0)" }?.contains("until Herald is restarted") == true)
        }
        #expect(scripted.calls.count == 4, "no sync is tried after it")
        let directorySync = WALSync(databasePath: database, dataSync: { scripted($0) })
        directorySync.noteFailure(DatabaseError(resultCode: .SQLITE_IOERR_DIR_FSYNC))
        await #expect(throws: WALSyncError.self) { try await directorySync.sync() }
    }

    @Test("A log replaced on disk (SQLite deletes it when its last connection closes) is opened again")
    func replacedLogIsReopened() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.file("r.sqlite")
        let log = database + "-wal"
        FileManager.default.createFile(atPath: log, contents: Data("first".utf8))
        let scripted = ScriptedSync([])
        let sync = WALSync(databasePath: database, dataSync: { scripted($0) })
        try await sync.sync()
        let first = try #require(WALSync.inode(atPath: log))
        #expect(WALSync.inode(ofDescriptor: try #require(scripted.calls.last)) == first)
        // The same file: the same descriptor.
        try await sync.sync()
        #expect(Set(scripted.calls).count == 1)
        // A new log under the same name (the old one kept open elsewhere, so its inode is not reused).
        let held = open(log, O_RDONLY)
        defer { close(held) }
        try FileManager.default.removeItem(atPath: log)
        FileManager.default.createFile(atPath: log, contents: Data("second".utf8))
        let second = try #require(WALSync.inode(atPath: log))
        #expect(second != first)
        try await sync.sync()
        #expect(WALSync.inode(ofDescriptor: try #require(scripted.calls.last)) == second)
        #expect(sync.syncs == 3)
    }

    @Test(
        "The group commit's writer syncs on its own thread when no sync runs; a caller that comes during that sync is answered by the sync's thread, and a failed one fails both"
    )
    func syncHere() async throws {
        let directory = try TemporaryDirectory()
        let database = Self.databaseWithLog(in: directory)
        let caller = Mutex<pthread_t?>(nil)
        let arrived = Mutex(false)
        let sync = Mutex<WALSync?>(nil)
        let scripted = ScriptedSync([0, 0, EIO])
        let walSync = WALSync(databasePath: database) { descriptor in
            caller.withLock { $0 = $0 ?? pthread_self() }
            // Another caller arrives during the first sync: it waits for the next round.
            if scripted.calls.isEmpty, let sync = sync.withLock({ $0 }) {
                sync.afterSync(done: { arrived.withLock { $0 = true } }, failed: { _ in })
            }
            return scripted(descriptor)
        }
        sync.withLock { $0 = walSync }
        let answered = Mutex<pthread_t?>(nil)
        walSync.afterSync(here: true, done: { answered.withLock { $0 = pthread_self() } }, failed: { _ in })
        // Synced and answered before afterSync returned, on this thread.
        let here = pthread_self()
        #expect(answered.withLock { $0 } == here)
        #expect(caller.withLock { $0 } == here)
        try await waitUntil("the caller that came during the sync answered by the next round") {
            arrived.withLock { $0 }
        }
        #expect(walSync.syncs == 2)
        // A failed sync here fails its caller, and every later one (fsyncgate), here or not.
        let failed = Mutex<(any Error)?>(nil)
        walSync.afterSync(here: true, done: {}, failed: { error in failed.withLock { $0 = error } })
        #expect((failed.withLock { $0 } as? WALSyncError)?.code == EIO)
        await #expect(throws: WALSyncError.self) { try await walSync.sync() }
    }
}

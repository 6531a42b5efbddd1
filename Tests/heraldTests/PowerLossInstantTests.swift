import Foundation
import GRDB
import HeraldSQLite
import HeraldTestSupport
import Synchronization
import Testing

/// Power losses aimed at one instant each, on SQLite on a LazyFS mount (``LazyFSMount``): during a checkpoint
/// (LazyFS itself crashes at the checkpoint's first write to the database file), right after the write-ahead log
/// restarts from its start, during Herald's start, during a migration at start, during `herald cleanup` and during
/// `herald import`. The loop (``PowerLossTests``) draws its instants from the traffic; these are the ones a random
/// kill rarely hits. After each: the database opens (`integrity_check` ok), Herald starts without a manual step, and
/// everything acknowledged is there — a registration answered `201`, an import or clean-up that exited 0 — while
/// what was not acknowledged is there whole or not at all (a migration, a clean-up, an import's batches).
@Suite("herald keeps what it acknowledged through a power loss aimed at one instant (LazyFS)", .serialized)
struct PowerLossInstantTests {
    static let database = "herald.sqlite"

    @Test("A power loss during a checkpoint (LazyFS crashes at its first write to the database file)")
    func checkpoint() async throws {
        let server = try await ServedDatabase.onNewMount()
        let lazyFS = server.lazyFS
        defer { lazyFS.stopNow() }
        var accepted = try await server.start()
        let traffic = RegistrationTraffic(address: server.address, key: server.key)
        try await Task.sleep(for: .milliseconds(300))
        // Only a checkpoint writes the database file in WAL mode: LazyFS dies in the middle of one, with every
        // byte not synced.
        try await lazyFS.arm("lazyfs::crash::timing=after::op=write::from_rgx=\(Self.database)$")
        try await lazyFS.waitForCrash("at a checkpoint")
        accepted += await traffic.stop()
        server.killNow()
        try await lazyFS.restart()
        try await server.expectRecovered(accepted)
        print("power-loss-instant=checkpoint acknowledged=\(accepted.count)")
    }

    @Test("A power loss right after the write-ahead log restarted from its start")
    func logRestart() async throws {
        let server = try await ServedDatabase.onNewMount()
        let lazyFS = server.lazyFS
        defer { lazyFS.stopNow() }
        var accepted = try await server.start()
        let traffic = RegistrationTraffic(address: server.address, key: server.key)
        // The log's header names its salt, new at each restart (once a checkpoint has copied all of it); read
        // through the mount, so what is not synced yet is seen too.
        let log = lazyFS.path + "/\(Self.database)-wal"
        let first = try await waitForValue("the log's first header", timeout: .seconds(20)) { WALHeader.salt(of: log) }
        let restarted = try await waitForValue("the log restarted", timeout: .seconds(30), every: .milliseconds(1)) {
            WALHeader.salt(of: log).flatMap { $0 != first ? ContinuousClock.now : nil }
        }
        try await Task.sleep(for: .milliseconds(Int.random(in: 0...20)))
        server.killNow()
        let after = ContinuousClock.now - restarted
        accepted += await traffic.stop()
        let unsynced = try await lazyFS.unsyncedBytes()
        try await lazyFS.clearCache()
        try await server.expectRecovered(accepted)
        print(
            "power-loss-instant=log-restart killed-after=\(after) unsynced-bytes=\(unsynced) acknowledged=\(accepted.count)"
        )
    }

    @Test("Power losses during Herald's start, one after another, with registrations as soon as it listens")
    func duringStart() async throws {
        let server = try await ServedDatabase.onNewMount()
        let lazyFS = server.lazyFS
        defer { lazyFS.stopNow() }
        var accepted = try await server.start()
        for loss in 0..<3 {
            server.killNow()
            try await lazyFS.clearCache()
            // Started again, and killed at a point in its start (opening and recovering the database, migrating,
            // the first jobs) or in its first writes.
            let delay = Duration.milliseconds(Int.random(in: 0...600))
            let process = try server.spawn()
            let began = ContinuousClock.now
            var traffic: RegistrationTraffic?
            while ContinuousClock.now - began < delay {
                if traffic == nil, server.takeAddress(from: process) {
                    traffic = RegistrationTraffic(address: server.address, key: server.key)
                }
                try await Task.sleep(for: .milliseconds(5))
            }
            server.killNow()
            accepted += await traffic?.stop() ?? []
            print("power-loss-instant=start loss=\(loss) killed-after=\(delay) listened=\(traffic != nil)")
        }
        try await lazyFS.clearCache()
        try await server.expectRecovered(accepted)
    }

    @Test("A power loss during a migration at start: the old schema whole, then migrated at the next start")
    func migrationAtStart() async throws {
        let directory = try TemporaryDirectory()
        let lazyFS = try await LazyFSMount(in: directory)
        defer { lazyFS.stopNow() }
        // A database of the release before the last migration, with rows the migration rewrites, synced.
        let path = lazyFS.path + "/\(Self.database)"
        let old = try DatabaseQueue(path: path)
        try SQLiteStore.migrator.migrate(old, upTo: "v18_fanout_ranges")
        try await old.write { db in
            for day in 0..<200 {
                try db.execute(
                    sql: """
                        INSERT INTO relay_usage (app_id, service, token_index, day, successful, errors)
                        VALUES ('ha', 'apns', x'00', ?, ?, 1)
                        """,
                    arguments: ["2026-01-\(day)", day])
            }
        }
        _ = try await old.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        try old.close()
        let before = try await SQLRunner(sqliteFile: path, postgresURL: nil).rows(
            "SELECT count(*), sum(successful) FROM relay_usage")

        // LazyFS dies at the first write to the log: the migration's, the first thing Herald writes.
        try await lazyFS.arm("lazyfs::crash::timing=after::op=write::from_rgx=\(Self.database)-wal$")
        let server = try ServedDatabase(on: lazyFS)
        _ = try server.spawn()
        try await lazyFS.waitForCrash("at the migration")
        server.killNow()
        try await lazyFS.restart()
        let sql = SQLRunner(sqliteFile: path, postgresURL: nil)
        #expect(try await sql.rows("PRAGMA integrity_check") == ["ok"])
        let last = "v19_ha_relay_outcomes"
        let applied = try await sql.rows("SELECT count(*) FROM grdb_migrations WHERE identifier = '\(last)'")
        #expect(applied == ["0"], "the migration cut by the power loss is not applied")
        #expect(try await sql.rows("SELECT count(*), sum(successful) FROM relay_usage") == before)

        // The next start migrates, and the rows are there under the new schema.
        _ = try await server.start()
        #expect(try await sql.rows("SELECT count(*) FROM grdb_migrations WHERE identifier = '\(last)'") == ["1"])
        #expect(try await sql.rows("SELECT count(*), sum(accepted) FROM relay_usage") == before)
        server.killNow()
    }

    @Test("herald cleanup: a power loss during it leaves all or nothing; once it has printed its report, all")
    func cleanup() async throws {
        let directory = try TemporaryDirectory()
        let lazyFS = try await LazyFSMount(in: directory)
        defer { lazyFS.stopNow() }
        let database = "sqlite://\(lazyFS.path)/\(Self.database)"
        let sql = SQLRunner(sqliteFile: lazyFS.path + "/\(Self.database)", postgresURL: nil)
        let file = try ImportFile.write(in: directory, name: "devices", count: 20_000)
        let load = try HeraldProcess(["import", "--database", database, file])
        #expect(try await load.exitStatus(timeout: .seconds(120)) == 0, "\(load.text)")
        // Every installation made a year old (synced), so stale at a day: the clean-up invalidates all of them, in one
        // transaction.
        _ = try await sql.rows(
            "UPDATE installations SET updated_at = updated_at - 31536000, last_seen_at = last_seen_at - 31536000")
        _ = try await sql.rows("PRAGMA wal_checkpoint(TRUNCATE)")
        let environment = ["HERALD_ENGINE_CLEANUP_STALE_DAYS": "1"]
        // LazyFS dies at the first write to the log: the clean-up's commit (its database is up to date, so
        // nothing else writes before it), cut half-way.
        try await lazyFS.arm("lazyfs::crash::timing=after::op=write::from_rgx=\(Self.database)-wal$")
        let killed = try HeraldProcess(["cleanup", "--database", database], environment: environment)
        try await lazyFS.waitForCrash("at the clean-up's commit")
        kill(killed.process.processIdentifier, SIGKILL)
        _ = try await killed.exitStatus()
        #expect(!killed.text.contains("stale installations invalidated:"), "it reported a clean-up it did not finish")
        try await lazyFS.restart()
        #expect(try await sql.rows("PRAGMA integrity_check") == ["ok"])
        #expect(try await sql.rows("SELECT count(*) FROM installations") == ["20000"])
        let invalid = try await sql.rows("SELECT count(*) FROM installations WHERE valid = 0")
        #expect(invalid == ["0"] || invalid == ["20000"], "a clean-up cut by a power loss left \(invalid) invalidated")
        print("power-loss-instant=cleanup invalidated=\(invalid)")

        let whole = try HeraldProcess(["cleanup", "--database", database], environment: environment)
        #expect(try await whole.exitStatus(timeout: .seconds(120)) == 0, "\(whole.text)")
        #expect(whole.text.contains("stale installations invalidated:"), "\(whole.text)")
        try await lazyFS.clearCache()
        #expect(try await sql.rows("SELECT count(*) FROM installations WHERE valid = 0") == ["20000"])
    }

    @Test("herald import: a power loss during it keeps whole batches, the file's first ones; once it exits 0, all")
    func importBatches() async throws {
        let directory = try TemporaryDirectory()
        let lazyFS = try await LazyFSMount(in: directory)
        defer { lazyFS.stopNow() }
        let database = "sqlite://\(lazyFS.path)/\(Self.database)"
        let sql = SQLRunner(sqliteFile: lazyFS.path + "/\(Self.database)", postgresURL: nil)
        let batch = 1000
        func imported(_ prefix: String) async throws -> [Int] {
            try await sql.rows("SELECT device_id FROM installations WHERE device_id LIKE '\(prefix)-%'")
                .compactMap { Int($0.dropFirst(prefix.count + 1)) }.sorted()
        }

        // An import that exited 0 is on disk whole.
        let first = try ImportFile.write(in: directory, name: "a", count: 20_000)
        let whole = try HeraldProcess(["import", "--database", database, "--batch", "\(batch)", first])
        #expect(try await whole.exitStatus(timeout: .seconds(120)) == 0, "\(whole.text)")
        try await lazyFS.clearCache()
        #expect(try await imported("a") == Array(0..<20_000))

        // One cut by a power loss keeps the batches it wrote before, in the file's order, each whole.
        let second = try ImportFile.write(in: directory, name: "b", count: 40_000)
        let delay = Duration.milliseconds(Int.random(in: 50...800))
        let killed = try HeraldProcess(["import", "--database", database, "--batch", "\(batch)", second])
        try await Task.sleep(for: delay)
        let finished = !killed.process.isRunning
        kill(killed.process.processIdentifier, SIGKILL)
        _ = try await killed.exitStatus()
        try await lazyFS.clearCache()
        #expect(try await sql.rows("PRAGMA integrity_check") == ["ok"])
        #expect(try await imported("a").count == 20_000)
        let kept = try await imported("b")
        #expect(kept == Array(0..<kept.count), "the batches kept are the file's first ones")
        #expect(kept.count % batch == 0 || kept.count == 40_000, "\(kept.count) kept: a batch cut in two")
        print("power-loss-instant=import killed-after=\(delay) finished=\(finished) kept=\(kept.count)/40000")

        // The same file again completes it.
        let again = try HeraldProcess(["import", "--database", database, "--batch", "\(batch)", second])
        #expect(try await again.exitStatus(timeout: .seconds(120)) == 0, "\(again.text)")
        try await lazyFS.clearCache()
        #expect(try await imported("b") == Array(0..<40_000))
    }
}

/// `herald serve` on a SQLite database on a LazyFS mount, killed and started again on it.
final class ServedDatabase: Sendable {
    let lazyFS: LazyFSMount
    private let state = Mutex<(process: Process?, address: String, key: String)>((nil, "", ""))

    init(on lazyFS: LazyFSMount) throws { self.lazyFS = lazyFS }

    /// A server for a new LazyFS mount (in a temporary directory that lives as long as the process).
    static func onNewMount() async throws -> ServedDatabase {
        try ServedDatabase(on: try await LazyFSMount(in: try TemporaryDirectory()))
    }

    var address: String { state.withLock { $0.address } }
    var key: String { state.withLock { $0.key } }
    var arguments: [String] {
        ["serve", "--database", "sqlite://\(lazyFS.path)/\(PowerLossInstantTests.database)", "--port", "0"]
    }

    /// Starts the server (its key printed once, at its first start) and registers 50 devices before the run's
    /// traffic: their `201`s are the first acknowledged writes.
    func start() async throws -> [String] {
        let process = try spawn()
        try await listen(process)
        var accepted: [String] = []
        for _ in 0..<50 {
            let answer = try await RegistrationTraffic.register(address: address, key: key)
            if let id = answer { accepted.append(id) }
        }
        #expect(accepted.count == 50)
        return accepted
    }

    /// Starts the process; ``listen(_:)`` waits for its address.
    func spawn() throws -> HeraldProcess {
        let process = try HeraldProcess(arguments)
        state.withLock { $0.process = process.process }
        servers.withLock { $0[ObjectIdentifier(self), default: []].append(process) }
        return process
    }

    /// Waits until `process` listens, and takes its address (and its key, printed at the first start).
    func listen(_ process: HeraldProcess) async throws {
        _ = try await process.line(startingWith: "Herald is listening on ")
        _ = takeAddress(from: process)
    }

    /// Takes the address `process` printed, if it did (and its key, printed at the first start).
    func takeAddress(from process: HeraldProcess) -> Bool {
        let lines = process.text.split(separator: "\n")
        let listening = "Herald is listening on ", serverKey = "server key: "
        guard let address = lines.first(where: { $0.hasPrefix(listening) }) else { return false }
        let key = lines.first { $0.hasPrefix(serverKey) }
        state.withLock {
            $0.address = String(address.dropFirst(listening.count))
            if let key { $0.key = String(key.dropFirst(serverKey.count)) }
        }
        return true
    }

    /// `kill -9`, waiting for the process to be gone.
    func killNow() {
        guard let process = state.withLock({ $0.process }) else { return }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        state.withLock { $0.address = "" }
    }

    /// After the power loss: the database is sound, Herald starts on it, and every registration in `accepted`
    /// is there.
    func expectRecovered(_ accepted: [String]) async throws {
        let sql = SQLRunner(sqliteFile: lazyFS.path + "/\(PowerLossInstantTests.database)", postgresURL: nil)
        #expect(try await sql.rows("PRAGMA integrity_check") == ["ok"])
        let process = try spawn()
        try await listen(process)
        var lost: [String] = []
        for id in accepted {
            let answer = try await request("GET", "\(address)/v1/installations/\(id)", bearer: key)
            if answer.status != 200 { lost.append(id) }
        }
        #expect(lost.isEmpty, "\(lost.count) of \(accepted.count) acknowledged registrations lost")
        killNow()
    }

    deinit {
        for process in servers.withLock({ $0.removeValue(forKey: ObjectIdentifier(self)) ?? [] })
        where process.process.isRunning {
            kill(process.process.processIdentifier, SIGKILL)
        }
    }
}

/// The servers each ``ServedDatabase`` started, killed when it goes (a failed test leaves none behind).
private let servers = Mutex<[ObjectIdentifier: [HeraldProcess]]>([:])

/// Registrations from four clients at once until ``stop()``: the ids answered `201`.
final class RegistrationTraffic: Sendable {
    private final class Shared: Sendable {
        let running = Mutex(true)
        let accepted = Mutex<[String]>([])
    }

    private let shared = Shared()
    private let task: Task<Void, Never>

    init(address: String, key: String) {
        let shared = self.shared
        task = Task {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        while shared.running.withLock({ $0 }) {
                            guard let id = try? await Self.register(address: address, key: key) else {
                                try? await Task.sleep(for: .milliseconds(5))
                                continue
                            }
                            shared.accepted.withLock { $0.append(id) }
                        }
                    }
                }
            }
        }
    }

    /// Stops the clients; the ids answered `201`.
    func stop() async -> [String] {
        shared.running.withLock { $0 = false }
        await task.value
        return shared.accepted.withLock { $0 }
    }

    /// One registration; its id when it was answered `201`, nil for any other answer.
    static func register(address: String, key: String) async throws -> String? {
        let answer = try await StorageFailureTests.register(address, key: key)
        guard answer.status == 201 else { return nil }
        return (try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])?["id"] as? String
    }
}

/// A write-ahead log's header, read as SQLite's file format describes it.
enum WALHeader {
    /// The header's two salts (bytes 16 to 23), new each time the log restarts from its start; nil while the log
    /// has no header.
    static func salt(of path: String) -> Data? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 32), header.count == 32 else { return nil }
        return header.subdata(in: 16..<24)
    }
}

/// An import file of registrations in `herald import`'s default format (jsonl), device ids `<name>-<line>`.
enum ImportFile {
    static func write(in directory: TemporaryDirectory, name: String, count: Int) throws -> String {
        let path = directory.file("\(name).jsonl")
        let prefix = String(name.utf8.map { String(format: "%02x", $0) }.joined().prefix(8))
        var text = ""
        text.reserveCapacity(count * 120)
        for line in 0..<count {
            let token = prefix + String(repeating: "0", count: 56 - prefix.count) + String(format: "%08x", line)
            text += #"{"platform":"ios","token":"\#(token)","device_id":"\#(name)-\#(line)"}"# + "\n"
        }
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }
}

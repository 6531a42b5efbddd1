import Foundation
import HeraldTestSupport
import Testing

/// Power loss in a loop, under mixed traffic: the crash loop's runs (``CrashLoop``) with the database on a
/// LazyFS mount (``LazyFSMount``), where `kill -9` is followed by dropping every byte that was not synced —
/// what a power cut or a kernel crash loses, and what a `kill -9` alone never does (the page cache survives a
/// process). The server is killed first and the cache dropped after, so nothing writes after the hole.
///
/// What holds after each loss, checked as the crash loop checks it: the database opens (`integrity_check` ok)
/// and Herald starts without a manual step; every send, registration and broadcast answered `2xx` is there and
/// finishes; devices get a notification twice only within the bound below; the ledger, counts and
/// installations agree. Webhooks too, checked as the crash loop checks them: every event whose fact survived
/// arrives at least once, none arrives for a fact the loss undid, and in particular each event the receiver got
/// before the loss (counted apart) is of a fact in the recovered database — an event is claimed by a synced write,
/// so a receiver is told only what is durable (docs/webhooks.md, "Durable before it is sent"). The unsafe run
/// (`sqlite.synchronous: normal`, documented as not surviving a power loss) must lose at least one acknowledged
/// write (up to three losses at accept, stopping at the first that loses one): a test that cannot tell the two
/// settings apart proves nothing; its events are counted, not checked.
///
/// `HERALD_POWER_RUNS` sets the runs of the durable test (default 2: a kill point each, from a point drawn for
/// the process; by hand e.g. `HERALD_POWER_RUNS=200`), `HERALD_CRASH_SEED` and `HERALD_CRASH_POINT` replay one as
/// in the crash loop.
@Suite("herald keeps what it acknowledged through a power loss (LazyFS), under mixed traffic", .serialized)
struct PowerLossTests {
    @Test("SQLite, synchronous full: power loss at accept, fan-out or commit, restart: nothing acknowledged lost")
    func sqlite() async throws {
        try await CrashLoop.run(
            store: .sqlite, defaultRuns: 2, firstPoint: 1, powerLoss: .durable, runsVariable: "HERALD_POWER_RUNS")
    }

    @Test("SQLite, synchronous normal: a power loss loses acknowledged writes (the durable test can fail)")
    func sqliteNormalLoses() async throws {
        try await CrashLoop.run(
            store: .sqlite, defaultRuns: 3, firstPoint: 0, powerLoss: .unsafe, runsVariable: "HERALD_POWER_UNSAFE_RUNS"
        )
    }

    @Test("PostgreSQL, synchronous_commit on: a power loss of the database server, restart: nothing acknowledged lost")
    func postgres() async throws {
        try await CrashLoop.run(
            store: .postgres, defaultRuns: 1, firstPoint: 2, powerLoss: .durable,
            runsVariable: "HERALD_POWER_POSTGRES_RUNS")
    }

    @Test("PostgreSQL, synchronous_commit off: a power loss loses acknowledged writes (the durable test can fail)")
    func postgresAsyncLoses() async throws {
        try await CrashLoop.run(
            store: .postgres, defaultRuns: 3, firstPoint: 1, powerLoss: .unsafe,
            runsVariable: "HERALD_POWER_POSTGRES_UNSAFE_RUNS")
    }
}

/// The PostgreSQL cluster whose data directory is on LazyFS (`HERALD_PG_PROFILE=powerloss scripts/postgres`,
/// which `scripts/test` starts), and the command that makes a power loss of it.
enum PostgresPowerLoss {
    /// A new database on that cluster; `synchronousCommit` false turns the setting off for it (the unsafe run).
    static func database(synchronousCommit: Bool) async throws -> PostgresTestDatabase {
        let environment = ProcessInfo.processInfo.environment
        let server = try #require(
            environment["HERALD_TEST_POSTGRES_POWERLOSS"].flatMap { $0.isEmpty ? nil : $0 },
            "HERALD_TEST_POSTGRES_POWERLOSS is unset: scripts/test sets it (HERALD_PG_PROFILE=powerloss scripts/postgres)"
        )
        let database = try await PostgresTestDatabase.create(server: server)
        if !synchronousCommit {
            try await database.administer("ALTER DATABASE \(database.name) SET synchronous_commit = off")
        }
        return database
    }

    /// Stops the server at once, drops every byte it did not sync, and starts it again (it recovers from its log).
    static func crash() async throws {
        let command = try #require(
            ProcessInfo.processInfo.environment["HERALD_TEST_POSTGRES_CRASH"].flatMap { $0.isEmpty ? nil : $0 },
            "HERALD_TEST_POSTGRES_CRASH is unset: scripts/test sets it")
        let (status, _, errors) = try await ScriptProcess.run(command.split(separator: " ").map(String.init))
        try #require(status == 0, "\(command): \(errors)")
    }
}

/// How a run's database meets a power loss.
enum PowerLoss: String {
    /// `sqlite.synchronous: full` (the default), PostgreSQL `synchronous_commit = on`: nothing acknowledged may
    /// be lost.
    case durable
    /// `sqlite.synchronous: normal`, PostgreSQL `synchronous_commit = off`: acknowledged writes must be lost, or
    /// the test could not tell.
    case unsafe

    var synchronous: String { self == .durable ? "full" : "normal" }
}

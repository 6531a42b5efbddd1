import HeraldCore
import HeraldSQLite
import HeraldServer
import HeraldStoreConformance
import HeraldTestSupport
import Testing

/// The store conformance suite against the embedded SQLite store: each case gets a new database file.
@Suite("Store conformance: SQLite")
struct StoreConformanceSQLiteTests {
    static let factory = StoreFactory(name: "sqlite") {
        let directory = try TemporaryDirectory()
        let store = try SQLiteStore(path: directory.file("herald.sqlite"), cipher: Fixtures.cipher())
        try await store.migrate()
        return (store, { directory.remove() })
    }

    @Test(arguments: StoreConformance.cases)
    func conformance(_ conformanceCase: StoreConformanceCase) async throws {
        try await Self.factory.run(conformanceCase)
    }

    /// The dialects' records: `HeraldServer` declares that `SQLiteStore` conforms to their store protocols.
    @Test(arguments: StoreConformance.dialectCases)
    func dialectConformance(_ conformanceCase: StoreConformanceCase) async throws {
        try await Self.factory.run(conformanceCase)
    }
}

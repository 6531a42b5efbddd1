import HeraldCore
import HeraldPostgres
import HeraldServer
import HeraldStoreConformance
import HeraldTestSupport
import Testing

/// The store conformance suite against PostgreSQL: each case gets a new database on the test cluster, a copy of
/// one migrated once (the migration itself is tested in ``PostgresStoreTests``).
@Suite("Store conformance: PostgreSQL")
struct StoreConformancePostgresTests {
    static let factory = StoreFactory(name: "postgres") {
        let database = try await PostgresTestDatabase.create { url in
            let store = try PostgresStore.started(url: url, cipher: Fixtures.cipher())
            do { try await store.migrate() } catch {
                await store.close()
                throw error
            }
            await store.close()
        }
        let store = try PostgresStore.started(url: database.url, cipher: Fixtures.cipher())
        try await store.migrate()
        return (
            store,
            {
                await store.close()
                try await database.drop()
            }
        )
    }

    @Test(arguments: StoreConformance.cases)
    func conformance(_ conformanceCase: StoreConformanceCase) async throws {
        try await Self.factory.run(conformanceCase)
    }

    /// The dialects' records: `HeraldServer` declares that `PostgresStore` conforms to their store protocols.
    @Test(arguments: StoreConformance.dialectCases)
    func dialectConformance(_ conformanceCase: StoreConformanceCase) async throws {
        try await Self.factory.run(conformanceCase)
    }
}

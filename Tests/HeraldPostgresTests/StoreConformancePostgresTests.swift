import HeraldCore
import HeraldPostgres
import HeraldTestSupport
import Testing

/// The store conformance suite against PostgreSQL: each case gets a new database on the test cluster.
@Suite("Store conformance: PostgreSQL")
struct StoreConformancePostgresTests {
    static let factory = StoreFactory(name: "postgres") {
        let database = try await PostgresTestDatabase.create()
        let store = try PostgresStore(url: database.url, cipher: Fixtures.cipher())
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
}

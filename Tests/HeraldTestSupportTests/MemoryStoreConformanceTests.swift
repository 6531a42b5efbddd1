import HeraldCore
import HeraldStoreConformance
import HeraldTestSupport
import Testing

/// The engine's cases of the store conformance suite against the in-memory store the engine's unit
/// tests run on: it must do what the SQL stores do with every method of the engine's contract.
@Suite("Store conformance: memory")
struct MemoryStoreConformanceTests {
    @Test(arguments: EngineConformance.cases)
    func conformance(_ conformanceCase: EngineConformanceCase) async throws {
        try await conformanceCase.run(MemoryStore())
    }
}

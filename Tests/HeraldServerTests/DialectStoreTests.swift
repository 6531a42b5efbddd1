import Configuration
import Foundation
import HeraldAPI
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import Hummingbird
import Testing

/// A dialect's own records: the store keeps them (it conforms to the store protocol the dialect
/// declares), or the application is refused when it is built, never a request.
@Suite("Dialect stores: a store without a dialect's records is refused when the application is built")
struct DialectStoreTests {
    @Test("a store without a dialect's records refuses the application when it is built, naming both")
    func refused() async throws {
        let harness = try await ServerHarness()
        let clock = harness.clock
        let error = #expect(throws: DialectStoreMissing.self) {
            try HeraldApplication.router(
                configuration: harness.configuration, store: harness.store, apps: harness.apps,
                dispatcher: harness.dispatcher, dialects: HeraldApplication.dialects + [UnkeptRecordsDialect.self],
                now: { clock.date })
        }
        #expect(error?.dialect == "Unkept")
        #expect(error?.store == "SQLiteStore")
        #expect(error?.records.contains("UnkeptRecords") == true)
        #expect(
            error?.description.hasPrefix("The store (SQLiteStore) does not keep the records of the Unkept dialect")
                == true)
    }
}

/// Records no store keeps.
protocol UnkeptRecords: Sendable {}

/// A dialect whose records no store keeps: it asks for them as every dialect with records does.
struct UnkeptRecordsDialect: Dialect {
    static let settingsKey = "unkept"
    static let name = "Unkept"
    static let settingsTitle = "Unkept dialect"
    static let declaredSettings: [any DeclaredSetting] = []
    static let routesSummary = "none"

    static func settings(appID: String, reader: ConfigReader) throws -> Bool { false }

    static func status(_ settings: Bool?) -> (enabled: Bool, detail: String) { (false, "") }

    let store: any HeraldStore & UnkeptRecords

    init(context: DialectContext, settings: [String: Bool]) throws {
        store = try context.store((any HeraldStore & UnkeptRecords).self, for: Self.self)
    }

    func register(on router: Router<HeraldRequestContext>, table: inout RouteTable) {
        Issue.record("a dialect whose records the store does not keep was mounted")
    }
}

import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// Makes a fresh, migrated, empty store for one conformance case, and removes it afterwards.
public struct StoreFactory: Sendable {
    /// What a factory hands a case: the store, and how to dispose of it.
    public typealias Made = (store: any HeraldStore, tearDown: @Sendable () async throws -> Void)

    /// The store's name in test output (`sqlite`, `postgres`).
    public var name: String
    /// Opens a new empty store with every migration applied.
    public var make: @Sendable () async throws -> Made

    /// Creates a factory.
    public init(name: String, make: @escaping @Sendable () async throws -> Made) {
        self.name = name
        self.make = make
    }

    /// Runs one case against a new store of this factory, tearing the store down afterwards
    /// whether the case passed or threw.
    /// - Throws: What the case, the factory or the tear-down throws.
    public func run(_ conformanceCase: StoreConformanceCase) async throws {
        let (store, tearDown) = try await make()
        do {
            try await conformanceCase.run(store)
        } catch {
            try? await tearDown()
            throw error
        }
        try await tearDown()
    }
}

/// One behaviour every store must have, checked with `#expect`/`#require` against a fresh store.
public struct StoreConformanceCase: Sendable, CustomTestStringConvertible {
    /// The concern the case belongs to and the behaviour it checks (`registry: …`).
    public let name: String
    private let body: @Sendable (any HeraldStore) async throws -> Void

    /// Creates a case.
    public init(_ name: String, _ body: @escaping @Sendable (any HeraldStore) async throws -> Void) {
        self.name = name
        self.body = body
    }

    /// Checks the behaviour against `store`, which is new, migrated and empty.
    /// - Throws: What the store throws, or a failed `#require`.
    public func run(_ store: any HeraldStore) async throws {
        try await body(store)
    }

    public var testDescription: String { name }
}

/// The store conformance suite: what every implementation of the store protocols must do alike
/// (the embedded SQLite store and PostgreSQL), written once against ``HeraldStore``. A store's
/// test target runs every case with a fresh store from its ``StoreFactory``:
///
/// ```swift
/// @Test(arguments: StoreConformance.cases)
/// func conformance(_ c: StoreConformanceCase) async throws { try await factory.run(c) }
/// ```
///
/// The cases of the engine's contract (``EngineConformance``) are among them, and run against the
/// in-memory store too. Store-specific behaviour (SQLite's WAL, its bulk-load checkpoint, job
/// recovery at start) is tested beside each store, not here.
public enum StoreConformance {
    /// Every case, grouped by concern: the engine's contract's and those of the rest of the store.
    public static let cases: [StoreConformanceCase] =
        EngineConformance.cases.map(StoreConformanceCase.init)
        + registry + cleanup + consoleSessions + ledger + opens + events + insights + ranges + QueryCases.cases
        + ListingCases.cases + webhooks + liveActivities + templates
}

/// The cases of the engine's contract (``EngineStore``): what the engine relies on of a store, and
/// so what the in-memory store its unit tests run on (``MemoryStore``) must do as the SQL stores
/// do. The SQL stores run them among ``StoreConformance/cases``; the memory store runs them alone:
///
/// ```swift
/// @Test(arguments: EngineConformance.cases)
/// func conformance(_ c: EngineConformanceCase) async throws { try await c.run(MemoryStore()) }
/// ```
public enum EngineConformance {
    /// Every case of the engine's contract, grouped by concern.
    public static let cases: [EngineConformanceCase] =
        StoreConformance.engineRegistry + StoreConformance.engineCleanup + StoreConformance.jobQueue
        + StoreConformance.engineLedger + StoreConformance.clusterState + StoreConformance.engineRanges
}

/// What a case of the engine's contract does through the API's side of a store: arranges what the
/// API writes before a send, and reads what the engine wrote that only the API reads.
public protocol EngineCaseAPI: Sendable {
    /// Replaces an installation's preferences, as the preferences API does; false when the
    /// installation does not exist.
    func setPreferences(appID: String, installationID: String, preferences: Preferences, now: Date) async throws -> Bool

    /// A notification's whole ledger in order of record, as the API lists its deliveries.
    func ledger(notificationID: String) async throws -> [DeliveryRecord]
}

/// One behaviour of the engine's contract every store must have, checked against a fresh store.
public struct EngineConformanceCase: Sendable, CustomTestStringConvertible {
    /// The concern the case belongs to and the behaviour it checks (`jobs: …`).
    public let name: String
    private let body: @Sendable (any EngineStore, any EngineCaseAPI) async throws -> Void

    /// Creates a case that uses the engine's contract alone.
    public init(_ name: String, _ body: @escaping @Sendable (any EngineStore) async throws -> Void) {
        self.name = name
        self.body = { store, _ in try await body(store) }
    }

    /// Creates a case that also arranges or reads through the API's side (``EngineCaseAPI``).
    public init(
        _ name: String, _ body: @escaping @Sendable (any EngineStore, any EngineCaseAPI) async throws -> Void
    ) {
        self.name = name
        self.body = body
    }

    /// Checks the behaviour against `store`, which is new and empty, arranging and reading through `api`.
    /// - Throws: What the store throws, or a failed `#require`.
    public func run(_ store: any EngineStore, api: any EngineCaseAPI) async throws {
        try await body(store, api)
    }

    /// Checks the behaviour against an in-memory store.
    /// - Throws: What the store throws, or a failed `#require`.
    public func run(_ store: MemoryStore) async throws {
        try await body(store, store)
    }

    public var testDescription: String { name }
}

extension StoreConformanceCase {
    /// A case of the engine's contract, run against a whole store (its API's side through the store itself).
    public init(_ engineCase: EngineConformanceCase) {
        self.init(engineCase.name) { store in try await engineCase.run(store, api: WholeStoreAPI(store: store)) }
    }
}

/// The API's side of a whole store, for the engine's cases.
private struct WholeStoreAPI: EngineCaseAPI {
    let store: any HeraldStore

    func setPreferences(appID: String, installationID: String, preferences: Preferences, now: Date) async throws -> Bool
    {
        try await store.setPreferences(appID: appID, installationID: installationID, preferences: preferences, now: now)
    }

    func ledger(notificationID: String) async throws -> [DeliveryRecord] {
        var records: [DeliveryRecord] = []
        var after: String?
        while true {
            let page = try await store.deliveries(
                notificationID: notificationID, outcome: nil, page: .init(after: after, limit: PageRequest.maxLimit))
            records += page.map(\.record)
            guard page.count == PageRequest.maxLimit, let last = page.last else { return records }
            after = String(last.sequence)
        }
    }
}

/// The memory store's own ledger and preferences are the API's side its engine cases use.
extension MemoryStore: EngineCaseAPI {}

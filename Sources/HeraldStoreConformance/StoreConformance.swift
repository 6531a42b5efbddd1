import Foundation
import HeraldCore
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
/// Store-specific behaviour (SQLite's WAL, its bulk-load checkpoint, job recovery at start) is
/// tested beside each store, not here.
public enum StoreConformance {
    /// Every case, grouped by concern.
    public static let cases: [StoreConformanceCase] =
        registry + cleanup + consoleSessions + jobQueue + ledger + opens + clusterState + events + insights + ranges
        + QueryCases.cases + ListingCases.cases
}

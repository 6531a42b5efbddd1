import Foundation
import HeraldCore
import Testing

/// The dialects' own records: each dialect with records of its own declares their store protocol
/// in its module (docs/architecture.md, "Adding a dialect"), and every store Herald ships runs
/// these cases beside ``cases``, written once against the dialect's protocol.
extension StoreConformance {
    /// Every case of a dialect's records, by dialect.
    public static let dialectCases: [StoreConformanceCase] = snsAPI + relayUsage + leanCloudUsers + pushEndpoints
}

extension StoreConformanceCase {
    /// A case of a dialect's records: it takes the store as `Records` (``HeraldStore`` with the
    /// dialect's store protocol, `(any HeraldStore & SNSAPIStore).self`), and fails when the store
    /// does not conform to it.
    init<Records: Sendable>(
        _ name: String, keeping records: Records.Type, _ body: @escaping @Sendable (Records) async throws -> Void
    ) {
        self.init(name) { store in
            let typed = try #require(store as? Records, "\(type(of: store)) does not keep them: it is not \(records)")
            try await body(typed)
        }
    }
}

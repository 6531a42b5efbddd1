import Foundation

/// State that every node sharing a store must see alike: rate-limit buckets and provider-wide
/// pauses. On one node (SQLite) it is simply durable; on several (PostgreSQL) it is what keeps
/// one node from allowing what another already spent.
public protocol ClusterState: Sendable {
    /// Spends one token of the shared bucket `key` (`capacity` requests per `interval` seconds,
    /// as ``TokenBucketLimiter`` counts them), atomically across nodes.
    func acquireToken(
        bucket key: String, capacity: Int, per interval: TimeInterval, now: Date
    ) async throws -> TokenBucketLimiter.Decision

    /// Pauses a provider for an app until `until` (a later pause wins), for every node.
    func pauseProvider(appID: String, service: PushService, until: Date) async throws

    /// The provider pauses still running at `now`.
    func providerPauses(now: Date) async throws -> [ProviderPause]
}

/// A provider paused for one app after it answered with a provider-wide `Retry-After`.
public struct ProviderPause: Sendable, Equatable, Hashable {
    public var appID: String
    public var service: PushService
    public var until: Date

    /// Creates a pause record.
    public init(appID: String, service: PushService, until: Date) {
        self.appID = appID
        self.service = service
        self.until = until
    }
}

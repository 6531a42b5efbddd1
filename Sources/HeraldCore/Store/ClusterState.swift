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

    /// Pauses a provider for an app until `until` (a later pause wins), for every node: all of it
    /// (`scope` empty), or one push service of it (`scope` a Web Push origin, ``PushToken/pauseScope``).
    func pauseProvider(appID: String, service: PushService, scope: String, until: Date) async throws

    /// The provider pauses still running at `now`.
    func providerPauses(now: Date) async throws -> [ProviderPause]
}

extension ClusterState {
    /// Pauses all of a provider for an app (a provider-wide `Retry-After`, or APNs or FCM unreachable).
    public func pauseProvider(appID: String, service: PushService, until: Date) async throws {
        try await pauseProvider(appID: appID, service: service, scope: "", until: until)
    }
}

/// A provider paused for one app: after a provider-wide `Retry-After`, or when it answered nothing.
public struct ProviderPause: Sendable, Equatable, Hashable {
    public var appID: String
    public var service: PushService
    /// Empty for the whole provider; a Web Push origin (`https://fcm.googleapis.com`) when only the
    /// browsers of that push service wait.
    public var scope: String
    public var until: Date

    /// Creates a pause record.
    public init(appID: String, service: PushService, scope: String = "", until: Date) {
        self.appID = appID
        self.service = service
        self.scope = scope
        self.until = until
    }
}

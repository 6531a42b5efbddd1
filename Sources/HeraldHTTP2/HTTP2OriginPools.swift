import HeraldCore
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// HTTP/2 connections to many origins: one ``HTTP2ConnectionPool`` per host and port, opened on
/// first use with the same settings. Web Push endpoints live on one host per browser vendor (and a
/// self-hosted push service anywhere), so a Web Push transport cannot name its host up front.
///
/// At most `maxOrigins` pools are kept: using a new origin beyond that closes the one used least
/// recently, so endpoints on arbitrary hosts cannot grow the client without bound; and a pool not
/// used for `idleTimeout` is closed at the next request to any origin.
public final class HTTP2OriginPools: Sendable {
    /// Where requests go: a host and port reached over TLS.
    public struct Origin: Hashable, Sendable, CustomStringConvertible {
        public var host: String
        public var port: Int

        /// Creates an origin.
        public init(host: String, port: Int = 443) {
            self.host = host
            self.port = port
        }

        public var description: String { "\(host):\(port)" }
    }

    private struct State {
        var pools: [Origin: (pool: HTTP2ConnectionPool, lastUse: UInt64, usedAt: ContinuousClock.Instant)] = [:]
        var uses: UInt64 = 0
        var isShutdown = false
    }

    private let template: HTTP2PoolConfiguration
    private let maxOrigins: Int
    private let idleTimeout: Duration
    private let now: @Sendable () -> ContinuousClock.Instant
    private let group: any EventLoopGroup
    private let logger: Logger
    private let state = Mutex(State())

    /// Creates the pools.
    /// - Parameters:
    ///   - configuration: The settings of every origin's pool; its `host` and `port` are replaced by the origin's.
    ///   - maxOrigins: How many origins' pools are kept open at once.
    ///   - idleTimeout: How long an origin's pool stays open unused.
    ///   - now: The clock idleness is measured by (tests move it instead of waiting).
    public init(
        configuration: HTTP2PoolConfiguration, maxOrigins: Int = 64, idleTimeout: Duration = .seconds(300),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "herald.http2"),
        now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        self.now = now
        self.template = configuration
        self.maxOrigins = max(1, maxOrigins)
        self.idleTimeout = idleTimeout
        self.group = eventLoopGroup
        self.logger = logger
    }

    /// Origins with an open pool now.
    public var origins: Set<Origin> { state.withLock { Set($0.pools.keys) } }

    /// Every origin's pool's use, summed.
    public var statistics: ConnectionPoolStatistics {
        let pools = state.withLock { $0.pools.values.map(\.pool) }
        return pools.reduce(ConnectionPoolStatistics()) { $0 + $1.statistics }
    }

    /// Sends a request to an origin and waits for its complete response.
    /// - Throws: `HTTP2ClientError` when it ends without one (`connectFailed` when no pool can be
    ///   made for the origin).
    public func execute(_ request: HTTP2Request, at origin: Origin) async throws -> HTTP2Response {
        let (pool, evicted) = try pool(for: origin)
        for closed in evicted { await closed.shutdown() }
        return try await pool.execute(request)
    }

    /// Sends many requests, each to its origin, and returns every result in order: one batch per origin.
    public func execute(
        batch requests: [(origin: Origin, request: HTTP2Request)]
    ) async -> [Result<HTTP2Response, HTTP2ClientError>] {
        var results = [Result<HTTP2Response, HTTP2ClientError>?](repeating: nil, count: requests.count)
        let byOrigin = Dictionary(grouping: requests.indices, by: { requests[$0].origin })
        await withTaskGroup(of: [(Int, Result<HTTP2Response, HTTP2ClientError>)].self) { group in
            for (origin, indices) in byOrigin {
                group.addTask {
                    let made: (pool: HTTP2ConnectionPool, evicted: [HTTP2ConnectionPool])
                    do throws(HTTP2ClientError) {
                        made = try self.pool(for: origin)
                    } catch {
                        return indices.map { ($0, .failure(error)) }
                    }
                    for closed in made.evicted { await closed.shutdown() }
                    let pool = made.pool
                    let answers = await pool.execute(batch: indices.map { requests[$0].request })
                    return zip(indices, answers).map { ($0, $1) }
                }
            }
            for await batch in group { for (index, result) in batch { results[index] = result } }
        }
        return results.map { $0 ?? .failure(.shutdown) }
    }

    /// Closes every origin's connections; later requests fail with `shutdown`.
    public func shutdown() async {
        let pools = state.withLock { state in
            state.isShutdown = true
            defer { state.pools.removeAll() }
            return state.pools.values.map(\.pool)
        }
        for pool in pools { await pool.shutdown() }
    }

    /// The origin's pool, made on first use, and the pools it displaced — idle ones, and the least
    /// recently used when the limit was reached — for the caller to shut down.
    private func pool(
        for origin: Origin
    ) throws(HTTP2ClientError) -> (pool: HTTP2ConnectionPool, evicted: [HTTP2ConnectionPool]) {
        let now = self.now()
        let result: Result<(HTTP2ConnectionPool, [HTTP2ConnectionPool]), HTTP2ClientError> = state.withLock { state in
            guard !state.isShutdown else { return .failure(.shutdown) }
            state.uses += 1
            var evicted: [HTTP2ConnectionPool] = []
            for (idle, entry) in state.pools where idle != origin && now - entry.usedAt >= idleTimeout {
                evicted.append(entry.pool)
                state.pools.removeValue(forKey: idle)
            }
            if let entry = state.pools[origin] {
                state.pools[origin] = (entry.pool, state.uses, now)
                return .success((entry.pool, evicted))
            }
            var configuration = template
            configuration.host = origin.host
            configuration.port = origin.port
            let pool: HTTP2ConnectionPool
            do {
                pool = try HTTP2ConnectionPool(configuration: configuration, eventLoopGroup: group, logger: logger)
            } catch {
                return .failure(.connectFailed("TLS settings for \(origin): \(error)"))
            }
            if state.pools.count >= maxOrigins,
                let oldest = state.pools.min(by: { $0.value.lastUse < $1.value.lastUse })?.key,
                let displaced = state.pools.removeValue(forKey: oldest)?.pool
            {
                evicted.append(displaced)
            }
            state.pools[origin] = (pool, state.uses, now)
            return .success((pool, evicted))
        }
        return try result.get()
    }
}

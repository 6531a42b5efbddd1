import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldHTTP2
import Logging
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOPosix

/// A Web Push client (RFC 8030) for an application server: it encrypts each payload for its
/// subscription (RFC 8291), signs with VAPID (RFC 8292), POSTs to the subscription's endpoint and
/// maps the answer to a ``DeliveryOutcome``.
///
/// Push services are many origins. Each origin's HTTP version is learnt from the TLS handshake of its
/// first connection (ALPN offers `h2`, then `http/1.1`) and remembered: origins that speak `h2` go
/// through Herald's HTTP/2 pool (``HTTP2OriginPools``, one pool per origin, least recently used
/// origins closed past a limit); an origin that chose `http/1.1` gets the same requests again, and
/// every later one, through AsyncHTTPClient over HTTP/1.1.
public final class WebPushClient: Sendable {
    private let pools: HTTP2OriginPools
    private let http1: HTTPClient
    private let versions: OriginHTTPVersions
    private let requestTimeout: TimeAmount
    private let logger: Logger
    private let now: @Sendable () -> Date
    /// The VAPID tokens, one per origin.
    public let tokens: VAPIDTokenCache

    /// Creates a client; connections open on first use.
    /// - Parameter now: The wall clock, for VAPID expiry and `Retry-After` dates (tests inject one).
    /// - Throws: NIOSSL errors for an unusable TLS configuration.
    public init(
        configuration: Configuration, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "herald.webpush"), now: @escaping @Sendable () -> Date = Date.init
    ) throws {
        let tls = configuration.tls
        var poolConfiguration = HTTP2PoolConfiguration(
            host: "", tls: tls, connections: configuration.connectionsPerOrigin,
            connectTimeout: configuration.connectTimeout, requestTimeout: configuration.requestTimeout)
        poolConfiguration.requestDuration = configuration.requestDuration
        poolConfiguration.offersHTTP1 = true
        pools = HTTP2OriginPools(
            configuration: poolConfiguration,
            maxOrigins: configuration.maxOrigins, eventLoopGroup: eventLoopGroup, logger: logger)
        var http1Configuration = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .disallow,
            timeout: .init(connect: configuration.connectTimeout, read: configuration.requestTimeout))
        http1Configuration.httpVersion = .http1Only
        http1 = HTTPClient(
            eventLoopGroup: eventLoopGroup, configuration: http1Configuration, backgroundActivityLogger: logger)
        versions = OriginHTTPVersions(limit: configuration.maxOrigins * 16)
        tokens = try VAPIDTokenCache(key: configuration.vapidKey, subject: configuration.subject, now: now)
        requestTimeout = configuration.requestTimeout
        self.logger = logger
        self.now = now
    }

    /// Sends one notification.
    /// - Throws: `WebPushError` when the notification is invalid (nothing is sent).
    public func send(_ notification: WebPushNotification) async throws(WebPushError) -> WebPushResponse {
        let request = try WebPushRequest(notification)
        return await send(prepared: [(0, request)])[0].1
    }

    /// Sends many notifications at once, each to its endpoint, and returns each one's result in
    /// order: one VAPID token and one pool batch per origin. An invalid notification gets its
    /// `WebPushError` and is not sent.
    public func send(batch notifications: [WebPushNotification]) async -> [Result<WebPushResponse, WebPushError>] {
        var results = [Result<WebPushResponse, WebPushError>?](repeating: nil, count: notifications.count)
        var prepared: [(Int, WebPushRequest)] = []
        prepared.reserveCapacity(notifications.count)
        for (index, notification) in notifications.enumerated() {
            do {
                prepared.append((index, try WebPushRequest(notification)))
            } catch {
                results[index] = .failure(error)
            }
        }
        for (index, response) in await send(prepared: prepared) { results[index] = .success(response) }
        return results.map { $0! }
    }

    /// The HTTP version learnt for an endpoint's origin; nil before the first push to it.
    public func httpVersion(forEndpoint endpoint: String) -> WebPushHTTPVersion? {
        (try? WebPushEndpoint(endpoint)).flatMap { versions[$0.origin] }
    }

    /// The connection pool's use now (HTTP/2 origins only for Web Push).
    public var poolStatistics: ConnectionPoolStatistics { pools.statistics }

    /// Closes every connection.
    public func shutdown() async {
        await pools.shutdown()
        try? await http1.shutdown()
    }

    private func send(prepared: [(Int, WebPushRequest)]) async -> [(Int, WebPushResponse)] {
        let byOrigin = Dictionary(grouping: prepared, by: { $0.1.endpoint.origin })
        return await withTaskGroup(of: [(Int, WebPushResponse)].self) { group in
            for (origin, entries) in byOrigin {
                group.addTask { await self.send(entries, to: origin) }
            }
            var all: [(Int, WebPushResponse)] = []
            all.reserveCapacity(prepared.count)
            for await answers in group { all.append(contentsOf: answers) }
            return all
        }
    }

    /// Sends requests that share an origin: one token, one version lookup, one pool batch.
    private func send(
        _ entries: [(Int, WebPushRequest)], to origin: HTTP2OriginPools.Origin
    ) async -> [(Int, WebPushResponse)] {
        func all(_ response: WebPushResponse) -> [(Int, WebPushResponse)] { entries.map { ($0.0, response) } }
        guard let audience = entries.first?.1.origin else { return [] }
        let authorization: String
        do {
            authorization = try await tokens.authorization(for: audience)
        } catch {
            return all(
                WebPushResponse(status: 0, outcome: .configurationFailure(reason: "VAPID signing failed: \(error)")))
        }
        let known = versions[origin]
        if known == .http1 { return await sendHTTP1(entries, authorization: authorization) }
        // HTTP/2 first: the pool's handshake tells an origin that speaks only HTTP/1.1.
        let (answers, refused) = await sendHTTP2(entries, to: origin, authorization: authorization)
        if refused {
            learn(.http1, for: origin)
            return await sendHTTP1(entries, authorization: authorization)
        }
        if known == nil, answers.contains(where: { $0.1.status != 0 }) { learn(.http2, for: origin) }
        return answers
    }

    private func learn(_ version: WebPushHTTPVersion, for origin: HTTP2OriginPools.Origin) {
        versions.remember(version, for: origin)
        logger.debug(
            "push service origin's HTTP version learnt",
            metadata: ["herald.origin": "\(origin)", "herald.http": "\(version)"])
    }

    /// Sends over the origin's HTTP/2 pool.
    /// - Returns: The answers, and whether the origin refused HTTP/2 (its handshake chose
    ///   `http/1.1`): then nothing was sent.
    private func sendHTTP2(
        _ entries: [(Int, WebPushRequest)], to origin: HTTP2OriginPools.Origin, authorization: String
    ) async -> (answers: [(Int, WebPushResponse)], refused: Bool) {
        let requests = entries.map { _, request in
            var headers = HPACKHeaders(request.headers(authorization: authorization))
            headers.add(name: "content-length", value: String(request.body.count))
            return (
                origin: origin,
                request: HTTP2Request(
                    path: request.endpoint.path, headerBlock: headers, body: ByteBuffer(bytes: request.body))
            )
        }
        let answers = await pools.execute(batch: requests)
        let refused = answers.contains {
            if case .failure(let error) = $0, error.isNotHTTP2 { return true }
            return false
        }
        let time = now()
        let responses = zip(entries, answers).map { entry, answer in
            switch answer {
            case .success(let response):
                (
                    entry.0,
                    Self.decode(
                        status: response.status, location: response.headers.first(name: "location"),
                        retryAfter: response.headers.first(name: "retry-after"),
                        body: response.body.readableBytesView, version: .http2, now: time)
                )
            case .failure(let error):
                (
                    entry.0,
                    WebPushResponse(status: 0, httpVersion: .http2, outcome: .retry(reason: "\(error)", after: nil))
                )
            }
        }
        return (responses, refused)
    }

    private func sendHTTP1(
        _ entries: [(Int, WebPushRequest)], authorization: String
    ) async -> [(Int, WebPushResponse)] {
        await withTaskGroup(of: (Int, WebPushResponse).self) { group in
            for (index, request) in entries {
                group.addTask { (index, await self.sendHTTP1(request, authorization: authorization)) }
            }
            var answers: [(Int, WebPushResponse)] = []
            for await answer in group { answers.append(answer) }
            return answers
        }
    }

    private func sendHTTP1(_ request: WebPushRequest, authorization: String) async -> WebPushResponse {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = .POST
        for (name, value) in request.headers(authorization: authorization) {
            outgoing.headers.add(name: name, value: value)
        }
        outgoing.body = .bytes(ByteBuffer(bytes: request.body))
        do {
            let response = try await http1.execute(outgoing, timeout: requestTimeout, logger: logger)
            let body = try await response.body.collect(upTo: 64 * 1024)
            return Self.decode(
                status: Int(response.status.code), location: response.headers.first(name: "location"),
                retryAfter: response.headers.first(name: "retry-after"), body: body.readableBytesView,
                version: .http1, now: now())
        } catch {
            return WebPushResponse(status: 0, httpVersion: .http1, outcome: .retry(reason: "\(error)", after: nil))
        }
    }

    static func decode(
        status: Int, location: String?, retryAfter: String?, body: some Collection<UInt8>,
        version: WebPushHTTPVersion, now: Date
    ) -> WebPushResponse {
        let success = (200..<300).contains(status)
        let reason = success ? nil : WebPushResponseClassifier.reason(fromBody: body)
        return WebPushResponse(
            status: status, location: success ? location : nil, reason: reason, httpVersion: version,
            outcome: WebPushResponseClassifier.outcome(
                status: status, location: location, reason: reason,
                retryAfter: WebPushResponseClassifier.retryAfter(retryAfter, now: now)))
    }
}

import Foundation
import HeraldCore
import HeraldHTTP2
import Logging
import NIOCore
import NIOHPACK
import NIOPosix

/// What APNs answered to one notification.
public struct APNsResponse: Sendable, Equatable {
    /// HTTP status; 0 when no answer arrived (connection error or timeout).
    public var status: Int
    public var apnsID: String?
    public var reason: APNsReason?
    /// The 410 body's `timestamp`, milliseconds since 1970.
    public var timestamp: Int64?
    /// The single outcome the engine acts on.
    public var outcome: DeliveryOutcome
}

/// An APNs client on Herald's HTTP/2 pool: validates a notification, signs it (provider token or
/// client certificate), sends it, and maps the answer to a ``DeliveryOutcome``. An
/// `ExpiredProviderToken` answer renews the token and retries once.
public final class APNsClient: Sendable {
    private let pool: HTTP2ConnectionPool
    private let providerToken: APNsProviderToken?

    /// Creates a client; connections open on first use.
    /// - Throws: NIOSSL errors for an unusable TLS configuration.
    public init(
        configuration: APNsConfiguration, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "herald.apns"), now: @escaping @Sendable () -> Date = Date.init
    ) throws {
        self.pool = try HTTP2ConnectionPool(
            configuration: configuration.poolConfiguration, eventLoopGroup: eventLoopGroup, logger: logger)
        if case .token(let key) = configuration.authentication {
            providerToken = APNsProviderToken(key: key, now: now)
        } else {
            providerToken = nil
        }
    }

    /// The provider token source, when the client uses token authentication.
    public var tokenSource: APNsProviderToken? { providerToken }

    /// Sends one notification.
    /// - Throws: `APNsError` when the notification is invalid (nothing is sent).
    public func send(_ notification: APNsNotification) async throws(APNsError) -> APNsResponse {
        try notification.validate()
        var response = await attempt(notification)
        if response.response.reason == .expiredProviderToken, let providerToken, let used = response.usedAuthorization,
            (try? await providerToken.expired(used)) == true
        {
            response = await attempt(notification)
        }
        return response.response
    }

    /// Sends many notifications at once through the pool (one submission, one wake-up) and returns
    /// each one's result in order; an invalid notification gets its `APNsError` and is not sent.
    /// Notifications refused with `ExpiredProviderToken` are retried once with a renewed token.
    public func send(batch notifications: [APNsNotification]) async -> [Result<APNsResponse, APNsError>] {
        var results = [Result<APNsResponse, APNsError>?](repeating: nil, count: notifications.count)
        var valid: [Int] = []
        for (index, notification) in notifications.enumerated() {
            do {
                try notification.validate()
                valid.append(index)
            } catch {
                results[index] = .failure(error)
            }
        }
        var round = await attempt(batch: valid.map { notifications[$0] })
        for (position, index) in valid.enumerated() { results[index] = .success(round.responses[position]) }
        let expired = valid.indices.filter { round.responses[$0].reason == .expiredProviderToken }
        if !expired.isEmpty, let providerToken, let used = round.authorization,
            (try? await providerToken.expired(used)) == true
        {
            round = await attempt(batch: expired.map { notifications[valid[$0]] })
            for (position, slot) in expired.enumerated() { results[valid[slot]] = .success(round.responses[position]) }
        }
        return results.map { $0! }
    }

    /// Sends a Live Activity update or end to every device subscribed to a broadcast channel (iOS 18), on this
    /// client's connections: `POST /4/broadcasts/apps/<bundle ID>` goes to the host of device pushes. An
    /// `ExpiredProviderToken` answer renews the token and retries once.
    /// - Returns: The `apns-request-id` and `apns-unique-id` of APNs' `200`.
    /// - Throws: `APNsChannelError`: `invalidRequest` when the broadcast is invalid (nothing is sent), `rejected`
    ///   with APNs' status and reason (`ChannelNotRegistered` for a channel that does not exist), `noAnswer`,
    ///   `signingFailed`.
    public func send(broadcast: APNsChannelBroadcast) async throws(APNsChannelError) -> APNsChannelBroadcast.Receipt {
        try broadcast.validate()
        let answer = try await APNsChannelExchange(pool: pool, providerToken: providerToken).perform(success: 200) {
            authorization in
            HTTP2Request(
                path: broadcast.path, headerBlock: broadcast.headers(authorization: authorization),
                body: ByteBuffer(bytes: broadcast.payload))
        }
        return APNsChannelBroadcast.Receipt(
            requestID: answer.headers.first(name: "apns-request-id"),
            uniqueID: answer.headers.first(name: "apns-unique-id"))
    }

    /// The connection pool's use now (HTTP/2 origins only for Web Push).
    public var poolStatistics: ConnectionPoolStatistics { pool.statistics }

    /// Closes the connections.
    public func shutdown() async {
        await pool.shutdown()
    }

    private func attempt(_ notification: APNsNotification) async -> (response: APNsResponse, usedAuthorization: String?)
    {
        var authorization: String?
        if let providerToken {
            do {
                authorization = try await providerToken.authorization()
            } catch {
                return (
                    APNsResponse(
                        status: 0, outcome: .configurationFailure(reason: "provider token signing failed: \(error)")),
                    nil
                )
            }
        }
        let request = HTTP2Request(
            path: "/3/device/" + notification.deviceToken,
            headerBlock: notification.headers(authorization: authorization),
            body: ByteBuffer(bytes: notification.payload))
        do {
            let answer = try await pool.execute(request)
            return (Self.decode(answer), authorization)
        } catch {
            return (APNsResponse(status: 0, outcome: .retry(reason: "\(error)", after: nil)), authorization)
        }
    }

    private func attempt(batch: [APNsNotification]) async -> (responses: [APNsResponse], authorization: String?) {
        guard !batch.isEmpty else { return ([], nil) }
        var authorization: String?
        if let providerToken {
            do {
                authorization = try await providerToken.authorization()
            } catch {
                let failure = APNsResponse(
                    status: 0, outcome: .configurationFailure(reason: "provider token signing failed: \(error)"))
                return (Array(repeating: failure, count: batch.count), nil)
            }
        }
        // Neighbours in a batch usually share their headers and often their payload: build each
        // once and let the requests share the storage.
        var requests: [HTTP2Request] = []
        requests.reserveCapacity(batch.count)
        var previous: (notification: APNsNotification, headers: HPACKHeaders, body: ByteBuffer)?
        for notification in batch {
            let headers =
                previous.flatMap { $0.notification.sharesHeaders(with: notification) ? $0.headers : nil }
                ?? notification.headers(authorization: authorization)
            let body =
                previous.flatMap { $0.notification.payload == notification.payload ? $0.body : nil }
                ?? ByteBuffer(bytes: notification.payload)
            requests.append(
                HTTP2Request(path: "/3/device/" + notification.deviceToken, headerBlock: headers, body: body))
            previous = (notification, headers, body)
        }
        let answers = await pool.execute(batch: requests)
        return (
            answers.map { answer in
                switch answer {
                case .success(let response): Self.decode(response)
                case .failure(let error): APNsResponse(status: 0, outcome: .retry(reason: "\(error)", after: nil))
                }
            }, authorization
        )
    }

    static func decode(_ answer: HTTP2Response) -> APNsResponse {
        let apnsID = answer.headers.first(name: "apns-id")
        var reason: APNsReason?
        var timestamp: Int64?
        if answer.status != 200, let object = try? JSONValue.parse(answer.body.readableBytesView).objectValue {
            if case .string(let wire)? = object["reason"] { reason = APNsReason(wire: wire) }
            if case .number(let value)? = object["timestamp"] { timestamp = value.integerValue }
        }
        let retryAfter = answer.headers.first(name: "retry-after").flatMap(Int.init)
        return APNsResponse(
            status: answer.status, apnsID: apnsID, reason: reason, timestamp: timestamp,
            outcome: APNsResponseClassifier.outcome(
                status: answer.status, reason: reason, apnsID: apnsID, timestamp: timestamp, retryAfter: retryAfter))
    }
}

import Foundation
import HeraldCore
import HeraldHTTP2
import Logging
import NIOCore
import NIOHPACK
import NIOPosix

/// A client of APNs' channel management service ("Sending channel management requests to APNs") on Herald's HTTP/2
/// pool: it creates, reads, lists and deletes the broadcast channels an app's Live Activities subscribe to on iOS 18.
/// Broadcasts on a channel go to the APNs host of device pushes, through ``APNsClient/send(broadcast:)``.
///
/// It authenticates as ``APNsClient`` does, with a provider token or a client certificate, from the same
/// ``APNsConfiguration``; the environment chooses the service's own host:
///
/// | environment | host |
/// |---|---|
/// | ``APNsConfiguration/Environment/production`` | `api-manage-broadcast.push.apple.com:2196` |
/// | ``APNsConfiguration/Environment/sandbox`` | `api-manage-broadcast.sandbox.push.apple.com:2195` |
/// | ``APNsConfiguration/Environment/custom(host:port:)`` | that host and port (a mock or a proxy) |
///
/// An app keeps at most 10,000 channels per environment, and channels of one environment do not exist in the other.
/// An `ExpiredProviderToken` answer renews the token and retries once.
public final class APNsChannelClient: Sendable {
    private let exchange: APNsChannelExchange

    /// Creates a client; connections open on first use.
    /// - Throws: NIOSSL errors for an unusable TLS configuration.
    public init(
        configuration: APNsConfiguration, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "herald.apns.channels"), now: @escaping @Sendable () -> Date = Date.init
    ) throws {
        var poolConfiguration = configuration.poolConfiguration
        let origin = Self.origin(of: configuration.environment)
        poolConfiguration.host = origin.host
        poolConfiguration.port = origin.port
        let pool = try HTTP2ConnectionPool(
            configuration: poolConfiguration, eventLoopGroup: eventLoopGroup, logger: logger)
        var providerToken: APNsProviderToken?
        if case .token(let key) = configuration.authentication {
            providerToken = APNsProviderToken(key: key, now: now)
        }
        exchange = APNsChannelExchange(pool: pool, providerToken: providerToken)
    }

    /// The channel management host and port of an environment.
    static func origin(of environment: APNsConfiguration.Environment) -> (host: String, port: Int) {
        switch environment {
        case .production: ("api-manage-broadcast.push.apple.com", 2196)
        case .sandbox: ("api-manage-broadcast.sandbox.push.apple.com", 2195)
        case .custom(let host, let port): (host, port)
        }
    }

    /// Creates a channel for `bundleID`'s Live Activities (`POST /1/apps/<bundle ID>/channels`, answered `201`).
    /// - Parameters:
    ///   - storagePolicy: Whether APNs keeps the latest broadcast for offline devices; it cannot change later.
    ///   - requestID: `apns-request-id`; APNs makes one when nil.
    /// - Returns: The new channel, with the random ID APNs gave it (`apns-channel-id`).
    /// - Throws: `APNsChannelError`: `rejected` with APNs' status and reason (`CannotCreateChannelConfig` once the app
    ///   has 10,000 channels), `invalidRequest`, `noAnswer`, `unexpectedAnswer`, `signingFailed`.
    public func createChannel(
        bundleID: String, storagePolicy: APNsChannel.StoragePolicy, requestID: UUID? = nil
    ) async throws(APNsChannelError) -> APNsChannel {
        try Self.validate(bundleID: bundleID)
        let body = JSONValue.object([
            "message-storage-policy": .number(JSONNumber(storagePolicy.rawValue)),
            "push-type": .string("LiveActivity"),
        ])
        let answer = try await exchange.perform(success: 201) { authorization in
            HTTP2Request(
                method: "POST", path: Self.channelsPath(bundleID),
                headerBlock: Self.headers(authorization: authorization, requestID: requestID, channelID: nil),
                body: ByteBuffer(bytes: body.serialized()))
        }
        guard let id = answer.headers.first(name: "apns-channel-id"), !id.isEmpty else {
            throw .unexpectedAnswer(
                status: answer.status, requestID: answer.headers.first(name: "apns-request-id"),
                "APNs created a channel but sent no apns-channel-id.")
        }
        return APNsChannel(id: id, storagePolicy: storagePolicy)
    }

    /// Reads a channel's configuration (`GET /1/apps/<bundle ID>/channels` with `apns-channel-id`, answered `200`).
    /// - Throws: `APNsChannelError`: `rejected` (`ChannelNotRegistered` for a channel that does not exist, or no
    ///   longer does), `invalidRequest`, `noAnswer`, `unexpectedAnswer`, `signingFailed`.
    public func channel(
        _ channelID: String, bundleID: String, requestID: UUID? = nil
    ) async throws(APNsChannelError) -> APNsChannel {
        try Self.validate(bundleID: bundleID)
        try Self.validate(channelID: channelID)
        let answer = try await exchange.perform(success: 200) { authorization in
            HTTP2Request(
                method: "GET", path: Self.channelsPath(bundleID),
                headerBlock: Self.headers(authorization: authorization, requestID: requestID, channelID: channelID))
        }
        let object = try? JSONValue.parse(answer.body.readableBytesView).objectValue
        guard case .number(let number)? = object?["message-storage-policy"],
            let raw = number.integerValue.flatMap({ Int(exactly: $0) }),
            let policy = APNsChannel.StoragePolicy(rawValue: raw),
            case .string(let pushType)? = object?["push-type"]
        else {
            throw .unexpectedAnswer(
                status: answer.status, requestID: answer.headers.first(name: "apns-request-id"),
                "APNs's channel description is not the documented JSON.")
        }
        return APNsChannel(id: channelID, storagePolicy: policy, pushType: pushType)
    }

    /// The IDs of every channel of `bundleID` (`GET /1/apps/<bundle ID>/all-channels`, answered `200` with
    /// `{"channels": [...]}`).
    /// - Throws: `APNsChannelError`: `rejected`, `invalidRequest`, `noAnswer`, `unexpectedAnswer`, `signingFailed`.
    public func channels(bundleID: String, requestID: UUID? = nil) async throws(APNsChannelError) -> [String] {
        try Self.validate(bundleID: bundleID)
        let answer = try await exchange.perform(success: 200) { authorization in
            HTTP2Request(
                method: "GET", path: "/1/apps/\(bundleID)/all-channels",
                headerBlock: Self.headers(authorization: authorization, requestID: requestID, channelID: nil))
        }
        guard case .array(let values)? = try? JSONValue.parse(answer.body.readableBytesView).objectValue?["channels"]
        else {
            throw .unexpectedAnswer(
                status: answer.status, requestID: answer.headers.first(name: "apns-request-id"),
                "APNs's channel list is not the documented JSON.")
        }
        return values.compactMap { value in
            if case .string(let id) = value { return id }
            return nil
        }
    }

    /// Deletes a channel (`DELETE /1/apps/<bundle ID>/channels` with `apns-channel-id`, answered `204`). It cannot be
    /// undone, and APNs may still deliver broadcasts it stored.
    /// - Throws: `APNsChannelError`: `rejected` (`ChannelNotRegistered` for a channel that does not exist),
    ///   `invalidRequest`, `noAnswer`, `unexpectedAnswer`, `signingFailed`.
    public func deleteChannel(
        _ channelID: String, bundleID: String, requestID: UUID? = nil
    ) async throws(APNsChannelError) {
        try Self.validate(bundleID: bundleID)
        try Self.validate(channelID: channelID)
        _ = try await exchange.perform(success: 204) { authorization in
            HTTP2Request(
                method: "DELETE", path: Self.channelsPath(bundleID),
                headerBlock: Self.headers(authorization: authorization, requestID: requestID, channelID: channelID))
        }
    }

    /// The connection pool's use now.
    public var poolStatistics: ConnectionPoolStatistics { exchange.pool.statistics }

    /// Closes the connections.
    public func shutdown() async {
        await exchange.pool.shutdown()
    }

    private static func channelsPath(_ bundleID: String) -> String {
        "/1/apps/\(bundleID)/channels"
    }

    private static func headers(authorization: String?, requestID: UUID?, channelID: String?) -> HPACKHeaders {
        var headers = HPACKHeaders()
        if let channelID { headers.add(name: "apns-channel-id", value: channelID) }
        if let requestID {
            headers.add(name: "apns-request-id", value: requestID.uuidString.lowercased(), indexing: .nonIndexable)
        }
        if let authorization { headers.add(name: "authorization", value: authorization) }
        return headers
    }

    /// A bundle ID is letters, digits, `.` and `-` (Apple's rule for App IDs), so it goes in a path as it is.
    static func validate(bundleID: String) throws(APNsChannelError) {
        let allowed = bundleID.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == 0x2E || byte == 0x2D
        }
        guard !bundleID.isEmpty, allowed else {
            throw .invalidRequest("\"\(bundleID)\" is not a bundle ID: letters, digits, '.' and '-' only.")
        }
    }

    /// A channel ID is base64 text that APNs handed out; the client checks only that it is one line of text.
    static func validate(channelID: String) throws(APNsChannelError) {
        guard !channelID.isEmpty, !channelID.contains(where: \.isNewline) else {
            throw .invalidRequest("The channel ID is empty or not one line of text.")
        }
    }
}

import AsyncHTTPClient
import CoreMetrics
import Foundation
import HeraldCore
import HeraldHTTP2
import Logging
import NIOCore
import NIOHPACK
import NIOPosix
import NIOSSL

/// What FCM answered to one message.
public struct FCMResponse: Sendable, Equatable {
    /// HTTP status; 0 when no answer arrived.
    public var status: Int
    /// The message name (`projects/<p>/messages/<id>`) on success.
    public var name: String?
    public var error: FCMResponseClassifier.ErrorBody?
    public var outcome: DeliveryOutcome
}

/// An FCM HTTP v1 client on Herald's HTTP/2 pool; OAuth tokens through ``FCMAccessToken``.
public final class FCMClient: Sendable {
    /// Where the client connects.
    public struct Configuration: Sendable {
        public var account: FCMServiceAccount
        /// The FCM host (`fcm.googleapis.com`) and port; tests point it at a mock.
        public var host: String
        public var port: Int
        /// Trust roots for both FCM and the token endpoint; nil uses the system's.
        public var trustRoots: [NIOSSLCertificate]?
        public var connections: Int
        public var requestTimeout: TimeAmount
        /// The most a connection may take to be ready: TCP, TLS and FCM's HTTP/2 preface.
        public var connectTimeout: TimeAmount
        /// Where each request's time to its answer is recorded; nil records nothing.
        public var requestDuration: CoreMetrics.Timer?

        /// Creates a configuration.
        public init(
            account: FCMServiceAccount, host: String = "fcm.googleapis.com", port: Int = 443,
            trustRoots: [NIOSSLCertificate]? = nil, connections: Int = 2, requestTimeout: TimeAmount = .seconds(30),
            connectTimeout: TimeAmount = .seconds(10)
        ) {
            self.account = account
            self.host = host
            self.port = port
            self.trustRoots = trustRoots
            self.connections = connections
            self.requestTimeout = requestTimeout
            self.connectTimeout = connectTimeout
        }
    }

    private let pool: HTTP2ConnectionPool
    private let path: String
    /// The access-token source.
    public let accessTokens: FCMAccessToken

    /// Creates a client; connections open on first use.
    /// - Throws: NIOSSL errors for an unusable TLS configuration.
    public init(
        configuration: Configuration, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        httpClient: HTTPClient = .shared, logger: Logger = Logger(label: "herald.fcm"),
        now: @escaping @Sendable () -> Date = Date.init
    ) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let roots = configuration.trustRoots { tls.trustRoots = .certificates(roots) }
        var poolConfiguration = HTTP2PoolConfiguration(
            host: configuration.host, port: configuration.port, tls: tls, connections: configuration.connections,
            connectTimeout: configuration.connectTimeout, requestTimeout: configuration.requestTimeout)
        poolConfiguration.requestDuration = configuration.requestDuration
        pool = try HTTP2ConnectionPool(configuration: poolConfiguration, eventLoopGroup: eventLoopGroup, logger: logger)
        path = "/v1/projects/\(configuration.account.projectID)/messages:send"
        accessTokens = FCMAccessToken(
            account: configuration.account, httpClient: httpClient,
            tls: configuration.trustRoots == nil ? nil : tls, now: now)
    }

    /// Sends one message (`validateOnly` asks FCM to check it without delivering). A `401` renews
    /// the access token and retries once.
    /// - Throws: `FCMError` when the message is invalid (nothing is sent).
    public func send(_ message: FCMMessage, validateOnly: Bool = false) async throws(FCMError) -> FCMResponse {
        try message.validate()
        var body: [String: JSONValue] = ["message": message.json]
        if validateOnly { body["validate_only"] = .bool(true) }
        let bytes = JSONValue.object(body).serialized()
        var (response, token) = await attempt(bytes)
        if response.status == 401, let token {
            await accessTokens.invalidate(token)
            (response, _) = await attempt(bytes)
        }
        return response
    }

    /// The connection pool's use now (HTTP/2 origins only for Web Push).
    public var poolStatistics: ConnectionPoolStatistics { pool.statistics }

    /// Closes the connections.
    public func shutdown() async {
        await pool.shutdown()
    }

    private func attempt(_ body: [UInt8]) async -> (FCMResponse, String?) {
        let token: String
        do {
            token = try await accessTokens.accessToken()
        } catch {
            return (FCMResponse(status: 0, outcome: .retry(reason: "\(error)", after: nil)), nil)
        }
        let request = HTTP2Request(
            path: path, headers: [("authorization", "Bearer \(token)"), ("content-type", "application/json")],
            body: ByteBuffer(bytes: body))
        do {
            let answer = try await pool.execute(request)
            let json = try? JSONValue.parse(answer.body.readableBytesView)
            var name: String?
            if case .string(let value)? = json?.objectValue?["name"] { name = value }
            let error = answer.status == 200 ? nil : json.flatMap(FCMResponseClassifier.ErrorBody.init(json:))
            let retryAfter = answer.headers.first(name: "retry-after").flatMap(Int.init)
            return (
                FCMResponse(
                    status: answer.status, name: name, error: error,
                    outcome: FCMResponseClassifier.outcome(
                        status: answer.status, name: name, error: error, retryAfter: retryAfter)),
                token
            )
        } catch {
            return (FCMResponse(status: 0, outcome: .retry(reason: "\(error)", after: nil)), token)
        }
    }
}

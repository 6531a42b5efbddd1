import Foundation
import GRDB
import HTTPTypes
import HeraldAPI
import HeraldAPNs
import HeraldCore
import HeraldEngine
import HeraldFCM
import HeraldProviderMocks
import HeraldServer
import HeraldTestSupport
import HeraldWebhooks
import Hummingbird
import HummingbirdTesting

/// The server harness with real provider clients pointed at the mock APNs and FCM servers.
package struct EngineHarness {
    package static let topic = "com.example.herald"

    /// Where the APNs sandbox environment is sent.
    package enum Sandbox {
        /// The same mock as production.
        case shared
        /// Nowhere: the app has no sandbox client.
        case none
        /// A mock of its own (``EngineHarness/sandboxAPNs``).
        case separate
    }

    package let server: ServerHarness
    package let apns: MockAPNsServer
    /// The sandbox's own mock, with ``Sandbox/separate``.
    package let sandboxAPNs: MockAPNsServer?
    package let fcm: MockFCMServer
    /// APNs' channel management service, sharing its channels with ``apns`` (broadcasts).
    package let apnsChannels: MockAPNsChannelServer
    package let transports: AppTransports

    package init(
        engine: EngineConfiguration = EngineConfiguration(
            retryPolicy: RetryPolicy(base: .seconds(1), cap: .seconds(10), maxAttempts: 3), cleanupInterval: nil),
        dialects: DialectSettings = DialectSettings(), apnsSandbox: Sandbox = .shared,
        store: (store: any HeraldStore, cipher: TokenCipher)? = nil, otherApps: [String] = [],
        fcmCredentials: Bool = true, webhooks: WebhookNetworkPolicy = WebhookNetworkPolicy()
    ) async throws {
        let ca = try TestCertificateAuthority()
        let key = TestAPNsAuthKey()
        let channels = APNsChannelRegistry()
        apns = try await MockAPNsServer.start(
            ca: ca, credentials: [key.credential(topics: [Self.topic])], channels: channels)
        apnsChannels = try await MockAPNsChannelServer.start(
            ca: ca, credentials: [key.credential(topics: [Self.topic])], channels: channels)
        let credential = key.credential(topics: [Self.topic])
        sandboxAPNs = apnsSandbox == .separate ? try await MockAPNsServer.start(ca: ca, credentials: [credential]) : nil
        let account = TestServiceAccount.shared
        fcm = try await MockFCMServer.start(ca: ca, serviceAccount: account)
        let signing = try APNsSigningKey(teamID: key.teamID, keyID: key.keyID, pem: key.p8PEM)
        let apnsClient = try APNsClient(
            configuration: APNsConfiguration(
                environment: .custom(host: "127.0.0.1", port: apns.port), authentication: .token(signing),
                trustRoots: [ca.rootCertificate], connections: 1))
        let fcmClient = try FCMClient(
            configuration: .init(
                account: try FCMServiceAccount(json: Array(account.json(tokenURI: fcm.tokenURI).utf8)),
                host: "127.0.0.1", port: fcm.port, trustRoots: [ca.rootCertificate], connections: 1))
        let sandboxClient: APNsClient?
        switch apnsSandbox {
        case .shared: sandboxClient = apnsClient
        case .none: sandboxClient = nil
        case .separate:
            sandboxClient = try APNsClient(
                configuration: APNsConfiguration(
                    environment: .custom(host: "127.0.0.1", port: sandboxAPNs!.port), authentication: .token(signing),
                    trustRoots: [ca.rootCertificate], connections: 1))
        }
        let channelClient = try APNsChannelClient(
            configuration: APNsConfiguration(
                environment: .custom(host: "127.0.0.1", port: apnsChannels.port), authentication: .token(signing),
                trustRoots: [ca.rootCertificate], connections: 1))
        let transports = AppTransports([
            APNsTransport(
                production: apnsClient, sandbox: sandboxClient, topic: Self.topic,
                channels: (channelClient, channelClient)),
            // Without credentials, as `herald serve` builds it for an app with no `fcm` section.
            FCMTransport(client: fcmCredentials ? fcmClient : nil),
        ])
        self.transports = transports
        // Other apps (known to the engine and the dialects only) deliver through the same mocks.
        server = try await ServerHarness(
            transports: Dictionary(uniqueKeysWithValues: (["demo"] + otherApps).map { ($0, transports) }),
            engine: engine, dialects: dialects, store: store, otherApps: otherApps, webhooks: webhooks)
    }

    /// Works every due job, as a worker would.
    @discardableResult
    package func drain() async throws -> Int {
        try await server.dispatcher.runDueJobs()
    }

    package func stop() async {
        await transports.shutdown()
        try? await apns.shutdown()
        try? await sandboxAPNs?.shutdown()
        try? await apnsChannels.shutdown()
        try? await fcm.shutdown()
    }

    /// Runs `test` against the router, then stops the mocks.
    package func run(_ test: @Sendable (API) async throws -> Void) async throws {
        do {
            try await server.run(test)
        } catch {
            await stop()
            throw error
        }
        await stop()
    }
}

extension API {
    /// Registers a device and returns its installation id.
    package func register(_ body: String) async throws -> String {
        let response = try await call(.post, "/v1/installations", body: body)
        guard let id = response.string("id") else {
            throw TestFailure("registration failed: \(response.status) \(String(describing: response.json))")
        }
        return id
    }

    /// Sends a notification and returns its id.
    package func send(_ body: String, headers: HTTPFields = [:]) async throws -> String {
        let response = try await call(.post, "/v1/notifications", body: body, headers: headers)
        guard response.status == .accepted, let id = response.string("id") else {
            throw TestFailure("send failed: \(response.status) \(String(describing: response.json))")
        }
        return id
    }

    /// The notification's record.
    package func notification(_ id: String) async throws -> CallResponse {
        try await call(.get, "/v1/notifications/\(id)")
    }
}

extension CallResponse {
    /// A number at a dotted path, as an integer.
    package func int(_ path: String) -> Int? {
        if case .number(let value)? = self[path] { return value.integerValue.map(Int.init) }
        return nil
    }
}

extension ServerHarness {
    /// Runs SQL on the harness's database through a connection of its own (to age rows).
    package func execute(_ sql: String, _ arguments: [any DatabaseValueConvertible]) throws {
        let queue = try DatabaseQueue(path: directory.file("herald.sqlite"))
        try queue.write { db in try db.execute(sql: sql, arguments: StatementArguments(arguments.map(\.databaseValue)))
        }
    }
}

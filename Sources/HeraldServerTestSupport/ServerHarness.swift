import Foundation
import HTTPTypes
import HeraldAPI
import HeraldAPNs
import HeraldCore
import HeraldEngine
import HeraldFCM
import HeraldSQLite
import HeraldServer
import HeraldTestSupport
import HeraldWebhooks
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization

/// One Herald app on a fresh SQLite database (or the store given), driven through the real router.
package struct ServerHarness {
    package static let serverKey = "hsk_test-server-key-0123456789"
    /// The demo app's publish keys (ntfy, Gotify): any channel; bound to the channel `alerts`; to
    /// the user `ann`; to everyone.
    package static let publishKey = "hpk_test-publish-key-0123456789"
    package static let alertsPublishKey = "hpk_test-alerts-key-0123456789"
    package static let annPublishKey = "hpk_test-ann-key-0123456789"
    package static let everyonePublishKey = "AGotifyAppTok1"
    package static let publishKeys = [
        PublishKey(key: publishKey), PublishKey(key: alertsPublishKey, target: .channel("alerts")),
        PublishKey(key: annPublishKey, target: .user("ann")), PublishKey(key: everyonePublishKey, target: .all),
    ]
    package static let clientKey = "hck_test-client-key-0123456789"
    /// The server key of another app of the harness (`otherApps`).
    package static func otherServerKey(_ appID: String) -> String { "hsk_\(appID)-server-key-0123456789" }
    package static let jwtSecret = "test-hs256-secret-for-user-tokens-0123456789"
    package static let issuer = "https://auth.example.com"
    package static let audience = "herald-tests"

    package let directory: TemporaryDirectory
    package let store: any HeraldStore
    /// The store's token cipher (a restarted store on the same file needs the same key).
    package let cipher: TokenCipher
    package let clock: ManualClock
    package let users: UserTokenIssuer
    package let es256Users: UserTokenIssuer
    package let configuration: HeraldConfiguration
    package let apps: AppDirectory
    package let dispatcher: Dispatcher

    package init(
        maxBodyBytes: Int = 64 * 1024,
        transports: [String: AppTransports] = [
            "demo": AppTransports([
                APNsTransport(production: nil, sandbox: nil, topic: nil), FCMTransport(client: nil),
            ])
        ],
        engine: EngineConfiguration = EngineConfiguration(cleanupInterval: nil),
        introspection: IntrospectionConfiguration? = nil, dialects: DialectSettings = DialectSettings(),
        store given: (store: any HeraldStore, cipher: TokenCipher)? = nil, otherApps: [String] = [],
        timersOnClock: Bool = false, webhooks: WebhookNetworkPolicy = WebhookNetworkPolicy()
    ) async throws {
        directory = try TemporaryDirectory()
        if let given {
            cipher = given.cipher
            store = given.store
        } else {
            cipher = Fixtures.cipher()
            store = try SQLiteStore(path: directory.file("herald.sqlite"), cipher: cipher)
        }
        try await store.migrate()
        let clock = ManualClock()
        self.clock = clock
        users = await UserTokenIssuer.hs256(secret: Self.jwtSecret)
        let (es256, pem) = await UserTokenIssuer.es256()
        es256Users = es256
        let pemPath = directory.file("users.pem")
        try pem.write(toFile: pemPath, atomically: false, encoding: .utf8)
        var app = AppConfiguration(
            id: "demo", serverKey: Self.serverKey, clientKey: Self.clientKey,
            userTokens: UserTokenConfiguration(
                hs256Secret: Self.jwtSecret, publicKeyFiles: [pemPath], issuer: Self.issuer,
                audience: Self.audience, leewaySeconds: 60, introspection: introspection))
        app.publishKeys = Self.publishKeys
        // Other apps have keys of their own (``otherServerKey(_:)``) and no user tokens.
        let others = otherApps.map {
            AppConfiguration(id: $0, serverKey: Self.otherServerKey($0), clientKey: "hck_\($0)-client-key-0123456789")
        }
        configuration = HeraldConfiguration(
            database: .sqlite(path: directory.file("herald.sqlite")), maxBodyBytes: maxBodyBytes, apps: [app] + others,
            dialects: dialects, webhooks: webhooks)
        apps = try await AppDirectory(configuration: configuration, store: store, now: { clock.date })
        // The node's timers (the readiness limit, the channel's authentication limit, the workers' poll)
        // sleep on the harness's clock only when asked: most tests let them run in real time.
        dispatcher = Dispatcher(
            store: store, transports: transports, configuration: engine, now: { clock.date },
            clock: timersOnClock ? clock : ContinuousClock())
    }

    /// The router and the routes it serves.
    package func router() throws -> (router: Router<HeraldRequestContext>, routes: [RouteDescriptor]) {
        let clock = self.clock
        return try HeraldApplication.router(
            configuration: configuration, store: store, apps: apps, dispatcher: dispatcher, now: { clock.date })
    }

    /// Runs `test` against the router.
    package func run(_ test: @Sendable (API) async throws -> Void) async throws {
        let app = Application(router: try router().router)
        try await app.test(.router) { client in try await test(API(client: client)) }
    }

    /// A user token for `subject`, valid now, with the configured issuer and audience.
    package func userToken(_ subject: String) async throws -> String {
        try await users.token(
            subject: subject, now: clock.date, issuer: Self.issuer, audience: Self.audience)
    }
}

/// A decoded response.
package struct CallResponse {
    package var status: HTTPResponse.Status
    package var headers: HTTPFields
    package var json: JSONValue?

    package init(status: HTTPResponse.Status, headers: HTTPFields, json: JSONValue?) {
        self.status = status
        self.headers = headers
        self.json = json
    }

    /// The member at a dotted path (`error.code`).
    package subscript(path: String) -> JSONValue? {
        var value = json
        for part in path.split(separator: ".") {
            if let index = Int(part), case .array(let items)? = value {
                value = index < items.count ? items[index] : nil
            } else {
                value = value?.objectValue?[String(part)]
            }
        }
        return value
    }

    package var errorCode: String? {
        if case .string(let code)? = self["error.code"] { return code }
        return nil
    }

    package var errorField: String? {
        if case .string(let field)? = self["error.field"] { return field }
        return nil
    }

    package func string(_ path: String) -> String? {
        if case .string(let value)? = self[path] { return value }
        return nil
    }

    package var items: [JSONValue] {
        if case .array(let items)? = self["data"] { return items }
        return []
    }
}

/// Calls the native API with a bearer credential.
package struct API {
    package let client: any TestClientProtocol

    package init(client: any TestClientProtocol) {
        self.client = client
    }

    package func call(
        _ method: HTTPRequest.Method, _ uri: String, bearer: String? = ServerHarness.serverKey, body: String? = nil,
        contentType: String? = "application/json", headers extra: HTTPFields = [:]
    ) async throws -> CallResponse {
        var headers = extra
        if let bearer { headers[.authorization] = "Bearer \(bearer)" }
        if body != nil, let contentType { headers[.contentType] = contentType }
        let response = try await client.executeRequest(
            uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
        let bytes = Array(response.body.readableBytesView)
        return CallResponse(
            status: response.status, headers: response.headers,
            json: bytes.isEmpty ? nil : try? JSONValue.parse(bytes))
    }

    /// Registers an iOS device and returns the response.
    package func registerIOS(
        token: String = Fixtures.apnsToken(), bearer: String? = ServerHarness.serverKey, extra: String = ""
    ) async throws -> CallResponse {
        try await call(
            .post, "/v1/installations", bearer: bearer, body: #"{"platform":"ios","token":"\#(token)"\#(extra)}"#)
    }
}

extension API {
    /// Calls the AOVIS register route with an app token.
    package func aovisRegister(_ body: String, bearer: String?) async throws -> CallResponse {
        try await call(.post, "/api/internal/push/register", bearer: bearer, body: body)
    }
}

extension JSONValue {
    /// The array's items, or nil when the value is not an array.
    package var arrayValue: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    /// The string, or nil when the value is not a string.
    package var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}

import Crypto
import Foundation
import HeraldAOVIS
import HeraldAPI
import HeraldArgusAI
import HeraldCore
import HeraldEngine
import HeraldGotify
import HeraldHomeAssistant
import HeraldLeanCloud
import HeraldMatrix
import HeraldNtfy
import HeraldSNSAPI
import HeraldUnifiedPush
import HeraldWebPush
import HeraldWebhooks
import Hummingbird
import HummingbirdWebSocket
import Logging

/// Builds Herald's HTTP application from its parts; `herald serve` and the tests use the same
/// builder.
public enum HeraldApplication {
    /// The dialects Herald serves (docs/architecture.md, "Adding a dialect"): a new one is its own module (`Sources/Herald<Name>`, on
    /// `HeraldAPI`) and a line here (docs/architecture.md).
    package static let dialects: [any Dialect.Type] = [
        ArgusAIRoutes.self, AOVISRoutes.self, SNSAPIRoutes.self, HomeAssistantRelayRoutes.self, LeanCloudRoutes.self,
        UnifiedPushRoutes.self,
        MatrixRoutes.self,
        NtfyRoutes.self,
        GotifyRoutes.self,
    ]

    /// The router with every route and middleware, and the table of routes it serves.
    /// - Throws: `DialectStoreMissing` when `store` does not keep a dialect's own records (it does not
    ///   conform to the store protocol the dialect declares; `SQLiteStore` and `PostgresStore` keep
    ///   them all: `DialectStores.swift`).
    public static func router(
        configuration: HeraldConfiguration, store: any HeraldStore,
        apps: AppDirectory,
        dispatcher: Dispatcher, metrics: MetricsExport = MetricsExport(),
        consoleSecret: SymmetricKey = SymmetricKey(size: .bits256),
        now: @escaping @Sendable () -> Date = Date.init
    ) throws -> (router: Router<HeraldRequestContext>, routes: [RouteDescriptor]) {
        try router(
            configuration: configuration, store: store, apps: apps, dispatcher: dispatcher, metrics: metrics,
            consoleSecret: consoleSecret, dialects: dialects, now: now)
    }

    /// The router with `dialects` mounted instead of ``dialects`` (a test's own).
    package static func router(
        configuration: HeraldConfiguration, store: any HeraldStore,
        apps: AppDirectory,
        dispatcher: Dispatcher, metrics: MetricsExport = MetricsExport(),
        consoleSecret: SymmetricKey = SymmetricKey(size: .bits256), dialects: [any Dialect.Type],
        now: @escaping @Sendable () -> Date = Date.init
    ) throws -> (router: Router<HeraldRequestContext>, routes: [RouteDescriptor]) {
        let router = Router(context: HeraldRequestContext.self)
        var table = RouteTable(index: RouteIndex())
        if !configuration.http.trustedProxies.isEmpty {
            router.add(middleware: TrustedProxyMiddleware(proxies: configuration.http.trustedProxies))
        }
        router.add(middleware: RequestLogMiddleware())
        router.add(middleware: MetricsMiddleware())
        router.add(middleware: ErrorMiddleware(routes: table.index))
        if configuration.http.authFailuresPerMinute > 0 {
            router.add(
                middleware: AuthFailureGuard(
                    limiter: FailureLimiter(capacity: configuration.http.authFailuresPerMinute, per: 60), now: now))
        }
        let registrations = RegistrationLimit(perMinute: configuration.registrationsPerMinute, store: store)
        let console = ConsoleGate(
            sessions: ConsoleSessions(
                secret: consoleSecret, lifetime: TimeInterval(configuration.console.sessionHours * 3600)),
            apps: apps, store: store, now: now)
        let authenticator = BearerAuthenticator(apps: apps, console: console)
        let api = router.group("v1").add(middleware: authenticator)
        InstallationRoutes(
            store: store, dispatcher: dispatcher, limit: registrations, maxBodyBytes: configuration.maxBodyBytes,
            now: now
        )
        .register(on: api.group("installations"), prefix: InstallationRoutes.prefix, table: &table)
        PreferenceRoutes(store: store, maxBodyBytes: configuration.maxBodyBytes, now: now)
            .register(on: api.group("installations"), prefix: InstallationRoutes.prefix, table: &table)
        UserRoutes(store: store, dispatcher: dispatcher).register(
            on: api.group("users"), prefix: "/v1/users", table: &table)
        let templates = store as? any TemplateStore
        NotificationRoutes(
            store: store, templates: templates, dispatcher: dispatcher, maxBodyBytes: configuration.maxBodyBytes,
            now: now
        )
        .register(on: api.group("notifications"), prefix: NotificationRoutes.prefix, table: &table)
        if let templates {
            TemplateRoutes(store: templates, maxBodyBytes: configuration.maxBodyBytes, now: now)
                .register(on: api.group("templates"), prefix: TemplateRoutes.prefix, table: &table)
        }
        OpenRoutes(store: store, maxBodyBytes: configuration.maxBodyBytes, now: now)
            .register(on: api.group("opens"), prefix: OpenRoutes.prefix, table: &table)
        if let webhooks = store as? any WebhookStore {
            WebhookRoutes(
                store: webhooks, policy: configuration.webhooks, maxBodyBytes: configuration.maxBodyBytes, now: now
            ).register(on: api.group("webhooks"), prefix: WebhookRoutes.prefix, table: &table)
        }
        if let activities = store as? any HeraldStore & LiveActivityStore {
            LiveActivityTokenRoutes(store: activities, maxBodyBytes: configuration.maxBodyBytes, now: now)
                .register(on: api.group("installations"), prefix: InstallationRoutes.prefix, table: &table)
            LiveActivityRoutes(
                store: activities, dispatcher: dispatcher, maxBodyBytes: configuration.maxBodyBytes, now: now
            )
            .register(on: api.group("live-activities"), prefix: LiveActivityRoutes.prefix, table: &table)
        }
        ChannelRoutes(store: store, apps: apps, channels: dispatcher.channels).register(
            on: router, api: api, table: &table)
        WebPushRoutes(publicKeys: configuration.providers.compactMapValues { $0.webPush?.key.publicKeyBase64URL })
            .register(on: router.group("v1/webpush"), table: &table)
        let context = DialectContext(
            store: store, apps: apps, dispatcher: dispatcher, maxBodyBytes: configuration.maxBodyBytes,
            registrationsPerMinute: configuration.registrationsPerMinute, settings: configuration.dialects, now: now)
        for dialect in dialects { try dialect.mount(context, on: router, table: &table) }
        ConsoleRoutes(
            store: store, apps: apps, gate: console, configuration: configuration, dispatcher: dispatcher, now: now
        )
        .register(on: router, authenticator: authenticator, table: &table)
        if configuration.metricsEnabled {
            MetricsRoutes(
                export: metrics, token: configuration.metricsToken, store: store, dispatcher: dispatcher, now: now
            ).register(on: router.group(), table: &table)
        }
        // Last: the document it serves describes every route registered before.
        OperationsRoutes(store: store, clock: dispatcher.clock).register(on: router.group(), table: &table)
        return (router, table.routes)
    }

    /// The router of WebSocket upgrades: the direct channel.
    public static func webSocketRouter(
        store: any InstallationRegistry, apps: AppDirectory, dispatcher: Dispatcher
    ) -> Router<ChannelRequestContext> {
        ChannelRoutes(store: store, apps: apps, channels: dispatcher.channels).webSocketRouter()
    }

    /// The runnable application listening where the configuration says.
    /// - Parameter requestsOnConnectionLoop: Whether a connection's requests run on its own event loop
    ///   (``EventLoopTaskExecutor``) rather than on Swift's global executor.
    /// - Throws: What ``router(configuration:store:apps:dispatcher:metrics:consoleSecret:now:)`` throws.
    public static func make(
        configuration: HeraldConfiguration, store: any HeraldStore,
        apps: AppDirectory,
        dispatcher: Dispatcher, metrics: MetricsExport = MetricsExport(),
        consoleSecret: SymmetricKey = SymmetricKey(size: .bits256), requestsOnConnectionLoop: Bool = true,
        logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        Application(
            router: try router(
                configuration: configuration, store: store, apps: apps, dispatcher: dispatcher, metrics: metrics,
                consoleSecret: consoleSecret
            ).router,
            server: .herald(
                webSocketRouter: webSocketRouter(store: store, apps: apps, dispatcher: dispatcher),
                limits: configuration.http, onConnectionLoop: requestsOnConnectionLoop),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "Herald"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
            logger: logger)
    }
}

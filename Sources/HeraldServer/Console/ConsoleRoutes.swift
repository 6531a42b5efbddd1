import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine
import Hummingbird
import Logging
import NIOCore

/// The web console at `/console`: its page and assets (embedded in the binary), server-key sign-in
/// into a session cookie, and the read-only JSON the pages need beyond the native `/v1` API (which
/// accepts the console's session too, through ``BearerAuthenticator``).
struct ConsoleRoutes: Sendable {
    static let prefix = "/console"

    let store: any HeraldStore
    let apps: AppDirectory
    let gate: ConsoleGate
    let configuration: HeraldConfiguration
    /// The engine, whose provider connection pools the overview shows.
    let dispatcher: Dispatcher
    let limiter: FailureLimiter
    let maxBodyBytes: Int
    let now: @Sendable () -> Date

    init(
        store: any HeraldStore, apps: AppDirectory, gate: ConsoleGate, configuration: HeraldConfiguration,
        dispatcher: Dispatcher, now: @escaping @Sendable () -> Date
    ) {
        self.dispatcher = dispatcher
        self.store = store
        self.apps = apps
        self.gate = gate
        self.configuration = configuration
        self.limiter = FailureLimiter(
            capacity: configuration.console.signInAttempts,
            per: TimeInterval(configuration.console.signInWindowSeconds))
        self.maxBodyBytes = configuration.maxBodyBytes
        self.now = now
    }

    /// Registers the console's routes under `/console` on `router`; `api` is the authenticating
    /// middleware the console's JSON routes share with `/v1`.
    func register(
        on router: Router<HeraldRequestContext>, authenticator: BearerAuthenticator, table: inout RouteTable
    ) {
        let console = router.group("console").add(middleware: ConsoleHeaders())
        for asset in ConsoleAsset.all {
            table.on(console, prefix: Self.prefix, asset.operation) { _, _ in asset.response() }
        }
        table.on(console, prefix: Self.prefix, Self.signInOperation) { request, context in
            try await signIn(request, context: context)
        }
        table.on(console, prefix: Self.prefix, Self.sessionOperation) { request, _ in
            guard let session = try await gate.session(request) else {
                throw HeraldError.unauthorized("Sign in to the console first.")
            }
            return .json(sessionBody(session))
        }
        table.on(console, prefix: Self.prefix, Self.signOutOperation) { request, context in
            if let session = try await gate.signOut(request) {
                context.logger.info("console sign-out", metadata: ["herald.app": "\(session.appID)"])
            }
            return Response(status: .noContent, headers: [.setCookie: cookie(value: "", maxAge: 0)])
        }
        let api = console.group("api").add(middleware: authenticator)
        table.on(api, prefix: Self.prefix + "/api", Self.overviewOperation) { _, context in
            let appID = try context.requireServerKey("The console's data needs the server key.")
            return .json(try await overview(appID: appID))
        }
        table.on(api, prefix: Self.prefix + "/api", Self.historyOperation) { request, context in
            let appID = try context.requireServerKey("The console's data needs the server key.")
            let query = try ListQuery(request.uri.queryParameters, declared: Self.historyParameters)
            let id = try context.parameters.require("id")
            guard let installation = try await store.installation(appID: appID, id: id) else {
                throw HeraldError.notFound("Installation \(id)")
            }
            let page = try query.page()
            let entries = try await store.deliveries(installationID: installation.id, page: page)
            let next =
                entries.count == page.limit ? entries.last.map { ListQuery.cursor(after: String($0.sequence)) } : nil
            var body = ListQuery.page(entries.map(Self.entryJSON), next: next).objectValue ?? [:]
            body["installation"] = InstallationView.json(installation, token: .suffix)
            return .json(.object(body))
        }
    }

    // MARK: Sign-in

    private func signIn(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let address = context.clientAddress
        let now = now()
        if let wait = limiter.retryAfter(address, now: now) {
            var response = try HeraldError(
                kind: .tooManyRequests, code: "rate_limited",
                message: "Too many failed sign-ins from this address; try again in \(wait) s."
            ).response(from: request, context: context)
            response.headers[.retryAfter] = String(wait)
            return response
        }
        let key = try await serverKey(in: request)
        switch apps.principal(forKey: key) {
        case .server(let appID)?:
            guard let serverKey = apps.serverKey(appID: appID) else { throw HeraldError.unauthorized() }
            let session = gate.sessions.issue(appID: appID, serverKey: serverKey, now: now)
            context.logger.info("console sign-in", metadata: ["herald.app": "\(appID)"])
            var response = Response.json(sessionBody(session))
            response.headers[.setCookie] = cookie(value: session.value, maxAge: Int(gate.sessions.lifetime))
            response.headers[.cacheControl] = "no-store"
            return response
        case .client?:
            limiter.fail(address, now: now)
            throw HeraldError.forbidden("A client key cannot sign in to the console; use the app's server key.")
        case .user?, nil:
            limiter.fail(address, now: now)
            throw HeraldError(
                kind: .unauthorized, code: "invalid_server_key", message: "The server key is not valid.",
                field: "server_key")
        }
    }

    /// `server_key` from a JSON or form body.
    private func serverKey(in request: Request) async throws -> String {
        let contentType = request.headers[.contentType]?.split(separator: ";").first?
            .trimmingCharacters(in: .whitespaces).lowercased()
        if contentType == "application/x-www-form-urlencoded" {
            var bytes: [UInt8] = []
            for try await buffer in request.body {
                guard bytes.count + buffer.readableBytes <= maxBodyBytes else {
                    throw HeraldError.bodyTooLarge(limit: maxBodyBytes)
                }
                bytes.append(contentsOf: buffer.readableBytesView)
            }
            for pair in String(decoding: bytes, as: UTF8.self).split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2, parts[0] == "server_key" else { continue }
                let value = parts[1].replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
                guard !value.isEmpty else { break }
                return value
            }
            throw HeraldError.missingField("server_key")
        }
        let body = try await request.jsonBody(limit: maxBodyBytes)
        guard case .object(let fields) = body else { throw HeraldError.invalidType("body", expected: "an object") }
        for name in fields.keys where name != "server_key" { throw HeraldError.unknownField(name) }
        guard let value = fields["server_key"], value != .null else { throw HeraldError.missingField("server_key") }
        guard case .string(let key) = value, !key.isEmpty else {
            throw HeraldError.invalidType("server_key", expected: "a non-empty string")
        }
        return key
    }

    private func sessionBody(_ session: ConsoleSessions.Session) -> JSONValue {
        .object([
            "app": .string(session.appID),
            "csrf_token": .string(gate.sessions.csrfToken(for: session)),
            "expires_at": InstallationView.timestamp(session.expiresAt),
        ])
    }

    private func cookie(value: String, maxAge: Int) -> String {
        var cookie = "\(ConsoleSessions.cookieName)=\(value); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Strict"
        if configuration.console.secureCookie { cookie += "; Secure" }
        return cookie
    }

    // MARK: Data

    /// How far back the chart and the provider health look.
    static let window: TimeInterval = 24 * 3600

    private func overview(appID: String) async throws -> JSONValue {
        let now = now()
        let since = now.addingTimeInterval(-Self.window)
        // Hour-aligned, so the chart's first bar is a whole hour.
        let seriesSince = Date(timeIntervalSince1970: (since.timeIntervalSince1970 / 3600).rounded(.down) * 3600)
        async let series = store.outcomeSeries(appID: appID, since: seriesSince)
        // Failures of the last day among notifications of the last two (a retry outlives its send).
        async let failures = store.providerFailures(
            appID: appID, since: since, createdSince: since.addingTimeInterval(-Self.window), limit: 50)
        async let pauses = store.providerPauses(now: now)
        let providers = configuration.providers[appID]?.configured ?? []
        let appPauses = try await pauses.filter { $0.appID == appID }
        return .object([
            "app": .string(appID),
            "now": InstallationView.timestamp(now),
            "providers": .array(
                providers.map { service in
                    var entry: [String: JSONValue] = ["service": .string(service)]
                    entry["paused_until"] = InstallationView.timestamp(
                        appPauses.first { $0.service.rawValue == service && $0.scope.isEmpty }?.until)
                    let origins = appPauses.filter { $0.service.rawValue == service && !$0.scope.isEmpty }
                    if !origins.isEmpty {
                        entry["paused_origins"] = .array(
                            origins.sorted { $0.scope < $1.scope }.map { pause in
                                .object([
                                    "origin": .string(pause.scope),
                                    "until": InstallationView.timestamp(pause.until),
                                ])
                            })
                    }
                    if let kind = PushService(rawValue: service),
                        let pool = dispatcher.transports[appID]?.transports[kind]?.connectionStatistics
                    {
                        entry["pool"] = .object([
                            "connections": .number(JSONNumber(pool.connections)),
                            "streams_in_use": .number(JSONNumber(pool.streamsInUse)),
                            "waiting": .number(JSONNumber(pool.waiting)),
                        ])
                    }
                    return .object(entry)
                }),
            "failures": .array(
                try await failures.map { failure in
                    .object([
                        "service": .string(failure.service.rawValue),
                        "outcome": .string(failure.outcome.rawValue),
                        "reason": InstallationView.string(failure.reason),
                        "count": .number(JSONNumber(failure.count)),
                        "last_at": InstallationView.timestamp(failure.lastAt),
                    ])
                }),
            "series": .object([
                "since": InstallationView.timestamp(seriesSince),
                "hours": .array(
                    try await series.map { bucket in
                        .object([
                            "hour": InstallationView.timestamp(bucket.hour),
                            "notifications": .number(JSONNumber(bucket.notifications)),
                            "targeted": .number(JSONNumber(bucket.counts.targeted)),
                            "sent": .number(JSONNumber(bucket.counts.sent)),
                            "failed": .number(JSONNumber(bucket.counts.failed)),
                            "invalid": .number(JSONNumber(bucket.counts.invalid)),
                            "skipped": .number(
                                JSONNumber(bucket.counts.skippedPreferences + bucket.counts.skippedExpired)),
                        ])
                    }),
            ]),
            "dialects": .array(ConsoleDialects.describe(appID: appID, configuration: configuration)),
        ])
    }

    private static func entryJSON(_ entry: LedgerEntry) -> JSONValue {
        .object([
            "sequence": .number(JSONNumber(Int(entry.sequence))),
            "notification_id": .string(entry.record.notificationID),
            "service": .string(entry.record.service.rawValue),
            "outcome": .string(entry.record.outcome.rawValue),
            "provider_id": InstallationView.string(entry.record.providerID),
            "reason": InstallationView.string(entry.record.reason),
            "attempts": .number(JSONNumber(entry.record.attempts)),
            "at": InstallationView.timestamp(entry.record.at),
        ])
    }
}

/// The console's response headers: no framing, no referrer, no inline script, and answers that
/// are not cached (the assets are revalidated, the data never stored).
struct ConsoleHeaders: RouterMiddleware {
    typealias Context = HeraldRequestContext

    static let contentSecurityPolicy =
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        response.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy
        response.headers[.xFrameOptions] = "DENY"
        response.headers[.referrerPolicy] = "no-referrer"
        response.headers[.xContentTypeOptions] = "nosniff"
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }
}

extension HTTPField.Name {
    static let xFrameOptions = Self("X-Frame-Options")!
    static let referrerPolicy = Self("Referrer-Policy")!
    static let xContentTypeOptions = Self("X-Content-Type-Options")!
}

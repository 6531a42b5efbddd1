import Crypto
import Foundation
import HTTPTypes
import HeraldAPNs
import HeraldCore
import HeraldEngine
import HeraldPostgres
import HeraldProviderMocks
import HeraldSQLite
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization
import Testing

@testable import HeraldAPI

/// The web console through the real router: sign-in, the session cookie and its CSRF token, the
/// native API and the console's own routes under a session, and the console's files.
@Suite("Web console: sign-in, session cookie, CSRF, console routes and assets")
struct ConsoleTests {
    /// A signed-in console: the cookie header to send and the CSRF token.
    struct Session {
        var cookie: String
        var csrf: String
        var setCookie: String

        func headers(csrf override: String? = nil, sendCSRF: Bool = true) -> HTTPFields {
            var headers: HTTPFields = [.cookie: cookie]
            if sendCSRF { headers[HTTPField.Name("X-CSRF-Token")!] = override ?? csrf }
            return headers
        }
    }

    static func signIn(_ api: API, key: String = ServerHarness.serverKey) async throws -> Session {
        let response = try await api.call(.post, "/console/session", bearer: nil, body: #"{"server_key":"\#(key)"}"#)
        #expect(response.status == .ok)
        let setCookie = try #require(response.headers[.setCookie])
        let pair = try #require(setCookie.split(separator: ";").first)
        return Session(
            cookie: String(pair), csrf: try #require(response.string("csrf_token")), setCookie: setCookie)
    }

    /// The router of `harness` with another configuration (several apps, console settings).
    static func run(
        _ harness: ServerHarness, configuration: HeraldConfiguration? = nil, apps: AppDirectory? = nil,
        secret: SymmetricKey = SymmetricKey(size: .bits256), _ test: @Sendable (API) async throws -> Void
    ) async throws {
        let clock = harness.clock
        let router = try HeraldApplication.router(
            configuration: configuration ?? harness.configuration, store: harness.store, apps: apps ?? harness.apps,
            dispatcher: harness.dispatcher, consoleSecret: secret, now: { clock.date }
        ).router
        try await Application(router: router).test(.router) { client in try await test(API(client: client)) }
    }

    @Test("The server key signs in: a HttpOnly, Secure, SameSite=Strict cookie and a CSRF token; JSON or form")
    func signInWithServerKey() async throws {
        let harness = try await ServerHarness()
        try await harness.run { api in
            let session = try await Self.signIn(api)
            #expect(session.cookie.hasPrefix("herald_console=demo."))
            let flags = session.setCookie.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(flags.contains("HttpOnly"))
            #expect(flags.contains("Secure"))
            #expect(flags.contains("SameSite=Strict"))
            #expect(flags.contains("Path=/"))
            #expect(flags.contains("Max-Age=43200"))
            // The server key itself never appears in the cookie.
            #expect(!session.setCookie.contains(ServerHarness.serverKey))

            let form = try await api.call(
                .post, "/console/session", bearer: nil, body: "server_key=\(ServerHarness.serverKey)",
                contentType: "application/x-www-form-urlencoded")
            #expect(form.status == .ok)
            #expect(form.string("app") == "demo")
            #expect(form.headers[.setCookie]?.hasPrefix("herald_console=demo.") == true)

            // A reloaded page asks for its session (and CSRF token) with the cookie alone.
            let current = try await api.call(.get, "/console/session", bearer: nil, headers: [.cookie: session.cookie])
            #expect(current.status == .ok)
            #expect(current.string("csrf_token") == session.csrf)
            #expect(current.string("app") == "demo")
            let none = try await api.call(.get, "/console/session", bearer: nil)
            #expect(none.status == .unauthorized)
        }
    }

    @Test("A wrong key, a client key, a user token or no key does not sign in, and sets no cookie")
    func signInRefusals() async throws {
        let harness = try await ServerHarness()
        let userToken = try await harness.userToken("alice")
        try await harness.run { api in
            let cases: [(String, HTTPResponse.Status, String)] = [
                (#"{"server_key":"hsk_not-the-key-0123456789"}"#, .unauthorized, "invalid_server_key"),
                (#"{"server_key":"\#(ServerHarness.clientKey)"}"#, .forbidden, "forbidden"),
                (#"{"server_key":"\#(userToken)"}"#, .unauthorized, "invalid_server_key"),
                (#"{}"#, .badRequest, "missing_field"),
                (#"{"server_key":""}"#, .badRequest, "invalid_type"),
                (#"{"server_key":"x","extra":1}"#, .badRequest, "unknown_field"),
                (#"[1]"#, .badRequest, "invalid_type"),
            ]
            for (body, status, code) in cases {
                let response = try await api.call(.post, "/console/session", bearer: nil, body: body)
                #expect(response.status == status, "\(body)")
                #expect(response.errorCode == code, "\(body)")
                #expect(response.headers[.setCookie] == nil)
            }
        }
    }

    @Test("Failed sign-ins are limited per address: 429 with Retry-After, even for the right key, until it refills")
    func signInRateLimit() async throws {
        let harness = try await ServerHarness()
        var configuration = harness.configuration
        configuration.console = ConsoleConfiguration(signInAttempts: 2, signInWindowSeconds: 60)
        try await Self.run(harness, configuration: configuration) { api in
            for _ in 0..<2 {
                let wrong = try await api.call(
                    .post, "/console/session", bearer: nil, body: #"{"server_key":"hsk_wrong-key-0123456789"}"#)
                #expect(wrong.status == .unauthorized)
            }
            let limited = try await api.call(
                .post, "/console/session", bearer: nil, body: #"{"server_key":"\#(ServerHarness.serverKey)"}"#)
            #expect(limited.status == .tooManyRequests)
            #expect(limited.errorCode == "rate_limited")
            #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
            #expect(limited.headers[.setCookie] == nil)
            harness.clock.advance(by: .seconds(31))
            _ = try await Self.signIn(api)
        }
    }

    @Test("Under a session every call needs X-CSRF-Token: missing or wrong is 403 csrf_failed, right reaches /v1")
    func csrf() async throws {
        let harness = try await ServerHarness()
        try await harness.run { api in
            let session = try await Self.signIn(api)
            for uri in ["/console/api/overview", "/v1/installations"] {
                let missing = try await api.call(.get, uri, bearer: nil, headers: session.headers(sendCSRF: false))
                #expect(missing.status == .forbidden)
                #expect(missing.errorCode == "csrf_failed")
                let wrong = try await api.call(.get, uri, bearer: nil, headers: session.headers(csrf: "bm9wZQ"))
                #expect(wrong.status == .forbidden)
                #expect(wrong.errorCode == "csrf_failed")
                let right = try await api.call(.get, uri, bearer: nil, headers: session.headers())
                #expect(right.status == .ok)
            }
            // Writes too: the session acts with the server key.
            let created = try await api.call(
                .post, "/v1/installations", bearer: nil,
                body: #"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#,
                headers: session.headers())
            #expect(created.status == .created)
            let forged = try await api.call(
                .post, "/v1/installations", bearer: nil,
                body: #"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#,
                headers: session.headers(sendCSRF: false))
            #expect(forged.status == .forbidden)
            #expect(try await harness.store.installations(appID: "demo", filter: .init(), page: .init()).count == 1)
            // Neither cookie nor bearer: 401.
            #expect(try await api.call(.get, "/console/api/overview", bearer: nil).status == .unauthorized)
            // A tampered cookie: 401.
            let tampered = session.cookie.dropLast(2) + "xx"
            let refused = try await api.call(
                .get, "/console/api/overview", bearer: nil,
                headers: [.cookie: String(tampered), HTTPField.Name("X-CSRF-Token")!: session.csrf])
            #expect(refused.status == .unauthorized)
            #expect(refused.errorCode == "session_expired")
        }
    }

    @Test("A session ends after console.session_hours, and when the app's server key is rotated")
    func expiry() async throws {
        let harness = try await ServerHarness()
        let secret = SymmetricKey(size: .bits256)
        let session = SessionBox()
        try await Self.run(harness, secret: secret) { api in
            let signedIn = try await Self.signIn(api)
            session.value.withLock { $0 = signedIn }
            harness.clock.advance(by: .seconds(11 * 3600))
            #expect(
                try await api.call(.get, "/console/api/overview", bearer: nil, headers: signedIn.headers()).status
                    == .ok)
            harness.clock.advance(by: .seconds(3600))
            let expired = try await api.call(.get, "/console/api/overview", bearer: nil, headers: signedIn.headers())
            #expect(expired.status == .unauthorized)
            #expect(expired.errorCode == "session_expired")
            #expect(
                try await api.call(.get, "/console/session", bearer: nil, headers: [.cookie: signedIn.cookie]).status
                    == .unauthorized)
        }
        // Another node with the same master key accepts a fresh session; after the key is rotated, not.
        let fresh = try #require(session.value.withLock { $0 })
        harness.clock.set(harness.clock.date.addingTimeInterval(-12 * 3600 + 60))
        try await Self.run(harness, secret: secret) { api in
            let accepted = try await api.call(.get, "/v1/installations", bearer: nil, headers: fresh.headers())
            #expect(accepted.status == .ok)
        }
        var rotated = harness.configuration
        rotated.apps[0].serverKey = "hsk_rotated-server-key-0123456789"
        let rotatedApps = try await AppDirectory(configuration: rotated, store: harness.store)
        try await Self.run(harness, configuration: rotated, apps: rotatedApps, secret: secret) { api in
            let refused = try await api.call(.get, "/v1/installations", bearer: nil, headers: fresh.headers())
            #expect(refused.status == .unauthorized)
        }
    }

    @Test("A session of another app sees only that app's data")
    func anotherApp() async throws {
        let harness = try await ServerHarness()
        var configuration = harness.configuration
        configuration.apps.append(
            AppConfiguration(
                id: "other", serverKey: "hsk_other-server-key-0123456789", clientKey: "hck_other-client-key-0123456789")
        )
        let apps = try await AppDirectory(configuration: configuration, store: harness.store)
        try await Self.run(harness, configuration: configuration, apps: apps) { api in
            let mine = try await api.registerIOS()
            let id = try #require(mine.string("id"))
            let other = try await Self.signIn(api, key: "hsk_other-server-key-0123456789")
            #expect(other.cookie.hasPrefix("herald_console=other."))
            let list = try await api.call(.get, "/v1/installations", bearer: nil, headers: other.headers())
            #expect(list.status == .ok)
            #expect(list.items.isEmpty)
            let history = try await api.call(
                .get, "/console/api/installations/\(id)/history", bearer: nil, headers: other.headers())
            #expect(history.status == .notFound)
            let read = try await api.call(.get, "/v1/installations/\(id)", bearer: nil, headers: other.headers())
            #expect(read.status == .notFound)
            let overview = try await api.call(.get, "/console/api/overview", bearer: nil, headers: other.headers())
            #expect(overview.string("app") == "other")
            // Renaming the app in the cookie breaks its MAC.
            let renamed = other.cookie.replacingOccurrences(of: "herald_console=other.", with: "herald_console=demo.")
            let forged = try await api.call(
                .get, "/v1/installations", bearer: nil,
                headers: [.cookie: renamed, HTTPField.Name("X-CSRF-Token")!: other.csrf])
            #expect(forged.status == .unauthorized)
        }
    }

    @Test("Signing out ends the session: the cookie kept is refused on every route; other sessions go on")
    func signOut() async throws {
        let harness = try await ServerHarness()
        let secret = SymmetricKey(size: .bits256)
        let ended = SessionBox()
        try await Self.run(harness, secret: secret) { api in
            let session = try await Self.signIn(api)
            let other = try await Self.signIn(api)
            // Without its CSRF token a sign-out is refused and changes nothing.
            for headers in [session.headers(csrf: "wrong"), session.headers(sendCSRF: false)] {
                let refused = try await api.call(.delete, "/console/session", bearer: nil, headers: headers)
                #expect(refused.status == .forbidden)
                #expect(refused.errorCode == "csrf_failed")
                #expect(refused.headers[.setCookie] == nil)
            }
            #expect(
                try await api.call(.get, "/console/session", bearer: nil, headers: [.cookie: session.cookie]).status
                    == .ok)

            let response = try await api.call(.delete, "/console/session", bearer: nil, headers: session.headers())
            #expect(response.status == .noContent)
            let cleared = try #require(response.headers[.setCookie])
            #expect(cleared.hasPrefix("herald_console=;"))
            #expect(cleared.contains("Max-Age=0"))
            // The cookie, kept by another tab or copied, no longer works anywhere.
            for path in ["/console/session", "/console/api/overview", "/v1/installations"] {
                let refused = try await api.call(.get, path, bearer: nil, headers: session.headers())
                #expect(refused.status == .unauthorized, "\(path)")
                #expect(refused.errorCode == "session_expired", "\(path)")
            }
            // Signing out again, or with no session at all, just clears the cookie.
            #expect(
                try await api.call(.delete, "/console/session", bearer: nil, headers: session.headers()).status
                    == .noContent)
            #expect(try await api.call(.delete, "/console/session", bearer: nil).status == .noContent)
            // The app's other sessions, and a new sign-in, go on.
            #expect(try await api.call(.get, "/v1/installations", bearer: nil, headers: other.headers()).status == .ok)
            let again = try await Self.signIn(api)
            #expect(try await api.call(.get, "/v1/installations", bearer: nil, headers: again.headers()).status == .ok)
            ended.value.withLock { $0 = session }
        }
        // Another node on the same database file and master key refuses it too.
        let session = try #require(ended.value.withLock { $0 })
        let second = try SQLiteStore(path: harness.directory.file("herald.sqlite"), cipher: harness.cipher)
        let clock = harness.clock
        let router = try HeraldApplication.router(
            configuration: harness.configuration, store: second, apps: harness.apps, dispatcher: harness.dispatcher,
            consoleSecret: secret, now: { clock.date }
        ).router
        try await Application(router: router).test(.router) { client in
            let refused = try await API(client: client).call(
                .get, "/v1/installations", bearer: nil, headers: session.headers())
            #expect(refused.status == .unauthorized)
        }
    }

    @Test("A sign-out on one PostgreSQL node ends the session on the other")
    func signOutAcrossNodes() async throws {
        let database = try await PostgresTestDatabase.create()
        let cipher = Fixtures.cipher()
        let storeA = try PostgresStore.started(url: database.url, cipher: cipher)
        let storeB = try PostgresStore.started(url: database.url, cipher: cipher)
        do {
            let harness = try await ServerHarness(store: (storeA, cipher))
            try await storeB.migrate()
            let secret = SymmetricKey(size: .bits256)
            let clock = harness.clock
            let appsB = try await AppDirectory(configuration: harness.configuration, store: storeB, now: { clock.date })
            let nodeB = try HeraldApplication.router(
                configuration: harness.configuration, store: storeB, apps: appsB, dispatcher: harness.dispatcher,
                consoleSecret: secret, now: { clock.date }
            ).router
            let signedIn = SessionBox()
            try await Self.run(harness, secret: secret) { api in
                let session = try await Self.signIn(api)
                signedIn.value.withLock { $0 = session }
            }
            let session = try #require(signedIn.value.withLock { $0 })
            try await Application(router: nodeB).test(.router) { client in
                let accepted = try await API(client: client).call(
                    .get, "/v1/installations", bearer: nil, headers: session.headers())
                #expect(accepted.status == .ok)
            }
            try await Self.run(harness, secret: secret) { api in
                let signedOut = try await api.call(.delete, "/console/session", bearer: nil, headers: session.headers())
                #expect(signedOut.status == .noContent)
            }
            try await Application(router: nodeB).test(.router) { client in
                let refused = try await API(client: client).call(
                    .get, "/console/api/overview", bearer: nil, headers: session.headers())
                #expect(refused.status == .unauthorized)
                #expect(refused.errorCode == "session_expired")
            }
        } catch {
            await storeA.close()
            await storeB.close()
            try? await database.drop()
            throw error
        }
        await storeA.close()
        await storeB.close()
        try await database.drop()
    }

    @Test("The console's page, style sheet and script: content types, no caching surprises, strict CSP, no framing")
    func assets() async throws {
        let harness = try await ServerHarness()
        try await harness.run { api in
            let files: [(String, String, String)] = [
                ("/console", "text/html; charset=utf-8", "<script src=\"/console/console.js\""),
                ("/console/console.css", "text/css; charset=utf-8", ".topbar"),
                ("/console/console.js", "text/javascript; charset=utf-8", "X-CSRF-Token"),
            ]
            for (path, type, excerpt) in files {
                let response = try await api.client.executeRequest(uri: path, method: .get, headers: [:], body: nil)
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == type)
                #expect(response.headers[.cacheControl] == "no-cache")
                let csp = try #require(response.headers[.contentSecurityPolicy])
                #expect(csp.contains("default-src 'self'"))
                #expect(csp.contains("script-src 'self'"))
                #expect(!csp.contains("unsafe-inline"))
                #expect(response.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
                #expect(response.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer")
                #expect(String(buffer: response.body).contains(excerpt))
            }
            // No inline script: every script is a file of the console.
            let page = try await api.client.executeRequest(uri: "/console", method: .get, headers: [:], body: nil)
            let html = String(buffer: page.body)
            #expect(html.components(separatedBy: "<script").count == 2)
            #expect(!html.contains("http://") && !html.contains("https://"))
            // The console's errors carry the same headers, and its data is never cached.
            let error = try await api.call(.get, "/console/api/overview", bearer: nil)
            #expect(error.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
            #expect(error.headers[.cacheControl] == "no-store")
        }
    }

    @Test("Overview and history: outcomes per hour, provider failures, dialects, one device's ledger newest first")
    func overviewAndHistory() async throws {
        let harness = try await EngineHarness()
        let good = Fixtures.apnsToken()
        let bad = Fixtures.apnsToken()
        harness.apns.script(token: bad, .error(status: 400, reason: "BadDeviceToken"))
        try await harness.server.run { api in
            let goodID = try #require(try await api.registerIOS(token: good).string("id"))
            let badID = try #require(try await api.registerIOS(token: bad).string("id"))
            let sent = try await api.call(
                .post, "/v1/notifications",
                body: #"{"target":{"installation_ids":["\#(goodID)","\#(badID)"]},"payload":{"title":"Hi"}}"#)
            #expect(sent.status == .accepted)
            try await harness.drain()
            let session = try await Self.signIn(api)

            let overview = try await api.call(.get, "/console/api/overview", bearer: nil, headers: session.headers())
            #expect(overview.status == .ok)
            #expect(overview.string("app") == "demo")
            let hours = overview["series.hours"]?.consoleItems ?? []
            #expect(hours.count == 1)
            #expect(overview["series.hours.0.sent"] == .number(JSONNumber(1)))
            #expect(overview["series.hours.0.invalid"] == .number(JSONNumber(1)))
            #expect(overview["series.hours.0.notifications"] == .number(JSONNumber(1)))
            #expect(overview.string("failures.0.service") == "apns")
            #expect(overview.string("failures.0.outcome") == "invalid")
            #expect(overview.string("failures.0.reason") == "BadDeviceToken")
            #expect(overview["failures.0.count"] == .number(JSONNumber(1)))
            let dialects = overview["dialects"]?.consoleItems ?? []
            #expect(
                dialects.compactMap { $0.objectValue?["key"]?.consoleText }.sorted() == [
                    "aovis", "argus", "gotify", "home_assistant", "leancloud", "matrix", "ntfy", "sns_api",
                    "unifiedpush",
                ])
            #expect(overview["dialects.0.enabled"] == .bool(true))

            let history = try await api.call(
                .get, "/console/api/installations/\(badID)/history", bearer: nil, headers: session.headers())
            #expect(history.status == .ok)
            #expect(history.string("installation.id") == badID)
            #expect(history.string("installation.token") == nil)
            #expect(history.items.count == 1)
            #expect(history.string("data.0.outcome") == "invalid")
            #expect(history.string("data.0.reason") == "BadDeviceToken")
            #expect(history.string("data.0.notification_id") == sent.string("id"))
            // Successes are kept only with delivery_log: all.
            let quiet = try await api.call(
                .get, "/console/api/installations/\(goodID)/history", bearer: nil, headers: session.headers())
            #expect(quiet.items.isEmpty)
            #expect(quiet["next_cursor"] == .null)
            let missing = try await api.call(
                .get, "/console/api/installations/nope/history", bearer: nil, headers: session.headers())
            #expect(missing.status == .notFound)
            let badLimit = try await api.call(
                .get, "/console/api/installations/\(badID)/history?limit=0", bearer: nil, headers: session.headers())
            #expect(badLimit.status == .badRequest)
            #expect(badLimit.errorCode == "invalid_limit")
            // A client key may not read the console's data.
            let client = try await api.call(.get, "/console/api/overview", bearer: ServerHarness.clientKey)
            #expect(client.status == .forbidden)
            // The dry run the send form uses, under the session.
            let dryRun = try await api.call(
                .post, "/v1/notifications", bearer: nil,
                body: #"{"target":{"all":true,"platforms":["ios"]},"payload":{"title":"x"},"dry_run":true}"#,
                headers: session.headers())
            #expect(dryRun["targeted"] == .number(JSONNumber(1)))
        }
    }

    @Test("/openapi.yaml documents the console's routes and the cookie scheme")
    func documented() async throws {
        let harness = try await ServerHarness()
        try await harness.run { api in
            let response = try await api.client.executeRequest(
                uri: "/openapi.yaml", method: .get, headers: [:], body: nil)
            let yaml = String(buffer: response.body)
            for fragment in [
                "/console/session:", "/console/api/overview:", "/console/api/installations/{id}/history:",
                "cookieAuth:",
                "herald_console", "X-CSRF-Token",
            ] {
                #expect(yaml.contains(fragment), "\(fragment)")
            }
        }
    }
}

/// Carries a session out of a router test's closure.
private final class SessionBox: Sendable {
    let value = Mutex<ConsoleTests.Session?>(nil)
}

extension JSONValue {
    fileprivate var consoleItems: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    fileprivate var consoleText: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}

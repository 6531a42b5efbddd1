import Foundation
import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization
import Testing

@testable import HeraldAOVIS
@testable import HeraldAPI
@testable import HeraldArgusAI

/// An app's own auth service as RFC 7662 describes it: `POST /introspect` with a form-encoded
/// `token`, HTTP Basic client credentials, and a JSON answer with `active` and `sub`.
final class IntrospectionServer: Sendable {
    static let clientID = "herald-gateway"
    static let clientSecret = "s3cret:with spaces&symbols"

    struct State {
        /// Active sessions: token → user.
        var sessions: [String: String] = [:]
        /// Tokens whose check takes longer than any sane timeout.
        var slow: Set<String> = []
        /// Answer every request with this status instead.
        var failWith: Int?
        var requests: [String] = []
        var refusedCredentials = 0
    }

    let state = Mutex(State())

    var requestCount: Int { state.withLock { $0.requests.count } }

    func activate(_ token: String, as user: String) { state.withLock { $0.sessions[token] = user } }
    func revoke(_ token: String) { _ = state.withLock { $0.sessions.removeValue(forKey: token) } }

    var router: Router<BasicRequestContext> {
        let router = Router()
        router.post("introspect") { request, _ -> Response in
            let body = String(buffer: try await request.body.collect(upTo: 64 * 1024))
            var form: [String: String] = [:]
            for pair in body.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1).map {
                    String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
                }
                if parts.count == 2 { form[parts[0]] = parts[1] }
            }
            let expected =
                "Basic "
                + Data("herald-gateway:s3cret%3Awith%20spaces%26symbols".utf8).base64EncodedString()
            let token = form["token"] ?? ""
            let (user, slow, failure, authorized) = self.state.withLock { state in
                state.requests.append(token)
                let authorized =
                    request.headers[.authorization] == expected
                    && request.headers[.contentType] == "application/x-www-form-urlencoded"
                    && form["token_type_hint"] == "access_token"
                if !authorized { state.refusedCredentials += 1 }
                return (state.sessions[token], state.slow.contains(token), state.failWith, authorized)
            }
            if slow { try await Task.sleep(for: .seconds(3)) }
            if let failure { return Response(status: .init(code: failure)) }
            guard authorized else { return Response(status: .unauthorized) }
            let answer: JSONValue =
                user.map { .object(["active": .bool(true), "sub": .string($0), "client_id": .string("argus-app")]) }
                ?? .object(["active": .bool(false)])
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: answer.serialized())))
        }
        return router
    }

    /// Runs `test` with the service listening on a loopback port.
    func run(_ test: @Sendable (_ url: String) async throws -> Void) async throws {
        try await Application(router: router).test(.live) { client in
            let port = try #require(client.port)
            try await test("http://127.0.0.1:\(port)/introspect")
        }
    }
}

@Suite("Opaque session tokens verified by the app's auth service (RFC 7662)", .serialized)
struct SessionIntrospectionTests {
    static let aovisInvalidSession = JSONValue.object(["error": .string("invalid_session")])

    static func configuration(_ url: String, timeoutMilliseconds: Int = 1000) -> IntrospectionConfiguration {
        IntrospectionConfiguration(
            url: url, clientID: IntrospectionServer.clientID, clientSecret: IntrospectionServer.clientSecret,
            cacheSeconds: 30, negativeCacheSeconds: 5, timeoutMilliseconds: timeoutMilliseconds)
    }

    @Test("AOVIS's App Bearer Token and ArgusAI's user auth accept an app's opaque session token; JWTs still work")
    func sessionTokensAuthenticate() async throws {
        let auth = IntrospectionServer()
        auth.activate("sess_opaque_ann_0001", as: "ann")
        try await auth.run { url in
            let harness = try await ServerHarness(introspection: Self.configuration(url))
            let jwt = try await harness.userToken("bob")
            try await harness.run { api in
                let aovis = try await api.aovisRegister(
                    #"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#, bearer: "sess_opaque_ann_0001")
                #expect(aovis.status == .ok)
                let id = try #require(aovis.string("push_token_id"))
                #expect(try await api.call(.get, "/v1/installations/\(id)").string("user_id") == "ann")
                let argus = try await api.call(
                    .post, "/api/v1/push/mobile/register", bearer: "sess_opaque_ann_0001",
                    body: ArgusAIHarness.registration())
                #expect(argus.status == .created)
                let mine = try await api.call(.get, "/v1/installations", bearer: "sess_opaque_ann_0001")
                #expect(mine.items.count == 2)
                // The app's JWTs are verified locally as before, without asking the auth service.
                let before = auth.requestCount
                let bobs = try await api.aovisRegister(
                    #"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#, bearer: jwt)
                #expect(bobs.status == .ok)
                #expect(auth.requestCount == before)
            }
        }
        #expect(auth.state.withLock { $0.refusedCredentials } == 0)
        // One check, then the cache answered.
        #expect(auth.requestCount == 1)
    }

    @Test("A JWT an app signed is never sent to an auth service, even expired or for another audience")
    func signedTokensStayLocal() async throws {
        let auth = IntrospectionServer()
        try await auth.run { url in
            let harness = try await ServerHarness(introspection: Self.configuration(url))
            let expired = try await harness.users.token(
                subject: "bob", now: harness.clock.date.addingTimeInterval(-7200), issuer: ServerHarness.issuer,
                audience: ServerHarness.audience)
            let otherAudience = try await harness.users.token(
                subject: "bob", now: harness.clock.date, issuer: ServerHarness.issuer, audience: "another-service")
            try await harness.run { api in
                for token in [expired, otherAudience] {
                    let refused = try await api.call(.get, "/v1/installations", bearer: token)
                    #expect(refused.status == .unauthorized)
                    #expect(refused.errorCode != "invalid_session")
                }
                // A JWT no key of the app signed is the auth service's to judge.
                let foreign = try await await UserTokenIssuer.hs256(secret: "another-apps-secret-0123456789abcdef")
                    .token(
                        subject: "eve", now: harness.clock.date, issuer: ServerHarness.issuer,
                        audience: ServerHarness.audience)
                #expect(try await api.call(.get, "/v1/installations", bearer: foreign).status == .unauthorized)
            }
        }
        #expect(auth.requestCount == 1)
    }

    @Test("A revoked session stops working once the positive TTL ends; inactive answers are cached for their own TTL")
    func cacheLifetimes() async throws {
        let auth = IntrospectionServer()
        auth.activate("sess_opaque_ann_0002", as: "ann")
        try await auth.run { url in
            let harness = try await ServerHarness(introspection: Self.configuration(url))
            try await harness.run { api in
                let path = "/v1/installations"
                #expect(try await api.call(.get, path, bearer: "sess_opaque_ann_0002").status == .ok)
                auth.revoke("sess_opaque_ann_0002")
                harness.clock.advance(by: .seconds(29))
                #expect(try await api.call(.get, path, bearer: "sess_opaque_ann_0002").status == .ok)
                #expect(auth.requestCount == 1)
                harness.clock.advance(by: .seconds(2))
                let revoked = try await api.call(.get, path, bearer: "sess_opaque_ann_0002")
                #expect(revoked.status == .unauthorized)
                #expect(revoked.errorCode == "invalid_session")
                #expect(auth.requestCount == 2)
                // The inactive answer is remembered for the negative TTL, then asked again.
                #expect(try await api.call(.get, path, bearer: "sess_opaque_ann_0002").status == .unauthorized)
                #expect(auth.requestCount == 2)
                auth.activate("sess_opaque_ann_0002", as: "ann")
                harness.clock.advance(by: .seconds(6))
                #expect(try await api.call(.get, path, bearer: "sess_opaque_ann_0002").status == .ok)
                #expect(auth.requestCount == 3)
                // An unknown session is refused with the dialect's own body.
                let aovis = try await api.aovisRegister(
                    #"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#, bearer: "sess_never_issued")
                #expect(aovis.status == .unauthorized)
                #expect(aovis.json == Self.aovisInvalidSession)
            }
        }
    }

    @Test("An auth service that times out or fails answers 401 invalid_session, never 500, and is not cached")
    func failingAuthService() async throws {
        let auth = IntrospectionServer()
        auth.activate("sess_slow_0003", as: "ann")
        auth.state.withLock { $0.slow.insert("sess_slow_0003") }
        auth.activate("sess_opaque_ann_0004", as: "ann")
        try await auth.run { url in
            let harness = try await ServerHarness(introspection: Self.configuration(url, timeoutMilliseconds: 200))
            try await harness.run { api in
                let started = ContinuousClock.now
                let native = try await api.call(.get, "/v1/installations", bearer: "sess_slow_0003")
                #expect(native.status == .unauthorized)
                #expect(native.errorCode == "invalid_session")
                #expect(ContinuousClock.now - started < .seconds(3), "the timeout ends the wait")
                let aovis = try await api.aovisRegister(
                    #"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#, bearer: "sess_slow_0003")
                #expect(aovis.status == .unauthorized)
                #expect(aovis.json == Self.aovisInvalidSession)
                auth.state.withLock { $0.failWith = 503 }
                let argus = try await api.call(
                    .post, "/api/v1/push/mobile/register", bearer: "sess_opaque_ann_0004",
                    body: ArgusAIHarness.registration())
                #expect(argus.status == .unauthorized)
                #expect(argus.errorCode == "invalid_session")
                // Once the service is back, the same session works at once: failures are not cached.
                auth.state.withLock { $0.failWith = nil }
                #expect(try await api.call(.get, "/v1/installations", bearer: "sess_opaque_ann_0004").status == .ok)
                #expect(try await api.call(.get, "/v1/installations").items.isEmpty)
            }
        }
    }

    @Test("Introspection settings: read under app.<id>.introspection, refused naming the key")
    func settings() async throws {
        let configuration = try await HeraldConfiguration.load(
            file: nil,
            environment: [
                "HERALD_APP_DEFAULT_INTROSPECTION_URL": "https://id.example.com/oauth2/introspect",
                "HERALD_APP_DEFAULT_INTROSPECTION_CLIENT_ID": "herald",
                "HERALD_APP_DEFAULT_INTROSPECTION_CLIENT_SECRET": "secret",
                "HERALD_APP_DEFAULT_INTROSPECTION_CACHE_SECONDS": "15",
            ])
        let introspection = try #require(configuration.defaultAppUserTokens.introspection)
        #expect(introspection.url == "https://id.example.com/oauth2/introspect")
        #expect(introspection.cacheSeconds == 15)
        #expect(introspection.negativeCacheSeconds == 10)
        #expect(introspection.timeoutMilliseconds == 2000)
        #expect(
            try await HeraldConfiguration.load(file: nil, environment: [:]).defaultAppUserTokens.introspection == nil)
        for (environment, key) in [
            (["HERALD_APP_DEFAULT_INTROSPECTION_URL": "ftp://id"], "app.default.introspection.url"),
            (
                [
                    "HERALD_APP_DEFAULT_INTROSPECTION_URL": "https://id/i",
                    "HERALD_APP_DEFAULT_INTROSPECTION_TIMEOUT_MS": "5",
                ],
                "app.default.introspection.timeout_ms"
            ),
            (
                [
                    "HERALD_APP_DEFAULT_INTROSPECTION_URL": "https://id/i",
                    "HERALD_APP_DEFAULT_INTROSPECTION_CLIENT_ID": "x",
                ],
                "app.default.introspection.client_secret"
            ),
        ] {
            let error = await #expect(throws: HeraldError.self) {
                try await HeraldConfiguration.load(file: nil, environment: environment)
            }
            #expect(error?.field == key)
        }
    }
}

import Foundation
import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import HeraldAOVIS
@testable import HeraldAPI
@testable import HeraldLeanCloud

/// `app.<id>.registrations_per_minute` and `http.auth_failures_per_minute` at their boundaries, through
/// the real router, on every surface they cover.
@Suite("Rate limits: registrations per caller, refused credentials per address")
struct RateLimitTests {
    /// The harness's app behind the real router with `configuration`, on the harness's clock: in memory
    /// (`.router`), or on a real socket (`.live`).
    static func run(
        _ harness: ServerHarness, configuration: HeraldConfiguration, _ mode: TestingSetup = .router,
        _ test: @Sendable (API) async throws -> Void
    ) async throws {
        let clock = harness.clock
        let router = try HeraldApplication.router(
            configuration: configuration, store: harness.store, apps: harness.apps, dispatcher: harness.dispatcher,
            now: { clock.date }
        ).router
        try await Application(router: router).test(mode) { client in try await test(API(client: client)) }
    }

    @Test("Registrations: N per minute per client address and per user, then 429 with Retry-After; keys refill")
    func registrations() async throws {
        let harness = try await ServerHarness(dialects: LeanCloudClient.dialects())
        var configuration = harness.configuration
        configuration.registrationsPerMinute = ["demo": 2]
        try await Self.run(harness, configuration: configuration) { api in
            // The client key: two, then refused, and nothing stored for the third.
            for _ in 0..<2 {
                #expect(try await api.registerIOS(bearer: ServerHarness.clientKey).status == .created)
            }
            let refusedToken = Fixtures.apnsToken()
            let refused = try await api.registerIOS(token: refusedToken, bearer: ServerHarness.clientKey)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.errorCode == "rate_limited")
            #expect(Int(refused.headers[.retryAfter] ?? "") == 30)
            let stored = try await api.call(.get, "/v1/installations?limit=100").items
            #expect(stored.count == 2)
            // Users count each on their own; the server key is not limited.
            let alice = try await harness.userToken("alice")
            let bob = try await harness.userToken("bob")
            for _ in 0..<2 { #expect(try await api.registerIOS(bearer: alice).status == .created) }
            #expect(try await api.registerIOS(bearer: alice).status == .tooManyRequests)
            #expect(try await api.registerIOS(bearer: bob).status == .created)
            for _ in 0..<3 { #expect(try await api.registerIOS().status == .created) }
            // AOVIS's register route counts the same user's allowance and answers the guide's shape.
            let aovis = try await api.call(
                .post, "/api/internal/push/register", bearer: alice,
                body: #"{"platform":"android","token":"\#(Fixtures.fcmToken())"}"#)
            #expect(aovis.status == .tooManyRequests)
            #expect(aovis.json == .object(["error": .string("rate_limited")]))
            #expect(aovis.headers[.retryAfter] != nil)
            // LeanCloud's app key counts per address like the client key, in the same allowance (the address
            // spent it above); the master key is not limited.
            let leanCloud = LeanCloudClient(client: api.client, now: { harness.clock.date })
            func save(_ auth: LeanCloudClient.Auth) async throws -> CallResponse {
                try await leanCloud.call(
                    .post, "/1.1/installations", auth: auth,
                    body: #"{"deviceType":"ios","deviceToken":"\#(Fixtures.apnsToken())"}"#)
            }
            let lcRefused = try await save(.appKey)
            #expect(lcRefused.status == .tooManyRequests)
            #expect(lcRefused["code"] == .number(JSONNumber(429)))
            #expect(Int(lcRefused.headers[.retryAfter] ?? "") == 30)
            #expect(try await save(.masterKey).status == .created)

            // One registration's worth refills in 30 s (two a minute).
            harness.clock.advance(by: .seconds(30))
            #expect(try await save(.appKey).status == .created)
            #expect(try await api.registerIOS(bearer: ServerHarness.clientKey).status == .tooManyRequests)
            #expect(try await api.registerIOS(bearer: alice).status == .created)
        }
    }

    @Test("Without registrations_per_minute nothing is limited")
    func registrationsUnlimited() async throws {
        let harness = try await ServerHarness()
        try await harness.run { api in
            for _ in 0..<20 {
                let response = try await api.registerIOS(bearer: ServerHarness.clientKey)
                #expect(response.status == .created)
            }
        }
    }

    @Test("Refused credentials: N per minute per address on any surface, then 429 in each surface's shape")
    func authFailures() async throws {
        let harness = try await ServerHarness()
        var configuration = harness.configuration
        configuration.http.authFailuresPerMinute = 3
        try await Self.run(harness, configuration: configuration) { api in
            // One refusal of each kind: a wrong key (401), an unsigned SNS call (403), an unknown relay token (404).
            let wrong = try await api.call(.get, "/v1/installations", bearer: "hsk_wrong-key-0123456789")
            #expect(wrong.status == .unauthorized)
            // A success costs nothing, and a 403 of a known key is not a refused credential.
            #expect(try await api.call(.get, "/v1/installations").status == .ok)
            #expect(try await api.call(.get, "/v1/notifications", bearer: ServerHarness.clientKey).status == .forbidden)
            let unsigned = try await raw(api, .post, "/sns", body: "Action=ListPlatformApplications")
            #expect(unsigned.status == .forbidden)
            let unknown = try await api.call(
                .post, "/ha/push/rate_limits", bearer: nil, body: #"{"push_token":"\#(Fixtures.apnsToken())"}"#)
            #expect(unknown.status == .notFound)

            // The allowance is spent: every surface answers 429 in its shape, whatever the credential.
            let native = try await api.call(.get, "/v1/installations")
            #expect(native.status == .tooManyRequests)
            #expect(native.errorCode == "rate_limited")
            #expect(Int(native.headers[.retryAfter] ?? "") == 20)
            let argus = try await api.call(.get, "/api/v1/devices", bearer: try await harness.userToken("alice"))
            #expect(argus.status == .tooManyRequests)
            #expect(argus.errorCode == "rate_limited")
            let aovis = try await api.call(
                .post, "/api/internal/push/register", bearer: try await harness.userToken("alice"),
                body: #"{"platform":"android","token":"\#(Fixtures.fcmToken())"}"#)
            #expect(aovis.status == .tooManyRequests)
            #expect(aovis.json == .object(["error": .string("rate_limited")]))
            let leanCloud = try await api.call(
                .get, "/1.1/installations", bearer: nil,
                headers: [HTTPField.Name("X-LC-Id")!: "any", HTTPField.Name("X-LC-Key")!: "any"])
            #expect(leanCloud.status == .tooManyRequests)
            #expect(leanCloud["code"] == .number(JSONNumber(429)))
            let sns = try await raw(api, .post, "/sns", body: "Action=ListPlatformApplications")
            #expect(sns.status == .tooManyRequests)
            #expect(sns.body.contains("<Code>Throttled</Code>"))
            #expect(sns.headers[.retryAfter] != nil)
            let relay = try await api.call(
                .post, "/ha/push", bearer: nil, body: #"{"push_token":"\#(Fixtures.apnsToken())","message":"hi"}"#)
            #expect(relay.status == .tooManyRequests)
            #expect(relay.string("errorType") == "RateLimited")
            // Public routes are never limited.
            #expect(try await api.call(.get, "/healthz", bearer: nil).status == .ok)

            // A token comes back every 20 s (three a minute).
            harness.clock.advance(by: .seconds(20))
            #expect(try await api.call(.get, "/v1/installations").status == .ok)
            #expect(
                try await api.call(.get, "/v1/installations", bearer: "hsk_wrong-again-0123456789").status
                    == .unauthorized)
            #expect(try await api.call(.get, "/v1/installations").status == .tooManyRequests)
        }
    }

    /// A call whose body is read as text (the SNS API answers XML).
    func raw(
        _ api: API, _ method: HTTPRequest.Method, _ uri: String, body: String
    ) async throws -> (status: HTTPResponse.Status, headers: HTTPFields, body: String) {
        let response = try await api.client.executeRequest(
            uri: uri, method: method, headers: [.contentType: "application/x-www-form-urlencoded"],
            body: ByteBuffer(string: body))
        return (response.status, response.headers, String(buffer: response.body))
    }
}

/// `http.trusted_proxies`: behind a listed reverse proxy the per-address limits count each client the
/// proxy names in `X-Forwarded-For`; from any other peer the header is ignored. Over real sockets (the
/// peer is 127.0.0.1).
@Suite("Trusted proxies: X-Forwarded-For from listed proxies only")
struct TrustedProxyTests {
    static func serve(
        proxies: [String], _ test: @Sendable (API) async throws -> Void
    ) async throws {
        let harness = try await ServerHarness()
        var configuration = harness.configuration
        configuration.http.authFailuresPerMinute = 2
        configuration.http.trustedProxies = try TrustedProxies(proxies)
        try await RateLimitTests.run(harness, configuration: configuration, .live, test)
    }

    static func installations(
        _ api: API, key: String = ServerHarness.serverKey, from forwarded: String?
    )
        async throws -> HTTPResponse.Status
    {
        var headers: HTTPFields = [:]
        if let forwarded { headers[HTTPField.Name("X-Forwarded-For")!] = forwarded }
        return try await api.call(.get, "/v1/installations", bearer: key, headers: headers).status
    }

    static let wrongKey = "hsk_wrong-key-0123456789"

    @Test("Behind a trusted proxy each forwarded client has its own allowance, and cannot pick another")
    func forwardedClients() async throws {
        try await Self.serve(proxies: ["127.0.0.1", "10.0.0.0/8"]) { api async throws in
            #expect(try await Self.installations(api, key: Self.wrongKey, from: "203.0.113.7") == .unauthorized)
            #expect(try await Self.installations(api, key: Self.wrongKey, from: "203.0.113.7") == .unauthorized)
            #expect(try await Self.installations(api, from: "203.0.113.7") == .tooManyRequests)
            // Another client behind the same proxy is not held back.
            #expect(try await Self.installations(api, from: "203.0.113.8") == .ok)
            // A client writing its own X-Forwarded-For before the proxy appends its address gains nothing:
            // the rightmost address that is not a listed proxy is the client.
            #expect(try await Self.installations(api, from: "198.51.100.1, 203.0.113.7") == .tooManyRequests)
            // Through two listed proxies (an edge proxy at 10.1.2.3 in front of the local one).
            #expect(try await Self.installations(api, from: "203.0.113.7, 10.1.2.3") == .tooManyRequests)
            #expect(try await Self.installations(api, from: "203.0.113.9, 10.1.2.3") == .ok)
        }
    }

    @Test("From a peer that is not a listed proxy, X-Forwarded-For is ignored")
    func untrustedPeer() async throws {
        for proxies in [[], ["192.0.2.1", "::1/128"]] {
            try await Self.serve(proxies: proxies) { api async throws in
                #expect(try await Self.installations(api, key: Self.wrongKey, from: "203.0.113.1") == .unauthorized)
                #expect(try await Self.installations(api, key: Self.wrongKey, from: "203.0.113.2") == .unauthorized)
                // Every request counted as 127.0.0.1's, whatever it claims.
                #expect(try await Self.installations(api, from: "203.0.113.3") == .tooManyRequests)
            }
        }
    }

    @Test("Addresses and blocks, IPv4-mapped peers, chains and malformed entries")
    func matching() throws {
        let proxies = try TrustedProxies(["10.0.0.0/8", "192.168.1.5", "fd00::/8", " 127.0.0.1 "])
        #expect(proxies.contains("10.255.0.1"))
        #expect(!proxies.contains("11.0.0.1"))
        #expect(proxies.contains("192.168.1.5"))
        #expect(!proxies.contains("192.168.1.6"))
        #expect(proxies.contains("fd12:3456::1"))
        #expect(!proxies.contains("fe80::1"))
        #expect(proxies.contains("::ffff:10.1.1.1"))
        #expect(proxies.contains("127.0.0.1"))
        #expect(!proxies.contains("not-an-address"))
        #expect(proxies.client(peer: "10.0.0.1", forwardedFor: ["203.0.113.5"]) == "203.0.113.5")
        #expect(
            proxies.client(peer: "10.0.0.1", forwardedFor: ["1.1.1.1", "203.0.113.5, 192.168.1.5"]) == "203.0.113.5")
        #expect(proxies.client(peer: "10.0.0.1", forwardedFor: ["2001:db8::1, 10.2.2.2"]) == "2001:db8::1")
        // Nothing forwarded, or only proxies: the last proxy is the client.
        #expect(proxies.client(peer: "10.0.0.1", forwardedFor: []) == "10.0.0.1")
        #expect(proxies.client(peer: "10.0.0.1", forwardedFor: ["10.0.0.2"]) == "10.0.0.2")
        // A hop that is not an address ends the walk at the proxy that passed it on.
        #expect(proxies.client(peer: "10.0.0.1", forwardedFor: ["203.0.113.5, unknown"]) == "10.0.0.1")
        // An untrusted peer is the client whatever it forwards.
        #expect(proxies.client(peer: "203.0.113.5", forwardedFor: ["1.2.3.4"]) == "203.0.113.5")
        #expect(TrustedProxies.none.isEmpty)

        for bad in ["10.0.0.0/33", "fd00::/129", "10.0.0.0/x", "proxy.example.com", ""] {
            #expect(throws: HeraldError.self) { try TrustedProxies([bad]) }
        }
        let error = #expect(throws: HeraldError.self) { try TrustedProxies(["10.0.0.0/8", "nope"]) }
        #expect(error?.code == "invalid_configuration")
        #expect(error?.field == "http.trusted_proxies")
        #expect(error?.message.contains("`nope`") == true)
    }
}

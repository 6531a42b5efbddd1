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
    static func run(
        _ harness: ServerHarness, configuration: HeraldConfiguration, _ test: @Sendable (API) async throws -> Void
    ) async throws {
        let clock = harness.clock
        let router = HeraldApplication.router(
            configuration: configuration, store: harness.store, apps: harness.apps, dispatcher: harness.dispatcher,
            now: { clock.now }
        ).router
        try await Application(router: router).test(.router) { client in try await test(API(client: client)) }
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
            let leanCloud = LeanCloudClient(client: api.client, now: { harness.clock.now })
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
            harness.clock.advance(by: 30)
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
            harness.clock.advance(by: 20)
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

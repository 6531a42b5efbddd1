import AsyncHTTPClient
import HeraldProviderMocks
import HeraldTestSupport
import NIOCore
import NIOHTTP1
import Testing

@Suite("MockAPNsServer: certificate-based authentication")
struct MockAPNsServerCertificateTests {
    /// The app of the provider certificate; the harness's auth key is for ``APNsHarness/topic``.
    static let certifiedApp = "com.example.certified"

    /// Runs `body` with a client of the harness's mock that presents a provider certificate for ``certifiedApp``.
    static func withCertificateClient(
        _ apns: APNsHarness, _ body: (HTTPClient) async throws -> Void
    ) async throws {
        let certificate = try apns.ca.apnsCertificate(bundleID: certifiedApp)
        let client = makeHTTPClient(trusting: apns.ca, presenting: certificate)
        do {
            try await body(client)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    /// A request that passes every check but authentication, with no `authorization` header, to `topic`.
    static func request(_ apns: APNsHarness, topic: String = certifiedApp) async throws -> APNsRequest {
        var request = try await apns.request()
        request.set("authorization", nil)
        request.set("apns-topic", topic)
        return request
    }

    @Test("Without authorization, the client certificate authenticates the request for its app and its topics")
    func certificateAuthenticates() async throws {
        try await APNsHarness.run { apns async throws in
            try await Self.withCertificateClient(apns) { client in
                let alert = try await client.send(Self.request(apns), to: apns)
                #expect(alert.status == 200)
                var voip = try await Self.request(apns, topic: Self.certifiedApp + ".voip")
                voip.set("apns-push-type", "voip")
                #expect(try await client.send(voip, to: apns).status == 200)
            }
            let recorded = apns.server.requests
            #expect(recorded.count == 2)
            for request in recorded {
                #expect(request.status == 200)
                #expect(request.header("authorization") == nil)
                #expect(request.providerToken == nil)
                #expect(request.authentication == .certificate(bundleID: Self.certifiedApp))
            }
        }
    }

    @Test("The certificate covers its own app only: another app's topic is TopicDisallowed")
    func otherAppsTopic() async throws {
        try await APNsHarness.run { apns async throws in
            try await Self.withCertificateClient(apns) { client in
                let reply = try await client.send(Self.request(apns, topic: APNsHarness.topic), to: apns)
                #expect(reply.status == 400)
                #expect(reply.string("reason") == "TopicDisallowed")
            }
            #expect(apns.server.requests.first?.authentication == .certificate(bundleID: Self.certifiedApp))
        }
    }

    @Test("On a certificate connection, a request with authorization is judged by its provider token")
    func tokenWinsOverCertificate() async throws {
        try await APNsHarness.run { apns async throws in
            try await Self.withCertificateClient(apns) { client in
                #expect(try await client.send(apns.request(), to: apns).status == 200)
                var certifiedTopic = try await apns.request()
                certifiedTopic.set("apns-topic", Self.certifiedApp)
                let disallowed = try await client.send(certifiedTopic, to: apns)
                #expect(disallowed.status == 400)
                #expect(disallowed.string("reason") == "TopicDisallowed")
                var invalid = try await Self.request(apns)
                invalid.set("authorization", "bearer not-a-jwt")
                let refused = try await client.send(invalid, to: apns)
                #expect(refused.status == 403)
                #expect(refused.string("reason") == "InvalidProviderToken")
            }
            let recorded = apns.server.requests
            #expect(recorded.count == 3)
            #expect(recorded.map(\.authentication) == [.token(keyID: "KEY1234567"), .token(keyID: "KEY1234567"), nil])
        }
    }

    @Test("With neither certificate nor token: 403 MissingProviderToken")
    func neither() async throws {
        try await APNsHarness.run { apns async throws in
            let reply = try await apns.send(Self.request(apns))
            #expect(reply.status == 403)
            #expect(reply.string("reason") == "MissingProviderToken")
            let recorded = try #require(apns.server.requests.first)
            #expect(recorded.authentication == nil)
        }
    }

    @Test("A certificate another CA issued fails the TLS handshake; the mock records nothing")
    func foreignCertificate() async throws {
        try await APNsHarness.run { apns async throws in
            let foreign = try TestCertificateAuthority().apnsCertificate(bundleID: Self.certifiedApp)
            let client = makeHTTPClient(trusting: apns.ca, presenting: foreign)
            // The client keeps retrying the handshake until its deadline; a short one keeps the test fast.
            await #expect(throws: (any Error).self) {
                try await client.send(
                    .POST, apns.server.baseURL + "/3/device/\(Fixtures.apnsToken())", timeout: .milliseconds(500))
            }
            try await client.shutdown()
            #expect(apns.server.requests.isEmpty)
        }
    }
}

extension HTTPClient {
    /// Sends an APNs request to the harness's mock.
    fileprivate func send(_ request: APNsRequest, to apns: APNsHarness) async throws -> Reply {
        try await send(
            request.method, apns.server.baseURL + request.path, headers: request.headers,
            body: request.method == .POST ? request.body : nil)
    }
}

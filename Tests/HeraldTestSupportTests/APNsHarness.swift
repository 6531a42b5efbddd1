import AsyncHTTPClient
import Foundation
import HeraldProviderMocks
import HeraldTestSupport
import NIOHTTP1

/// A request to the APNs mock, built from defaults that pass every check; tests change one thing.
struct APNsRequest: Sendable {
    var method: HTTPMethod = .POST
    var path: String
    var headers: [(String, String)]
    var body: [UInt8] = Array(#"{"aps":{"alert":{"title":"Hello","body":"From Herald"}}}"#.utf8)

    /// Replaces (or with nil removes) every value of the header `name`.
    mutating func set(_ name: String, _ value: String?) {
        headers.removeAll { $0.0 == name }
        if let value { headers.append((name, value)) }
    }
}

/// A running APNs mock with a client and a provider key it accepts.
struct APNsHarness: Sendable {
    static let topic = "com.example.herald"

    let ca: TestCertificateAuthority
    let key: TestAPNsAuthKey
    let server: MockAPNsServer
    let client: HTTPClient

    /// Starts a mock and a client, runs `body`, then shuts both down.
    static func run(_ body: (APNsHarness) async throws -> Void) async throws {
        let ca = try TestCertificateAuthority()
        let key = TestAPNsAuthKey(teamID: "TEAM123456", keyID: "KEY1234567")
        let server = try await MockAPNsServer.start(ca: ca, credentials: [key.credential(topics: [topic])])
        let client = makeHTTPClient(trusting: ca)
        let harness = APNsHarness(ca: ca, key: key, server: server, client: client)
        do {
            try await body(harness)
        } catch {
            try? await client.shutdown()
            try? await server.shutdown()
            throw error
        }
        try await client.shutdown()
        try await server.shutdown()
    }

    /// A request that APNs accepts, to `token`.
    func request(token: String = Fixtures.apnsToken(), providerToken: String? = nil) async throws -> APNsRequest {
        let jwt: String
        if let providerToken {
            jwt = providerToken
        } else {
            jwt = try await key.providerToken()
        }
        return APNsRequest(
            path: "/3/device/\(token)",
            headers: [
                ("authorization", "bearer \(jwt)"), ("apns-topic", Self.topic), ("apns-push-type", "alert"),
                ("apns-priority", "10"), ("apns-expiration", "0"),
            ])
    }

    func send(_ request: APNsRequest) async throws -> Reply {
        try await client.send(
            request.method, server.baseURL + request.path, headers: request.headers,
            body: request.method == .POST ? request.body : nil)
    }

    /// Sends a default request to `token`.
    func send(token: String = Fixtures.apnsToken()) async throws -> Reply {
        try await send(request(token: token))
    }
}

import AsyncHTTPClient
import Foundation
import HeraldProviderMocks
import HeraldTestSupport
import NIOHTTP1

/// A running FCM mock with a client, for the shared test service account.
struct FCMHarness: Sendable {
    /// One account for every test: RSA key generation is slow in debug builds.
    static let account = try! TestServiceAccount(projectID: "herald-test")

    let ca: TestCertificateAuthority
    let server: MockFCMServer
    let client: HTTPClient

    /// Starts a mock and a client, runs `body`, then shuts both down.
    static func run(_ body: (FCMHarness) async throws -> Void) async throws {
        let ca = try TestCertificateAuthority()
        let server = try await MockFCMServer.start(ca: ca, serviceAccount: account)
        let client = makeHTTPClient(trusting: ca)
        let harness = FCMHarness(ca: ca, server: server, client: client)
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

    /// Posts a token request with the given form fields.
    func exchange(_ fields: [(String, String)]) async throws -> Reply {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let form = fields.map { name, value in
            "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value)"
        }.joined(separator: "&")
        return try await client.send(
            .POST, server.tokenURI, headers: [("content-type", "application/x-www-form-urlencoded")],
            body: Array(form.utf8))
    }

    /// Posts an assertion with the JWT-bearer grant.
    func exchange(assertion: String) async throws -> Reply {
        try await exchange([("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"), ("assertion", assertion)])
    }

    /// Exchanges a fresh assertion for an access token.
    func accessToken() async throws -> String {
        let reply = try await exchange(assertion: Self.account.assertion(tokenURI: server.tokenURI))
        guard reply.status == 200, let token = reply.string("access_token") else {
            throw HarnessError(message: "token exchange failed: \(String(decoding: reply.body, as: UTF8.self))")
        }
        return token
    }

    /// Sends a `messages:send` body.
    func send(_ body: String, accessToken: String?, project: String? = nil) async throws -> Reply {
        var headers = [("content-type", "application/json")]
        if let accessToken { headers.append(("authorization", "Bearer \(accessToken)")) }
        let url = server.baseURL + "/v1/projects/\(project ?? server.projectID)/messages:send"
        return try await client.send(.POST, url, headers: headers, body: Array(body.utf8))
    }

    /// Sends a data message to `token`.
    func send(token: String, accessToken: String) async throws -> Reply {
        try await send(#"{"message":{"token":"\#(token)","data":{"kind":"ping"}}}"#, accessToken: accessToken)
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

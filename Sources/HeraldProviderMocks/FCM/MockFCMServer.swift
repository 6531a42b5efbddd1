import HeraldTestSupport
import JWTKit

/// A stand-in for FCM HTTP v1 (fcm.googleapis.com) and Google's OAuth token endpoint (oauth2.googleapis.com) on one
/// HTTP/2-over-TLS port of 127.0.0.1, for tests: service-account token exchange, `projects.messages.send` with FCM's
/// checks and `google.rpc.Status` errors, scripts for token-level and connection-level answers, and a log of every
/// request.
///
/// ```swift
/// let account = try TestServiceAccount(projectID: "herald-test")
/// let fcm = try await MockFCMServer.start(ca: ca, serviceAccount: account)
/// let json = account.json(tokenURI: fcm.tokenURI)  // what the client under test is configured with
/// fcm.script(token: oldToken, .unregistered)
/// ```
public final class MockFCMServer: MockHTTP2Server {
    private let server: HTTP2TestServer

    /// The HTTP/2 + TLS server the mock answers on.
    public var http2Server: HTTP2TestServer { server }
    private let endpoint: FCMEndpoint

    /// The project the mock serves; sends to other projects get `403 PERMISSION_DENIED`.
    public let projectID: String

    private init(server: HTTP2TestServer, endpoint: FCMEndpoint, projectID: String) {
        self.server = server
        self.endpoint = endpoint
        self.projectID = projectID
    }

    /// Starts a mock on an ephemeral port of 127.0.0.1, with a TLS certificate from `ca` for `localhost` and
    /// `127.0.0.1`.
    /// - Parameters:
    ///   - projectID: The Firebase project the send endpoint serves.
    ///   - serviceAccountPublicKey: The key that verifies the RS256 assertions of the token endpoint.
    ///   - clientEmail: The service account's `client_email`, which assertions must carry as `iss`.
    ///   - maxConcurrentStreams: The SETTINGS_MAX_CONCURRENT_STREAMS each connection starts with.
    /// - Throws: When the certificate cannot be issued or the port cannot be bound.
    public static func start(
        ca: TestCertificateAuthority, projectID: String, serviceAccountPublicKey: Insecure.RSA.PublicKey,
        clientEmail: String, maxConcurrentStreams: Int = 100
    ) async throws -> MockFCMServer {
        let oauth = await GoogleOAuthEndpoint(publicKey: serviceAccountPublicKey, clientEmail: clientEmail)
        let endpoint = FCMEndpoint(projectID: projectID, oauth: oauth)
        let server = try await HTTP2TestServer.start(
            tls: try ca.serverTLSConfiguration(), maxConcurrentStreams: maxConcurrentStreams
        ) { request in
            await endpoint.respond(to: request)
        }
        oauth.tokenURI = "https://127.0.0.1:\(server.port)/token"
        return MockFCMServer(server: server, endpoint: endpoint, projectID: projectID)
    }

    /// Starts a mock for `serviceAccount`'s project, key and email.
    /// - Throws: When the certificate cannot be issued or the port cannot be bound.
    public static func start(
        ca: TestCertificateAuthority, serviceAccount: TestServiceAccount, maxConcurrentStreams: Int = 100
    ) async throws -> MockFCMServer {
        try await start(
            ca: ca, projectID: serviceAccount.projectID, serviceAccountPublicKey: serviceAccount.publicKey,
            clientEmail: serviceAccount.clientEmail, maxConcurrentStreams: maxConcurrentStreams)
    }

    /// The token endpoint, `<baseURL>/token`: the service account's `token_uri` and the assertion's `aud`.
    public var tokenURI: String { baseURL + "/token" }

    /// The send URL for the mock's project.
    public var sendURL: String { baseURL + "/v1/projects/\(projectID)/messages:send" }

    // MARK: Recording

    /// Every FCM API request received so far, oldest first, whatever the answer; token-endpoint requests are counted
    /// in ``tokenRequestCount`` instead.
    public var requests: [RecordedRequest] { endpoint.log.records }

    /// How many requests the token endpoint has received, valid or not.
    public var tokenRequestCount: Int { endpoint.oauth.requestCount }

    /// Waits until at least `count` FCM API requests have been received.
    /// - Throws: ``MockServerError`` (``MockServerError/isTimeout``) when `timeout` passes first.
    public func waitForRequests(count: Int, timeout: Duration = .seconds(10)) async throws {
        try await endpoint.log.wait(forCount: count, timeout: timeout)
    }

    // MARK: Token scripts

    /// Scripts the answer to the next sends to the registration `token`.
    ///
    /// Scripts for one token queue up in call order; each answers `times` sends (nil: every later send, so later
    /// scripts for the token never play). A script only answers sends that pass authentication and FCM's checks.
    public func script(token: String, _ response: ScriptedResponse, times: Int? = nil) {
        endpoint.script(token: token, response, times: times)
    }

    /// Removes every token script.
    public func clearScripts() {
        endpoint.clearScripts()
    }

    /// Sets `expires_in` (seconds) of the next access tokens, one value per token in order; later tokens get the
    /// usual 3599. The mock enforces it: a token used at or after its expiry gets `401 UNAUTHENTICATED`, so 0
    /// issues a token that is already expired.
    public func scriptAccessTokenLifetimes(_ seconds: [Int]) {
        endpoint.oauth.scriptLifetimes(seconds)
    }

    /// Revokes every access token issued so far: the next send with one of them gets `401 UNAUTHENTICATED`.
    public func revokeAccessTokens() {
        endpoint.oauth.revokeAll()
    }
}

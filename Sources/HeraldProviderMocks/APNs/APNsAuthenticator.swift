import Foundation

/// Authenticates a request to the APNs mocks the way APNs does on all its hosts (device pushes, broadcasts,
/// channel management), and says which topics its credential covers.
///
/// A request with an `authorization` header is judged by its provider token, whatever the connection; one without is
/// judged by the connection's client certificate (NIOSSL has already checked that the mock's CA issued it), which
/// covers the app in its subject's UID. With neither, APNs answers `MissingProviderToken`.
struct APNsAuthenticator: Sendable {
    /// What authentication found.
    struct Outcome: Sendable {
        /// The provider token's claims, when its signature verified (even if it had expired).
        var claims: ProviderTokenClaims?
        /// How the request authenticated; nil when it did not.
        var authentication: MockAPNsServer.RecordedRequest.Authentication?
        /// The bundle IDs the credential covers, or the rejection.
        var topics: Result<Set<String>, APNsRejection>
    }

    private let verifier: ProviderTokenVerifier

    init(credentials: [MockAPNsServer.Credential]) async throws {
        verifier = try await ProviderTokenVerifier(credentials: credentials)
    }

    func authenticate(_ request: TestHTTPRequest) async -> Outcome {
        let authorization = request.header("authorization")
        if authorization?.isEmpty ?? true, let certificate = request.clientCertificate {
            guard let bundleID = TestAPNsCertificate.bundleID(of: certificate) else {
                return Outcome(topics: .failure(.badCertificate))
            }
            return Outcome(authentication: .certificate(bundleID: bundleID), topics: .success([bundleID]))
        }
        let (verified, tokenRejection) = await verifier.verify(authorization: authorization, now: Date())
        if let tokenRejection { return Outcome(claims: verified?.claims, topics: .failure(tokenRejection)) }
        guard let verified else { return Outcome(topics: .failure(.invalidProviderToken)) }
        return Outcome(
            claims: verified.claims, authentication: .token(keyID: verified.claims.keyID),
            topics: .success(verified.credential.topics))
    }
}

import AsyncHTTPClient
import Foundation
import HeraldCore
import JWTKit
import NIOCore
import NIOHTTP1
import NIOSSL

/// OAuth 2.0 access tokens for FCM from a service account: an RS256 assertion (RFC 7523) with the
/// `firebase.messaging` scope, exchanged at the account's `token_uri`. A token is reused until
/// five minutes before it expires; concurrent callers share one exchange.
public actor FCMAccessToken {
    /// The OAuth scope FCM's HTTP v1 API requires.
    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// Renew this long before expiry.
    public static let renewalMargin: TimeInterval = 5 * 60

    private struct Assertion: JWTPayload {
        var iss: String
        var scope: String
        var aud: String
        var iat: Int
        var exp: Int

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    private let account: FCMServiceAccount
    private let httpClient: HTTPClient
    private let tls: TLSConfiguration?
    private let now: @Sendable () -> Date
    private let keys = JWTKeyCollection()
    private var keyLoaded = false
    private var current: (token: String, expiresAt: Date)?
    private var waiters: [CheckedContinuation<String, any Error>]?

    /// How many exchanges were made (for tests and metrics).
    public private(set) var exchangeCount = 0

    /// Creates the token source.
    /// - Parameters:
    ///   - tls: TLS settings for the token endpoint (tests trust a local CA); nil uses the system's.
    ///   - now: the clock.
    public init(
        account: FCMServiceAccount, httpClient: HTTPClient = .shared, tls: TLSConfiguration? = nil,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.account = account
        self.httpClient = httpClient
        self.tls = tls
        self.now = now
    }

    /// A valid access token, exchanged when none is cached or it is within five minutes of expiry.
    /// - Throws: `FCMError` `authorizationFailed` when the exchange fails.
    public func accessToken() async throws -> String {
        if let current, current.expiresAt.timeIntervalSince(now()) > Self.renewalMargin { return current.token }
        return try await refresh()
    }

    /// Drops a token FCM refused (401) so the next call exchanges a new one.
    public func invalidate(_ token: String) {
        if current?.token == token { current = nil }
    }

    private func refresh() async throws -> String {
        if waiters != nil {
            return try await withCheckedThrowingContinuation { waiters?.append($0) }
        }
        waiters = []
        do {
            let token = try await exchange()
            for waiter in waiters ?? [] { waiter.resume(returning: token) }
            waiters = nil
            return token
        } catch {
            for waiter in waiters ?? [] { waiter.resume(throwing: error) }
            waiters = nil
            throw error
        }
    }

    private func exchange() async throws -> String {
        if !keyLoaded {
            guard let key = try? Insecure.RSA.PrivateKey(pem: account.privateKey) else {
                throw Self.failure("the service account's private_key is not an RSA key")
            }
            await keys.add(rsa: key, digestAlgorithm: .sha256, kid: JWKIdentifier(string: account.privateKeyID))
            keyLoaded = true
        }
        let issuedAt = Int(now().timeIntervalSince1970)
        let assertion = try await keys.sign(
            Assertion(
                iss: account.clientEmail, scope: Self.scope, aud: account.tokenURI, iat: issuedAt,
                exp: issuedAt + 3600),
            kid: JWKIdentifier(string: account.privateKeyID))
        var request = HTTPClientRequest(url: account.tokenURI)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(
            ByteBuffer(
                string: "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"))
        request.tlsConfiguration = tls
        let response = try await httpClient.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 * 1024)
        exchangeCount += 1
        guard response.status == .ok, let object = try? JSONValue.parse(body.readableBytesView).objectValue,
            case .string(let token)? = object["access_token"]
        else {
            throw Self.failure("the token endpoint answered \(response.status.code)")
        }
        var lifetime: TimeInterval = 3600
        if case .number(let seconds)? = object["expires_in"] { lifetime = seconds.doubleValue }
        current = (token, now().addingTimeInterval(lifetime))
        return token
    }

    private static func failure(_ detail: String) -> FCMError {
        .authorizationFailed(detail)
    }
}

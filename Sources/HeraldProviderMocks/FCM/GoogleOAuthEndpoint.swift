import Foundation
import HeraldCore
import JWTKit
import Synchronization

/// Google's OAuth 2.0 token endpoint for service accounts (the JWT-bearer grant of RFC 7523), as `POST /token` of
/// ``MockFCMServer``: it checks the signed assertion and hands out access tokens that the send endpoint accepts.
final class GoogleOAuthEndpoint: Sendable {
    static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    static let messagingScope = "https://www.googleapis.com/auth/firebase.messaging"
    static let cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"
    static let defaultLifetime = 3599

    private struct Assertion: JWTPayload {
        var iss: IssuerClaim
        var scope: String?
        var aud: AudienceClaim
        var iat: IssuedAtClaim
        var exp: ExpirationClaim

        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    private struct Header: Decodable {
        var alg: String?
    }

    private struct State {
        var tokenURI = ""
        var issued: [String: Date] = [:]
        var scriptedLifetimes: [Int] = []
        var requestCount = 0
    }

    private let keys: JWTKeyCollection
    private let clientEmail: String
    private let state = Mutex(State())

    init(publicKey: Insecure.RSA.PublicKey, clientEmail: String) async {
        keys = JWTKeyCollection()
        await keys.add(rsa: publicKey, digestAlgorithm: .sha256)
        self.clientEmail = clientEmail
    }

    /// The `aud` an assertion must name: the server's own `/token` URL, known once the port is bound.
    var tokenURI: String {
        get { state.withLock { $0.tokenURI } }
        set { state.withLock { $0.tokenURI = newValue } }
    }

    var requestCount: Int {
        state.withLock { $0.requestCount }
    }

    func scriptLifetimes(_ seconds: [Int]) {
        state.withLock { $0.scriptedLifetimes.append(contentsOf: seconds) }
    }

    func revokeAll() {
        state.withLock { $0.issued.removeAll() }
    }

    /// Whether `token` was issued here, is not revoked and has not expired at `now`.
    func accepts(_ token: String, now: Date) -> Bool {
        state.withLock { state in
            guard let expiry = state.issued[token] else { return false }
            return expiry > now
        }
    }

    func respond(to request: TestHTTPRequest) async -> TestHTTPResponse {
        state.withLock { $0.requestCount += 1 }
        guard request.method == "POST" else {
            return Self.error(405, "invalid_request", "The token endpoint only accepts POST.")
        }
        let form = Self.formFields(request.body)
        guard let grantType = form["grant_type"] else {
            return Self.error(400, "invalid_request", "Missing required parameter: grant_type")
        }
        guard grantType == Self.grantType else {
            return Self.error(400, "unsupported_grant_type", "Invalid grant_type: \(grantType)")
        }
        guard let assertion = form["assertion"], !assertion.isEmpty else {
            return Self.error(400, "invalid_request", "Missing required parameter: assertion")
        }
        let now = Date()
        if let rejection = await check(assertion, now: now) {
            return Self.error(rejection.status, rejection.code, rejection.description)
        }
        let token = "ya29.mock-" + Self.randomToken()
        let lifetime = state.withLock { state in
            let lifetime =
                state.scriptedLifetimes.isEmpty ? Self.defaultLifetime : state.scriptedLifetimes.removeFirst()
            state.issued[token] = now.addingTimeInterval(TimeInterval(lifetime))
            return lifetime
        }
        let body = #"{"access_token":"\#(token)","expires_in":\#(lifetime),"token_type":"Bearer"}"#
        return TestHTTPResponse(
            status: 200, headers: [("content-type", "application/json; charset=utf-8")], body: Array(body.utf8))
    }

    /// An OAuth error answer (RFC 6749 §5.2).
    private struct Rejection {
        var status = 400
        var code: String
        var description: String
    }

    /// Checks the assertion as Google does; returns the error to answer with, or nil.
    private func check(_ assertion: String, now: Date) async -> Rejection? {
        let segments = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, let headerBytes = Base64URL.decode(String(segments[0])),
            let header = try? JSONDecoder().decode(Header.self, from: Data(headerBytes)), header.alg == "RS256",
            let claims = try? await keys.verify(assertion, as: Assertion.self)
        else {
            return Rejection(code: "invalid_grant", description: "Invalid JWT Signature.")
        }
        guard claims.iss.value == clientEmail else {
            return Rejection(code: "invalid_grant", description: "Invalid email or User ID")
        }
        let tokenURI = self.tokenURI
        guard claims.aud.value.contains(tokenURI) else {
            return Rejection(
                code: "invalid_grant",
                description: "Invalid JWT: Failed audience check. The right audience is \(tokenURI)")
        }
        let lifetime = claims.exp.value.timeIntervalSince(claims.iat.value)
        // Google allows a little clock skew on `iat`, and at most an hour between `iat` and `exp`.
        guard lifetime > 0, lifetime <= 3600, claims.exp.value > now, claims.iat.value <= now.addingTimeInterval(60)
        else {
            return Rejection(
                code: "invalid_grant",
                description: "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable "
                    + "timeframe. Check your iat and exp values in the JWT claim.")
        }
        let scopes = Set((claims.scope ?? "").split(separator: " ").map(String.init))
        guard scopes.contains(Self.messagingScope) || scopes.contains(Self.cloudPlatformScope) else {
            return Rejection(code: "invalid_scope", description: "Invalid OAuth scope or ID token audience provided.")
        }
        return nil
    }

    private static func error(_ status: Int, _ code: String, _ description: String) -> TestHTTPResponse {
        struct Body: Encodable {
            var error: String
            var errorDescription: String

            enum CodingKeys: String, CodingKey {
                case error
                case errorDescription = "error_description"
            }
        }
        let body = (try? JSONEncoder().encode(Body(error: code, errorDescription: description))) ?? Data()
        return TestHTTPResponse(
            status: status, headers: [("content-type", "application/json; charset=utf-8")], body: Array(body))
    }

    /// Parses `application/x-www-form-urlencoded` (the HTML form encoding: `+` is a space, then percent-decoding).
    static func formFields(_ body: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) in
                text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
            }
            fields[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return fields
    }

    private static func randomToken() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        return String((0..<120).map { _ in alphabet.randomElement()! })
    }
}

import AsyncHTTPClient
import Crypto
import Foundation
import HeraldCore
import NIOCore
import NIOHTTP1

/// Verifies an app's opaque session tokens with the app's own auth service through OAuth 2.0 Token
/// Introspection (RFC 7662): the token is `POST`ed form-encoded to the configured endpoint with the
/// configured client credentials (HTTP Basic, RFC 6749 §2.3.1), and an answer with `"active": true`
/// and a `sub` names the user.
///
/// Answers are cached by a hash of the token (never the token itself): active ones for
/// `cacheSeconds` (never past the token's own `exp`), inactive ones for `negativeCacheSeconds`, so a
/// revoked session stops working within the positive TTL. An auth service that fails or does not
/// answer in time refuses the request with `401 invalid_session` and is not cached.
public actor SessionTokenIntrospector {
    private struct Entry {
        /// The user of an active token; nil for an inactive one.
        package var userID: String?
        package var expiresAt: Date
    }

    private let configuration: IntrospectionConfiguration
    private let httpClient: HTTPClient
    private let now: @Sendable () -> Date
    private var cache: [Data: Entry] = [:]
    /// Introspection requests made (what the cache saves shows here).
    public private(set) var requestCount = 0

    /// Creates an introspector.
    /// - Parameters:
    ///   - httpClient: The client for the auth service (the shared one by default).
    ///   - now: The clock for cache expiry and the token's `exp`.
    public init(
        configuration: IntrospectionConfiguration, httpClient: HTTPClient = .shared,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.configuration = configuration
        self.httpClient = httpClient
        self.now = now
    }

    /// The user id (`sub`) of an active session token.
    /// - Throws: `HeraldError` `invalid_session` (401) when the token is inactive, the answer
    ///   unusable, or the auth service fails or times out.
    public func userID(from token: String) async throws(HeraldError) -> String {
        let key = Data(SHA256.hash(data: Data(token.utf8)))
        let current = now()
        if let entry = cache[key], entry.expiresAt > current {
            guard let userID = entry.userID else { throw Self.refusal("The session token is not active.") }
            return userID
        }
        let answer = try await introspect(token)
        let checked = now()
        guard answer.active, let userID = answer.subject, answer.expiresAt.map({ $0 > checked }) ?? true else {
            store(key, Entry(userID: nil, expiresAt: checked.addingTimeInterval(configuration.negativeCacheSeconds)))
            throw Self.refusal("The session token is not active.")
        }
        var expiry = checked.addingTimeInterval(configuration.cacheSeconds)
        if let tokenExpiry = answer.expiresAt { expiry = min(expiry, tokenExpiry) }
        store(key, Entry(userID: userID, expiresAt: expiry))
        return userID
    }

    private struct Answer {
        package var active: Bool
        package var subject: String?
        package var expiresAt: Date?
    }

    private func introspect(_ token: String) async throws(HeraldError) -> Answer {
        var request = HTTPClientRequest(url: configuration.url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "accept", value: "application/json")
        if let clientID = configuration.clientID {
            // RFC 6749 §2.3.1: both parts form-encoded before Base64.
            let credentials = "\(Self.formEncoded(clientID)):\(Self.formEncoded(configuration.clientSecret ?? ""))"
            request.headers.add(name: "authorization", value: "Basic \(Data(credentials.utf8).base64EncodedString())")
        }
        request.body = .bytes(ByteBuffer(string: "token=\(Self.formEncoded(token))&token_type_hint=access_token"))
        requestCount += 1
        let body: ByteBuffer
        let status: UInt
        do {
            let response = try await httpClient.execute(
                request, timeout: .milliseconds(Int64(configuration.timeoutMilliseconds)))
            status = response.status.code
            body = try await response.body.collect(upTo: 64 * 1024)
        } catch {
            throw Self.refusal("The app's auth service did not answer the session check in time.")
        }
        guard status == 200, let object = try? JSONValue.parse(body.readableBytesView).objectValue,
            case .bool(let active)? = object["active"]
        else {
            throw Self.refusal("The app's auth service could not check the session (status \(status)).")
        }
        var answer = Answer(active: active)
        if case .string(let subject)? = object["sub"], !subject.isEmpty,
            subject.count <= InstallationRules.maxShortText
        {
            answer.subject = subject
        }
        if case .number(let seconds)? = object["exp"] {
            answer.expiresAt = Date(timeIntervalSince1970: seconds.doubleValue)
        }
        return answer
    }

    private func store(_ key: Data, _ entry: Entry) {
        if cache.count >= configuration.maxCacheEntries {
            let current = now()
            cache = cache.filter { $0.value.expiresAt > current }
            // Still full of live entries: start over rather than grow without bound.
            if cache.count >= configuration.maxCacheEntries { cache.removeAll(keepingCapacity: true) }
        }
        cache[key] = entry
    }

    private static func refusal(_ message: String) -> HeraldError {
        HeraldError(kind: .unauthorized, code: "invalid_session", message: message)
    }

    /// `application/x-www-form-urlencoded` (WHATWG URL §5.2): unreserved bytes as they are, the rest
    /// percent-encoded.
    static func formEncoded(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "*"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                result += String(format: "%%%02X", byte)
            }
        }
        return result
    }
}

/// Where and how an app's opaque session tokens are introspected (RFC 7662).
public struct IntrospectionConfiguration: Sendable, Equatable {
    /// The introspection endpoint.
    public var url: String
    /// The client credentials Herald authenticates with (HTTP Basic); none when nil.
    public var clientID: String?
    public var clientSecret: String?
    /// How long an active answer is trusted (a revoked session works at most this long).
    public var cacheSeconds: TimeInterval
    /// How long an inactive answer is remembered.
    public var negativeCacheSeconds: TimeInterval
    /// How long the auth service may take before the request is refused.
    public var timeoutMilliseconds: Int
    /// At most this many answers are cached.
    public var maxCacheEntries: Int

    /// Creates a configuration.
    public init(
        url: String, clientID: String? = nil, clientSecret: String? = nil, cacheSeconds: TimeInterval = 60,
        negativeCacheSeconds: TimeInterval = 10, timeoutMilliseconds: Int = 2000, maxCacheEntries: Int = 10_000
    ) {
        self.url = url
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.cacheSeconds = cacheSeconds
        self.negativeCacheSeconds = negativeCacheSeconds
        self.timeoutMilliseconds = timeoutMilliseconds
        self.maxCacheEntries = maxCacheEntries
    }
}

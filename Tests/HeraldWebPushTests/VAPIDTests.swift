import Crypto
import Foundation
import HeraldCore
import JWTKit
import Synchronization
import Testing

@testable import HeraldWebPush

/// The JWT claims RFC 8292 §2 requires, as a verifier decodes them.
private struct VAPIDPayload: JWTPayload {
    var aud: String
    var exp: Int
    var sub: String

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

private struct JOSEHeader: Decodable, Equatable {
    var typ: String?
    var alg: String
}

/// Splits `vapid t=<jwt>, k=<key>` into its two parameters.
private func parameters(of authorization: String) throws -> (token: String, key: String) {
    let prefix = "vapid t="
    try #require(authorization.hasPrefix(prefix))
    let parts = authorization.dropFirst(prefix.count).components(separatedBy: ", k=")
    try #require(parts.count == 2)
    return (parts[0], parts[1])
}

/// Verifies an ES256 JWT with a base64url uncompressed public key and returns its claims.
private func verify(_ token: String, key: String) async throws -> VAPIDPayload {
    let publicKey = try P256.Signing.PublicKey(x963Representation: try #require(Base64URL.decode(key)))
    let keys = JWTKeyCollection()
    await keys.add(ecdsa: try ES256PublicKey(backing: publicKey))
    return try await keys.verify(token, as: VAPIDPayload.self)
}

private func header(of token: String) throws -> JOSEHeader {
    let segment = try #require(token.split(separator: ".").first)
    return try JSONDecoder().decode(JOSEHeader.self, from: Data(try #require(Base64URL.decode(String(segment)))))
}

@Suite("Web Push: VAPID keys and tokens (RFC 8292)")
struct VAPIDTests {
    @Test("A key loads from PEM (SEC 1 and PKCS #8) and raw base64url, and its public key is the 65-byte point")
    func keyForms() throws {
        let key = VAPIDKey.generate()
        let publicKey = try #require(Base64URL.decode(key.publicKeyBase64URL))
        #expect(publicKey.count == 65 && publicKey[0] == 0x04)
        #expect(try #require(Base64URL.decode(key.privateKeyBase64URL)).count == 32)
        #expect(try VAPIDKey(pem: key.pemRepresentation).publicKeyBase64URL == key.publicKeyBase64URL)
        // SEC 1 `EC PRIVATE KEY` (RFC 5915), what `openssl ecparam -genkey` writes, built around the same key.
        let der: [UInt8] =
            [0x30, 0x77, 0x02, 0x01, 0x01, 0x04, 0x20] + Array(key.privateKey.rawRepresentation)
            + [0xa0, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0xa1, 0x44, 0x03, 0x42, 0x00]
            + publicKey
        let sec1PEM =
            "-----BEGIN EC PRIVATE KEY-----\n"
            + Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            + "\n-----END EC PRIVATE KEY-----\n"
        #expect(try VAPIDKey(pem: sec1PEM).publicKeyBase64URL == key.publicKeyBase64URL)
        #expect(try VAPIDKey(base64URL: key.privateKeyBase64URL).publicKeyBase64URL == key.publicKeyBase64URL)
        #expect(throws: WebPushError.self) { try VAPIDKey(base64URL: "AAAA") }
        #expect(throws: WebPushError.self) { try VAPIDKey(pem: "not a key") }
        // The RFC 8291 example's application server key, as web-push tools print private keys.
        #expect(
            try VAPIDKey(base64URL: "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw").publicKeyBase64URL
                == "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8")
    }

    @Test("Subjects: mailto: with an address or https: with a host")
    func subjects() {
        for valid in ["mailto:ops@example.com", "MAILTO:a@b", "https://example.com/contact", "https://example.com"] {
            #expect(VAPIDTokenCache.isValidSubject(valid), "\(valid)")
        }
        for invalid in [
            "", "ops@example.com", "mailto:", "mailto:nobody", "mailto:@x", "http://example.com", "https://",
            "mailto:a b@c",
        ] {
            #expect(!VAPIDTokenCache.isValidSubject(invalid), "\(invalid)")
        }
        #expect(throws: WebPushError.self) { try VAPIDTokenCache(key: .generate(), subject: "ops@example.com") }
    }

    @Test("The JWT verifies with k and carries aud = origin, exp = 12 h ahead, sub")
    func tokenClaims() async throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let key = VAPIDKey.generate()
        let cache = try VAPIDTokenCache(key: key, subject: "mailto:ops@example.com", now: { start })
        let authorization = try await cache.authorization(for: "https://push.example.net")
        let (token, k) = try parameters(of: authorization)
        #expect(k == key.publicKeyBase64URL)
        #expect(try header(of: token) == JOSEHeader(typ: "JWT", alg: "ES256"))
        let claims = try await verify(token, key: k)
        #expect(claims.aud == "https://push.example.net")
        #expect(claims.exp == 1_800_000_000 + 12 * 3600)
        #expect(claims.sub == "mailto:ops@example.com")
        // Another key does not verify it.
        await #expect(throws: (any Error).self) { try await verify(token, key: VAPIDKey.generate().publicKeyBase64URL) }
    }

    @Test("RFC 8292 §2.4's example: its header and claims decode as ours do, and its signature verifies with its k")
    func rfcExample() async throws {
        // ECDSA signatures are randomized, so the example cannot be reproduced; it is verified instead.
        let authorization =
            "vapid t=eyJ0eXAiOiJKV1QiLCJhbGciOiJFUzI1NiJ9.eyJhdWQiOiJodHRwczovL3B1c2guZXhhbXBsZS5uZXQiLCJleHAiOjE0NTM1MjM3Nj"
            + "gsInN1YiI6Im1haWx0bzpwdXNoQGV4YW1wbGUuY29tIn0.i3CYb7t4xfxCDquptFOepC9GAu_HLGkMlMuCGSK2rpiUfnK9ojFwDXb1JrErtm"
            + "ysazNjjvW2L9OkSSHzvoD1oA, k=BA1Hxzyi1RUM1b5wjxsn7nGxAszw2u61m164i3MrAIxHF6YK5h4SDYic-dRuU_RCPCfA5aq9ojSwk5Y2EmC"
            + "lBPs"
        let (token, k) = try parameters(of: authorization)
        #expect(try header(of: token) == JOSEHeader(typ: "JWT", alg: "ES256"))
        let claims = try await verify(token, key: k)
        #expect(claims.aud == "https://push.example.net")
        #expect(claims.exp == 1_453_523_768)
        #expect(claims.sub == "mailto:push@example.com")
        // Ours has the same shape: same header, same three claims.
        let cache = try VAPIDTokenCache(key: .generate(), subject: "mailto:push@example.com")
        let ours = try parameters(of: try await cache.authorization(for: "https://push.example.net"))
        #expect(try header(of: ours.token) == header(of: token))
        #expect(try #require(Base64URL.decode(ours.key)).count == 65)
    }

    @Test("One token per origin, reused until less than an hour is left, on an injected clock")
    func caching() async throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let clock = Mutex(start)
        let cache = try VAPIDTokenCache(
            key: .generate(), subject: "https://example.com", now: { clock.withLock { $0 } })
        let first = try await cache.authorization(for: "https://a.example")
        #expect(try await cache.authorization(for: "https://a.example") == first)
        #expect(await cache.mintedCount == 1)
        let other = try await cache.authorization(for: "https://b.example:8443")
        #expect(other != first)
        #expect(await cache.mintedCount == 2)
        // 10 h 59 min later: 1 h 1 min left, still used.
        clock.withLock { $0 = start.addingTimeInterval(10 * 3600 + 59 * 60) }
        #expect(try await cache.authorization(for: "https://a.example") == first)
        #expect(await cache.mintedCount == 2)
        // 11 h later: an hour left, renewed, with a new exp.
        clock.withLock { $0 = start.addingTimeInterval(11 * 3600) }
        let renewed = try await cache.authorization(for: "https://a.example")
        #expect(renewed != first)
        #expect(await cache.mintedCount == 3)
        let (token, key) = try parameters(of: renewed)
        #expect(try await verify(token, key: key).exp == 1_800_000_000 + 23 * 3600)
    }
}

import Crypto
import HeraldCore
import HeraldProviderMocks
import HeraldTestSupport
import Testing

@testable import HeraldWebPush

/// RFC 8291 Appendix A, "Intermediate Values for Encryption".
enum RFC8291Example {
    static let plaintext = Array("When I grow up, I want to be a watermelon".utf8)
    static let applicationServerPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
    static let applicationServerPublic =
        "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
    static let userAgentPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
    static let userAgentPublic =
        "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
    static let ecdhSecret = "kyrL1jIIOHEzg3sM2ZWRHDRB62YACZhhSlknJ672kSs"
    static let ikm = "S4lYMb_L0FxCeq0WhDx813KgSYqU26kOyzWUdsXYyrg"
    static let cek = "oIhVW04MRdy2XN9CiKLxTg"
    static let nonce = "4h_95klXJ5E_qnoN"
    static let body =
        "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A"
        + "_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"

    static func bytes(_ text: String) -> [UInt8] { Base64URL.decode(text)! }

    static var senderKey: P256.KeyAgreement.PrivateKey {
        try! P256.KeyAgreement.PrivateKey(rawRepresentation: bytes(applicationServerPrivate))
    }

    static var userAgent: TestUserAgent {
        TestUserAgent(
            privateKey: try! P256.KeyAgreement.PrivateKey(rawRepresentation: bytes(userAgentPrivate)),
            authSecret: bytes(auth))
    }
}

@Suite("Web Push: aes128gcm encryption (RFC 8291)")
struct WebPushEncryptorTests {
    @Test("RFC 8291 Appendix A: the same keys and salt give the same body, byte for byte")
    func knownAnswer() throws {
        let body = try WebPushEncryptor.encrypt(
            RFC8291Example.plaintext, p256dh: RFC8291Example.bytes(RFC8291Example.userAgentPublic),
            auth: RFC8291Example.bytes(RFC8291Example.auth), salt: RFC8291Example.bytes(RFC8291Example.salt),
            ephemeralKey: RFC8291Example.senderKey)
        #expect(Base64URL.encode(body) == RFC8291Example.body)
        #expect(body.count == 144)
        #expect(
            Base64URL.encode(RFC8291Example.senderKey.publicKey.x963Representation)
                == RFC8291Example.applicationServerPublic)
    }

    @Test("RFC 8291 Appendix A: every intermediate value of the key derivation")
    func intermediateValues() throws {
        let secret = try RFC8291Example.senderKey.sharedSecretFromKeyAgreement(
            with: P256.KeyAgreement.PublicKey(
                x963Representation: RFC8291Example.bytes(RFC8291Example.userAgentPublic)))
        let secretBytes = secret.withUnsafeBytes { Array($0) }
        #expect(Base64URL.encode(secretBytes) == RFC8291Example.ecdhSecret)
        let keys = WebPushEncryptor.deriveKeys(
            ecdhSecret: secretBytes, auth: RFC8291Example.bytes(RFC8291Example.auth),
            userAgentPublic: RFC8291Example.bytes(RFC8291Example.userAgentPublic),
            senderPublic: RFC8291Example.bytes(RFC8291Example.applicationServerPublic),
            salt: RFC8291Example.bytes(RFC8291Example.salt))
        #expect(Base64URL.encode(keys.ikm) == RFC8291Example.ikm)
        #expect(Base64URL.encode(keys.contentEncryptionKey) == RFC8291Example.cek)
        #expect(Base64URL.encode(keys.nonce) == RFC8291Example.nonce)
    }

    @Test("The RFC's body decrypts with the RFC's user agent key (the test decryptor is right too)")
    func rfcBodyDecrypts() throws {
        let plaintext = try RFC8291Example.userAgent.decrypt(RFC8291Example.bytes(RFC8291Example.body))
        #expect(plaintext == RFC8291Example.plaintext)
    }

    @Test("Round trip: random salt and key, decrypted by the subscription's private key")
    func roundTrip() throws {
        let userAgent = TestUserAgent()
        for size in [0, 1, 100, 3993] {
            let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let body = try WebPushEncryptor.encrypt(
                plaintext, p256dh: Base64URL.decode(userAgent.p256dh)!, auth: userAgent.authSecret)
            #expect(body.count == WebPushEncryptor.headerSize + size + 1 + 16)
            #expect(Array(body[16..<21]) == [0, 0, 0x10, 0, 65])
            #expect(try userAgent.decrypt(body) == plaintext)
        }
        let first = try WebPushEncryptor.encrypt(
            [1], p256dh: Base64URL.decode(userAgent.p256dh)!, auth: userAgent.authSecret)
        let second = try WebPushEncryptor.encrypt(
            [1], p256dh: Base64URL.decode(userAgent.p256dh)!, auth: userAgent.authSecret)
        #expect(first[0..<16] != second[0..<16], "a new salt per message")
        #expect(first[21..<86] != second[21..<86], "a new ephemeral key per message")
    }

    @Test("3993 bytes fill one 4096-byte record; 3994 are refused before anything is sent")
    func sizeBoundary() throws {
        let userAgent = TestUserAgent()
        let key = Base64URL.decode(userAgent.p256dh)!
        #expect(WebPushEncryptor.maxPlaintextBytes == 3993)
        let full = try WebPushEncryptor.encrypt(
            [UInt8](repeating: 7, count: 3993), p256dh: key, auth: userAgent.authSecret)
        #expect(full.count == 4096)
        #expect(throws: WebPushError.self) {
            try WebPushEncryptor.encrypt([UInt8](repeating: 7, count: 3994), p256dh: key, auth: userAgent.authSecret)
        }
        do {
            _ = try WebPushEncryptor.encrypt(
                [UInt8](repeating: 7, count: 3994), p256dh: key, auth: userAgent.authSecret)
        } catch {
            #expect(error.code == .payloadTooLarge)
            #expect(error.field == "payload")
        }
    }

    @Test("Keys that are not RFC 8291's shapes are refused")
    func badKeys() {
        let userAgent = TestUserAgent()
        let key = Base64URL.decode(userAgent.p256dh)!
        func code(_ p256dh: [UInt8], _ auth: [UInt8]) -> WebPushError.Code? {
            do {
                _ = try WebPushEncryptor.encrypt([1, 2, 3], p256dh: p256dh, auth: auth)
                return nil
            } catch {
                return error.code
            }
        }
        #expect(code(key, userAgent.authSecret) == nil)
        #expect(code(Array(key.prefix(33)), userAgent.authSecret) == .invalidP256DH)
        var offCurve = key
        offCurve[64] ^= 1
        #expect(code(offCurve, userAgent.authSecret) == .invalidP256DH)
        #expect(code(key, Array(userAgent.authSecret.prefix(8))) == .invalidAuthSecret)
    }
}

@Suite("Web Push: the receiving side (WebPushDecryptor, herald listen --unifiedpush)")
struct WebPushDecryptorTests {
    static var receiver: WebPushDecryptor {
        WebPushDecryptor(
            privateKey: try! P256.KeyAgreement.PrivateKey(
                rawRepresentation: RFC8291Example.bytes(RFC8291Example.userAgentPrivate)),
            authSecret: RFC8291Example.bytes(RFC8291Example.auth))
    }

    @Test("RFC 8291 Appendix A's body decrypts to its plaintext; a fresh receiver decrypts what the encryptor made")
    func decrypts() throws {
        #expect(try Self.receiver.decrypt(RFC8291Example.bytes(RFC8291Example.body)) == RFC8291Example.plaintext)
        let receiver = WebPushDecryptor()
        let body = try WebPushEncryptor.encrypt(
            Array("hello".utf8), p256dh: receiver.publicKey, auth: receiver.authSecret)
        #expect(try receiver.decrypt(body) == Array("hello".utf8))
    }

    @Test("What does not decrypt is refused with decryption_failed: another receiver's, a flipped bit, a cut header")
    func refuses() throws {
        let body = RFC8291Example.bytes(RFC8291Example.body)
        var flipped = body
        flipped[100] ^= 1
        for bad in [flipped, Array(body.prefix(40)), []] {
            #expect(throws: WebPushError.self) { try Self.receiver.decrypt(bad) }
        }
        do {
            _ = try WebPushDecryptor().decrypt(body)
            Issue.record("another receiver's keys decrypted it")
        } catch {
            #expect(error.code == .decryptionFailed)
        }
    }
}

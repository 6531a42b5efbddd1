import Foundation
import HeraldTestSupport
import Testing

@testable import HeraldCore

@Suite("Secrets at rest")
struct TokenCipherTests {
    @Test("A push token seals to its keyed index and ciphertext, and opens back whole, subscriptions too")
    func sealedTokens() throws {
        let cipher = try TokenCipher(masterKey: TokenCipher.generateMasterKey())
        let device = PushToken.device(Fixtures.apnsToken())
        let subscription = PushToken.webPush(Fixtures.webPushSubscription())
        for (token, service) in [(device, PushService.apns), (subscription, .webpush)] {
            let sealed = try cipher.seal(token, service: service)
            #expect(sealed.index == cipher.index(token.identity, service: service))
            #expect(!sealed.sealed.isEmpty && sealed.sealed != token.storageBytes)
            #expect(try cipher.openToken(sealed.sealed, service: service) == token)
        }
        // The same token string indexes differently under another service; another key cannot open it.
        #expect(try cipher.seal(device, service: .fcm).index != (try cipher.seal(device, service: .apns)).index)
        let other = try TokenCipher(masterKey: TokenCipher.generateMasterKey())
        let error = #expect(throws: HeraldError.self) {
            try other.openToken(try cipher.seal(device, service: .apns).sealed, service: .apns)
        }
        #expect(error?.code == "secret_key_mismatch")
    }

    @Test("Sealed tokens open with the same key and not with another")
    func roundTrip() throws {
        let cipher = Fixtures.cipher()
        let token = Array(Fixtures.apnsToken().utf8)
        let sealed = try cipher.seal(token)
        #expect(try cipher.open(sealed) == token)
        #expect(sealed != token)
        #expect(try cipher.seal(token) != sealed)  // a fresh nonce each time
        let error = #expect(throws: HeraldError.self) { try Fixtures.cipher().open(sealed) }
        #expect(error?.code == "secret_key_mismatch")
    }

    @Test("The index is keyed and scoped by service")
    func index() throws {
        let key = TokenCipher.generateMasterKey()
        let one = try TokenCipher(masterKey: key)
        let same = try TokenCipher(masterKey: key)
        #expect(one.index("t", service: .fcm) == same.index("t", service: .fcm))
        #expect(one.index("t", service: .fcm) != one.index("t", service: .sns))
        #expect(one.index("t", service: .fcm) != Fixtures.cipher().index("t", service: .fcm))
        #expect(throws: HeraldError.self) { try TokenCipher(masterKey: [1, 2, 3]) }
    }

    @Test("Secret comparison and fingerprints")
    func comparison() {
        #expect(SecretComparison.equal("hsk_abc", "hsk_abc"))
        #expect(!SecretComparison.equal("hsk_abc", "hsk_abd"))
        #expect(SecretFingerprint.of("secret").count == 12)
        #expect(!SecretFingerprint.of("secret-token-value").contains("secret"))
    }

    @Test("Ids are time ordered")
    func identifiers() {
        let early = Identifier.make(now: .init(timeIntervalSince1970: 1_000))
        let late = Identifier.make(now: .init(timeIntervalSince1970: 2_000))
        #expect(early < late)
        #expect(early.count == 36)
    }

    @Test("Ids of one millisecond count up from a random seed and stay RFC 9562 version 7")
    func identifiersWithinAMillisecond() {
        var counter = MillisecondCounter()
        let milliseconds: UInt64 = 1_800_000_000_123
        var generator = SystemRandomNumberGenerator()
        let seed = MillisecondCounter.seed(using: &generator)
        let ids = (0..<10_000).map { _ in
            Identifier.make(
                milliseconds: milliseconds, counter: counter.next(milliseconds: milliseconds, seed: seed),
                tail: .random(in: 0...UInt32.max))
        }
        #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 })
        for id in [ids[0], ids[9_999]] {
            let uuid = UUID(uuidString: id)!.uuid
            #expect(uuid.6 >> 4 == 7)  // version
            #expect(uuid.8 >> 6 == 0b10)  // variant
            let time = [uuid.0, uuid.1, uuid.2, uuid.3, uuid.4, uuid.5].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            #expect(time == milliseconds)
        }
        // The next millisecond starts from a fresh seed; the counter's top bit is left for counting.
        #expect(counter.next(milliseconds: milliseconds + 1, seed: 7) == 7)
        #expect(counter.next(milliseconds: milliseconds + 1, seed: 9) == 8)
        #expect(MillisecondCounter.seed(using: &generator) < 1 << 41)
    }
}

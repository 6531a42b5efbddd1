import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@Suite("Secrets at rest")
struct TokenCipherTests {
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
}

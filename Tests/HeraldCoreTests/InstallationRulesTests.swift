import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@Suite("Installation field rules")
struct InstallationRulesTests {
    @Test("APNs tokens: hex, even length, 64 to 2048 characters (AOVIS: 后端接受最大 2048 字符)")
    func apnsTokens() throws {
        try InstallationRules.validateAPNsToken(String(repeating: "a", count: 64))
        try InstallationRules.validateAPNsToken(String(repeating: "0F", count: 100))
        try InstallationRules.validateAPNsToken(String(repeating: "ab", count: 101))
        try InstallationRules.validateAPNsToken(String(repeating: "Ab", count: 1024))
        for bad in [
            String(repeating: "a", count: 62), String(repeating: "a", count: 2050), String(repeating: "a", count: 65),
            String(repeating: "a", count: 2047), String(repeating: "g", count: 64),
            String(repeating: "a", count: 63) + " ",
        ] {
            #expect(throws: HeraldError.self) { try InstallationRules.validateAPNsToken(bad) }
        }
    }

    @Test("FCM tokens: 1 to 4096 printable ASCII, no spaces")
    func fcmTokens() throws {
        try InstallationRules.validateFCMToken(Fixtures.fcmToken())
        try InstallationRules.validateFCMToken(String(repeating: "x", count: 4096))
        for bad in ["", String(repeating: "x", count: 4097), "has space", "tab\there", "é", "line\n"] {
            let error = #expect(throws: HeraldError.self) { try InstallationRules.validateFCMToken(bad) }
            #expect(error?.code == "invalid_token")
        }
    }

    @Test("Web Push: https endpoint, p256dh on the curve, 16-byte auth")
    func webPush() throws {
        try InstallationRules.validateWebPush(Fixtures.webPushSubscription())
        var subscription = Fixtures.webPushSubscription()
        subscription.endpoint = "http://push.example.net/x"
        #expect(throws: HeraldError.self) { try InstallationRules.validateWebPush(subscription) }

        subscription = Fixtures.webPushSubscription()
        // 65 bytes with the uncompressed prefix but a point that is not on P-256.
        subscription.p256dh = Base64URL.encode([0x04] + [UInt8](repeating: 1, count: 64))
        let offCurve = #expect(throws: HeraldError.self) { try InstallationRules.validateWebPush(subscription) }
        #expect(offCurve?.field == "subscription.keys.p256dh")

        subscription = Fixtures.webPushSubscription()
        subscription.auth = Base64URL.encode([UInt8](repeating: 1, count: 15))
        let shortAuth = #expect(throws: HeraldError.self) { try InstallationRules.validateWebPush(subscription) }
        #expect(shortAuth?.field == "subscription.keys.auth")
    }

    @Test("Platforms must fit the service")
    func platformService() throws {
        try InstallationRules.validate(platform: .ios, service: .apns)
        try InstallationRules.validate(platform: .android, service: .fcm)
        try InstallationRules.validate(platform: .web, service: .webpush)
        let error = #expect(throws: HeraldError.self) {
            try InstallationRules.validate(platform: .android, service: .apns)
        }
        #expect(error?.code == "platform_service_mismatch")
        #expect(throws: HeraldError.self) { try InstallationRules.validate(platform: .ios, service: .webpush) }
    }

    @Test("Locales like en and zh-Hans-CN; underscores normalized")
    func locales() throws {
        #expect(try InstallationRules.normalizeLocale("en") == "en")
        #expect(try InstallationRules.normalizeLocale("zh-Hans-CN") == "zh-Hans-CN")
        #expect(try InstallationRules.normalizeLocale("pt_BR") == "pt-BR")
        #expect(try InstallationRules.normalizeLocale("es-419") == "es-419")
        for bad in ["", "e", "english", "en-", "12", "en US", "C", "POSIX", "xx-yy-zz-ww", "en-US-x", "de-DE-ab", "ü"] {
            #expect(throws: HeraldError.self, "\(bad)") { try InstallationRules.normalizeLocale(bad) }
        }
    }

    /// What phones report, as written by the platform's own API, and the BCP 47 tag Herald keeps.
    static let phoneLocales: [(reported: String, tag: String)] = [
        // iOS: Locale.current.identifier (ICU form; `@rg=` when the region setting differs from the language's).
        ("en_US", "en-US"), ("en_US@rg=gbzzzz", "en-US"), ("en_US_POSIX", "en-US-posix"), ("zh-Hans_CN", "zh-Hans-CN"),
        ("zh-Hant_TW", "zh-Hant-TW"), ("de_DE", "de-DE"), ("es_419", "es-419"), ("en_001", "en-001"),
        ("sr-Latn_RS", "sr-Latn-RS"), ("fr_FR@calendar=gregorian;rg=bezzzz", "fr-FR"), ("ja_JP_TRADITIONAL", "ja-JP"),
        ("ca_ES_VALENCIA", "ca-ES-valencia"), ("en", "en"), ("yue-Hant_HK", "yue-Hant-HK"),
        // iOS: Locale.preferredLanguages, BCP 47 already.
        ("en-GB", "en-GB"), ("zh-Hans-US", "zh-Hans-US"), ("en-US-u-ca-gregory", "en-US"),
        // Android: Locale.toString() (Java form) and toLanguageTag().
        ("zh_CN_#Hans", "zh-Hans-CN"), ("sr_RS_#Latn", "sr-Latn-RS"), ("th_TH_TH_#u-nu-thai", "th-TH"),
        ("en__POSIX", "en-posix"), ("in_ID", "in-ID"), ("pt_BR", "pt-BR"), ("de-CH-1996", "de-CH-1996"),
        ("EN_us", "en-US"), ("en-US-x-lvariant-POSIX", "en-US"),
    ]

    @Test("Locales that iOS and Android report are normalized to BCP 47", arguments: phoneLocales)
    func phoneLocale(_ locale: (reported: String, tag: String)) throws {
        #expect(try InstallationRules.normalizeLocale(locale.reported) == locale.tag)
    }

    @Test("Time zones are IANA names")
    func timeZones() throws {
        try InstallationRules.validateTimeZone("Europe/Paris")
        try InstallationRules.validateTimeZone("America/New_York")
        try InstallationRules.validateTimeZone("UTC")
        // What phones and Linux hosts report for UTC and fixed offsets.
        for etc in ["Etc/UTC", "Etc/GMT", "Etc/GMT+5", "Etc/GMT-14", "Etc/Universal", "Etc/Zulu"] {
            try InstallationRules.validateTimeZone(etc)
        }
        for bad in ["Mars/Olympus", "PST8", "+08:00", "", "Etc/GMT+13", "Etc/Mars"] {
            #expect(throws: HeraldError.self) { try InstallationRules.validateTimeZone(bad) }
        }
    }

    @Test("Channels: at most 100 of [A-Za-z0-9_-]{1,128}, duplicates dropped")
    func channels() throws {
        #expect(try InstallationRules.normalizeChannels(["a", "b-1", "a", "C_2"]) == ["a", "b-1", "C_2"])
        #expect(try InstallationRules.normalizeChannels((0..<100).map { "c\($0)" }).count == 100)
        let tooMany = #expect(throws: HeraldError.self) {
            try InstallationRules.normalizeChannels((0..<101).map { "c\($0)" })
        }
        #expect(tooMany?.code == "too_many_channels")
        let bad = #expect(throws: HeraldError.self) { try InstallationRules.normalizeChannels(["ok", "no space"]) }
        #expect(bad?.field == "channels[1]")
        #expect(throws: HeraldError.self) {
            try InstallationRules.normalizeChannels([String(repeating: "x", count: 129)])
        }
    }

    @Test("Attributes serialize to at most 8 KB")
    func attributes() throws {
        try InstallationRules.validateAttributes(["k": .string(String(repeating: "x", count: 8000))])
        let error = #expect(throws: HeraldError.self) {
            try InstallationRules.validateAttributes(["k": .string(String(repeating: "x", count: 8200))])
        }
        #expect(error?.code == "attributes_too_large")
    }
}

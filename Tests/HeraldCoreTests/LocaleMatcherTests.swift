import HeraldCore
import Testing

@Suite("Localization lookup: RFC 4647 after CLDR's likely subtags")
struct LocaleMatcherTests {
    static let keys = ["de", "de-AT", "pt-BR", "pt-PT", "zh", "zh-Hant", "sr", "fr-CA"]

    @Test(
        "Each device locale gets its best localization, or the default",
        arguments: [
            ("de-AT", "de-AT"), ("de-CH", "de"), ("de", "de"), ("de_DE", "de"),
            ("pt-BR", "pt-BR"), ("pt", nil), ("pt-AO", nil),
            // Android reports Traditional Chinese with a region and no script: never Simplified zh.
            ("zh-TW", "zh-Hant"), ("zh-HK", "zh-Hant"), ("zh-MO", "zh-Hant"), ("zh-Hant-HK", "zh-Hant"),
            ("zh-CN", "zh"), ("zh-Hans", "zh"), ("zh-SG", "zh"), ("zh", "zh"),
            // Serbian is Cyrillic unless a Latin script or a Latin-writing region says otherwise.
            ("sr-RS", "sr"), ("sr-Latn-RS", nil), ("sr-ME", nil),
            ("fr", nil), ("fr-CA", "fr-CA"), ("en-US", nil), ("", nil), ("und", nil),
        ] as [(String, String?)])
    func lookup(locale: String, expected: String?) {
        #expect(LocaleMatcher(keys: Self.keys).match(locale) == expected)
    }

    @Test("No locale, or no localizations: the default")
    func defaults() {
        #expect(LocaleMatcher(keys: Self.keys).match(nil) == nil)
        #expect(LocaleMatcher(keys: []).match("de") == nil)
    }

    @Test("A localization's words replace the default's field by field")
    func localized() throws {
        let payload = try NotificationPayload(
            parsing: .object([
                "title": .string("Hello"), "body": .string("Your order is on its way"),
                "localizations": .object([
                    "de": .object(["body": .string("Deine Bestellung ist unterwegs")]),
                    "fr": .object(["title": .string("Bonjour"), "body": .string("Votre commande arrive")]),
                ]),
            ]))
        let german = payload.localized("de")
        #expect(german.title == "Hello")
        #expect(german.body == "Deine Bestellung ist unterwegs")
        #expect(german.localizations.isEmpty)
        #expect(payload.localized(nil).body == "Your order is on its way")
        #expect(try NotificationPayload(parsing: payload.json) == payload)
    }

    @Test(
        "Bad localizations are refused, naming the member",
        arguments: [
            (#"{"localizations":{"deutsch!":{"body":"x"}}}"#, "payload.localizations.deutsch!", "invalid_locale"),
            (#"{"localizations":{"de":{}}}"#, "payload.localizations.de", "empty_localization"),
            (#"{"localizations":{"de":"Hallo"}}"#, "payload.localizations.de", "invalid_type"),
            (#"{"localizations":{"de":{"text":"x"}}}"#, "payload.localizations.de.text", "unknown_field"),
            (#"{"localizations":[]}"#, "payload.localizations", "invalid_type"),
        ])
    func refused(body: String, field: String, code: String) throws {
        var object = try #require(try JSONValue.parse(Array(body.utf8)).objectValue)
        object["body"] = .string("default")
        #expect {
            try NotificationPayload(parsing: .object(object))
        } throws: { error in
            (error as? HeraldError)?.field == field && (error as? HeraldError)?.code == code
        }
    }
}

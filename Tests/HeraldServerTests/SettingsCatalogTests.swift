import Configuration
import Foundation
import HeraldAPI
import HeraldCore
import HeraldSNS
import HeraldServer
import HeraldServerTestSupport
import HeraldSigV4
import HeraldWebPush
import Synchronization
import Testing

@testable import HeraldAPI

@Suite("Settings catalog and configuration reference")
struct SettingsCatalogTests {
    /// The committed reference.
    static let referenceFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/configuration.md")

    @Test("docs/configuration.md is what `herald config reference` makes from the declarations")
    func committedReference() throws {
        let committed = try String(contentsOf: Self.referenceFile, encoding: .utf8)
        let generated = SettingsCatalog.reference()
        let firstDifference = zip(
            committed.split(separator: "\n", omittingEmptySubsequences: false),
            generated.split(separator: "\n", omittingEmptySubsequences: false)
        ).enumerated().first { $0.element.0 != $0.element.1 }
        // Not #expect(committed == generated): that would print both documents whole.
        if committed != generated {
            Issue.record(
                """
                docs/configuration.md differs from the settings declared in the code\
                \(firstDifference.map { " (line \($0.offset + 1): \"\($0.element.1)\")" } ?? ""): \
                run `\(SettingsCatalog.regenerateCommand)` and commit it.
                """)
        }
    }

    @Test(
        "Every key read while loading a configuration that turns everything on is declared, and every declared one is read"
    )
    func everyReadIsDeclared() throws {
        let recorder = ReadKeys()
        let reader = ConfigReader(providers: [InMemoryProvider(values: Self.everythingOn)], accessReporter: recorder)
        let configuration = try HeraldConfiguration(reader: reader)
        // The sample did turn every part on, so every branch that reads settings ran.
        #expect(configuration.apps.map(\.id) == ["shop"])
        #expect(configuration.providers["shop"]?.apns != nil)
        #expect(configuration.providers["shop"]?.fcm != nil)
        #expect(configuration.providers["shop"]?.webPush != nil)
        #expect(configuration.providers["shop"]?.sns?.credentials?.sessionToken == "session-token")
        #expect(configuration.apps.first?.userTokens.introspection != nil)
        #expect(configuration.configuredWebhooks.map(\.id) == ["crm"])
        #expect(
            configuration.configuredTemplates.map(\.content)
                == [
                    TemplateContent(
                        title: "Welcome {{name}}", localizations: ["de": LocalizedText(title: "Willkommen {{name}}")])
                ])
        let read = recorder.keys
        let undeclared = read.filter { SettingsCatalog.setting(matching: $0) == nil }.map { $0.joined(separator: ".") }
        #expect(
            undeclared.isEmpty,
            "read but not declared (declare each as a Setting near its reader, list it in SettingsCatalog): \(undeclared)"
        )
        let unread = SettingsCatalog.settings.filter { setting in !read.contains { setting.matches($0) } }.map(\.key)
        #expect(unread.isEmpty, "declared but never read: \(unread)")
    }

    @Test("Keys are unique, and each default is a value its setting accepts")
    func declarations() {
        let keys = SettingsCatalog.settings.map(\.key)
        #expect(Set(keys).count == keys.count, "duplicate keys: \(keys.filter { key in keys.count { $0 == key } > 1 })")
        for setting in SettingsCatalog.settings {
            #expect(!setting.summary.isEmpty && !setting.defaultText.isEmpty, "\(setting.key)")
            if let integer = setting as? Setting<Int>, case .integer(let range?, _) = integer.type {
                #expect(range.contains(integer.defaultValue), "\(setting.key): default outside its range")
            }
            if let text = setting as? Setting<String>, !text.isRequired, case .choice(let values) = text.type {
                #expect(values.contains(text.defaultValue), "\(setting.key): default not one of its choices")
            }
        }
    }

    /// A configuration of one app, `shop`, that turns on every part that reads settings only when
    /// turned on (a provider's credentials, introspection, SNS credentials); everything else is read
    /// whether set or not.
    static var everythingOn: [AbsoluteConfigKey: ConfigValue] {
        func key(_ setting: some DeclaredSetting) -> AbsoluteConfigKey {
            AbsoluteConfigKey(setting.key(app: "shop").split(separator: ".").map(String.init))
        }
        func text(_ value: String) -> ConfigValue { ConfigValue(.string(value), isSecret: false) }
        typealias SNS = ProviderConfiguration.SNS.Settings
        return [
            key(HeraldConfiguration.Settings.apps): ConfigValue(.stringArray(["shop"]), isSecret: false),
            key(AppConfiguration.Settings.serverKey): text("hsk_shop-server-key-000"),
            key(AppConfiguration.Settings.clientKey): text("hck_shop-client-key-000"),
            key(IntrospectionConfiguration.Settings.url): text("https://id.example.com/introspect"),
            key(IntrospectionConfiguration.Settings.clientID): text("herald"),
            key(IntrospectionConfiguration.Settings.clientSecret): text("introspection-secret"),
            key(ProviderConfiguration.APNs.Settings.keyFile): text("/nonexistent/AuthKey.p8"),
            key(ProviderConfiguration.APNs.Settings.keyID): text("KEYID12345"),
            key(ProviderConfiguration.APNs.Settings.teamID): text("TEAMID1234"),
            key(ProviderConfiguration.FCM.Settings.serviceAccountFile): text("/nonexistent/account.json"),
            key(ProviderConfiguration.WebPush.Settings.privateKey): text(VAPIDKey.generate().privateKeyBase64URL),
            key(ProviderConfiguration.WebPush.Settings.subject): text("mailto:ops@example.com"),
            key(SNS.gcmApplicationARN): text("arn:aws:sns:us-east-1:123456789012:app/GCM/shop"),
            key(SNS.accessKeyID): text("AKIDSHOP"),
            key(SNS.secretAccessKey): text("shop-secret-access-key"),
            key(SNS.sessionToken): text("session-token"),
            key(AppConfiguration.WebhookSettings.names): ConfigValue(.stringArray(["crm"]), isSecret: false),
            key(AppConfiguration.WebhookSettings.url.named("crm")): text("https://crm.example.com/herald"),
            key(AppConfiguration.WebhookSettings.events.named("crm")): ConfigValue(
                .stringArray(["*"]), isSecret: false),
            key(AppConfiguration.WebhookSettings.secret.named("crm")): text(WebhookSecret.generate().value),
            key(AppConfiguration.TemplateSettings.names): ConfigValue(.stringArray(["welcome"]), isSecret: false),
            key(AppConfiguration.TemplateSettings.title.named("welcome")): text("Welcome {{name}}"),
            key(AppConfiguration.TemplateSettings.localizations.named("welcome")): text(
                #"{"de": {"title": "Willkommen {{name}}"}}"#),
        ]
    }
}

/// Records the key of every configuration read.
private final class ReadKeys: AccessReporter, Sendable {
    private let read = Mutex<[[String]]>([])

    var keys: [[String]] { read.withLock { $0 } }

    func report(_ event: AccessEvent) {
        read.withLock { $0.append(event.metadata.key.components) }
    }
}

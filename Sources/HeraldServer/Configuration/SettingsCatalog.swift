import HeraldAPI
import HeraldCore
import HeraldEngine

/// One group of settings in the reference: a `##` section with its table.
public struct SettingsSection: Sendable {
    /// The section's title.
    public let title: String
    /// Markdown written before the table, when the section needs it.
    public let introduction: String?
    /// The section's settings, in the table's order.
    public let settings: [any DeclaredSetting]

    /// Creates a section.
    public init(_ title: String, introduction: String? = nil, _ settings: [any DeclaredSetting]) {
        self.title = title
        self.introduction = introduction
        self.settings = settings
    }
}

/// Every setting Herald reads, grouped as the reference shows them: what `herald config reference`
/// writes to `docs/configuration.md`, and what a test checks every key read at start-up against.
public enum SettingsCatalog {
    private typealias Server = HeraldConfiguration.Settings

    /// The sections, in the reference's order.
    public static let sections: [SettingsSection] =
        [
            SettingsSection("Server", [Server.host, Server.port]),
            SettingsSection(
                "Database and secrets",
                [
                    Server.database, Server.sqliteSynchronous, Server.sqliteSyncInterval, Server.postgresCallTimeout,
                    Server.secretKey, Server.secretKeyFile,
                ]),
            SettingsSection("Logging", [Server.logLevel, Server.logFormat]),
            SettingsSection("Metrics", [Server.metricsEnabled, Server.metricsToken]),
            SettingsSection(
                "Webhooks",
                [
                    Server.webhooksAllowHTTP, Server.webhooksAllowNetworks, Server.webhooksMaxBacklog,
                    Server.webhooksLeaseSeconds,
                ]
                    + AppConfiguration.WebhookSettings.all),
            SettingsSection("HTTP", [Server.maxBodyBytes] + HTTPLimits.Settings.all),
            SettingsSection(
                "Apps",
                introduction: """
                    Each app of `apps` has its own keys and settings under `app.<id>`. Without `apps`, the generated \
                    `default` app reads its settings (all but the keys) under `app.default`.
                    """,
                [Server.apps] + AppConfiguration.Settings.all + [
                    Server.registrationsPerMinute, ProviderConfiguration.Settings.deliveryLog,
                    ProviderConfiguration.Settings.rejectedTokens,
                    ProviderConfiguration.Settings.liveActivityHighPriorityPerHour,
                ]),
            SettingsSection(
                "User tokens",
                introduction: "The `app.default.jwt.*` keys configure user tokens of the generated `default` app.",
                UserTokenConfiguration.Settings.all),
            SettingsSection(
                "Templates",
                introduction: "Templates kept in the configuration (docs/content.md, \"Templates\").",
                AppConfiguration.TemplateSettings.all),
            SettingsSection("Session introspection", IntrospectionConfiguration.Settings.all),
            SettingsSection("APNs", ProviderConfiguration.APNs.Settings.all),
            SettingsSection("FCM", ProviderConfiguration.FCM.Settings.all),
            SettingsSection("Web Push", ProviderConfiguration.WebPush.Settings.all),
            SettingsSection("AWS SNS delivery", ProviderConfiguration.SNS.Settings.all),
        ] + HeraldApplication.dialects.map { SettingsSection($0.settingsTitle, $0.declaredSettings) } + [
            SettingsSection("Engine", EngineConfiguration.Settings.all),
            SettingsSection(
                "Clean-up",
                introduction: """
                    The clean-up job deletes what the rules below name, every `engine.cleanup.interval_hours`. \
                    The `engine.cleanup.*` rules are ArgusAI's, and every app follows them unless it sets its own \
                    under `app.<id>.lifecycle` (an app with the LeanCloud dialect configured starts from LeanCloud's \
                    lifecycle instead).
                    """,
                [EngineConfiguration.Settings.cleanupInterval] + CleanupPolicy.Settings.engine.all
                    + CleanupPolicy.Settings.app.all + [EngineConfiguration.Settings.appCleanupInterval]),
            SettingsSection("Console", ConsoleConfiguration.Settings.all),
        ]

    /// Every setting, in the reference's order.
    public static var settings: [any DeclaredSetting] { sections.flatMap(\.settings) }

    /// The declared setting `components` (a key that was read, with an app id in place of `<id>`)
    /// is; nil when no declaration matches.
    public static func setting(matching components: [String]) -> (any DeclaredSetting)? {
        settings.first { $0.matches(components) }
    }
}

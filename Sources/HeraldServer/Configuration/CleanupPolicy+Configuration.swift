import Configuration
import HeraldAPI
import HeraldCore
import HeraldEngine

extension CleanupPolicy {
    /// Reads the clean-up rules of `settings` (``Settings/engine``, or ``Settings/app`` for app
    /// `app`); a rule not set keeps `defaults`'s.
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    init(reader: ConfigReader, settings: Settings, app: String? = nil, defaults: CleanupPolicy) throws {
        func days(_ setting: Setting<Int?>) throws -> Int? { try reader.value(setting, app: app) }
        func period(_ days: Int) -> Duration { .seconds(days * 86_400) }
        // A rule that 0 turns off.
        func optional(_ setting: Setting<Int?>, _ value: Duration?) throws -> Duration? {
            guard let days = try days(setting) else { return value }
            return days == 0 ? nil : period(days)
        }
        self = defaults
        if let days = try days(settings.invalidDays) { invalidAfter = period(days) }
        if let days = try days(settings.failingDays) { failingAfter = period(days) }
        unseenAfter = try optional(settings.unseenDays, unseenAfter)
        undeliveredAfter = try optional(settings.undeliveredDays, undeliveredAfter)
        staleAfter = try optional(settings.staleDays, staleAfter)
        if let days = try days(settings.retentionDays) { notificationRetention = period(days) }
        if let days = try days(settings.webhookRetentionDays) { webhookRetention = period(days) }
    }

    /// The clean-up rules' settings: the engine's (`engine.cleanup.*`), which every app follows, and
    /// each app's own (`app.<id>.lifecycle.*`), the same rules with the engine's as defaults.
    public struct Settings: Sendable {
        public let invalidDays: Setting<Int?>
        public let failingDays: Setting<Int?>
        public let unseenDays: Setting<Int?>
        public let undeliveredDays: Setting<Int?>
        public let staleDays: Setting<Int?>
        public let retentionDays: Setting<Int?>
        public let webhookRetentionDays: Setting<Int?>

        /// Every setting above, in the reference's order.
        public var all: [any DeclaredSetting] {
            [invalidDays, failingDays, unseenDays, undeliveredDays, staleDays, retentionDays, webhookRetentionDays]
        }

        /// `engine.cleanup.*`: ArgusAI's rules (002), which every app without its own follows.
        public static let engine = Settings(prefix: "engine.cleanup") { _, text in text }

        /// `app.<id>.lifecycle.*`: one app's rules; a key set here always wins.
        public static let app = Settings(prefix: "app.<id>.lifecycle") { name, _ in
            // The dialects with a lifecycle of their own (LeanCloud's, `LeanCloudRoutes.cleanupPolicy`).
            let leanCloud = [
                "invalid_days": "`60`", "failing_days": "none (no such rule)", "unseen_days": "`120`",
                "undelivered_days": "`0` (off)", "stale_days": "`60`",
            ]
            return "`engine.cleanup.\(name)`; with `app.<id>.leancloud` configured, "
                + (leanCloud[name].map { "LeanCloud's: \($0)" } ?? "the same")
        }

        /// The rules under `prefix`; `defaultText` makes a rule's default text from its name and the
        /// engine's default.
        private init(prefix: String, defaultText: (String, String) -> String) {
            func rule(_ name: String, _ engine: String, _ summary: String) -> Setting<Int?> {
                Setting<Int?>(
                    "\(prefix).\(name)", 0...3650, unit: "days", defaultText: defaultText(name, engine), summary)
            }
            invalidDays = rule(
                "invalid_days", "`30`",
                "Invalid installations invalidated more than this many days ago are deleted.")
            failingDays = rule(
                "failing_days", "`7`",
                "Installations with 5 or more failures and no delivery within this many days are deleted.")
            unseenDays = rule(
                "unseen_days", "`0` (off)",
                "Installations neither seen nor updated within this many days are deleted (`0`: no such rule).")
            undeliveredDays = rule(
                "undelivered_days", "`0` (off)",
                """
                Installations delivered nothing within this many days (counted from their creation when they never \
                had a delivery) are deleted, however recently they registered again (`0`: no such rule).
                """)
            staleDays = rule(
                "stale_days", "`0` (off)",
                """
                Valid installations neither seen nor updated within this many days become invalid until they are \
                registered again (`0`: no such rule).
                """)
            retentionDays = rule(
                "retention_days", "`30`",
                "Finished notifications older than this many days are deleted with their ledger.")
            webhookRetentionDays = rule(
                "webhook_retention_days", "`7`",
                """
                Webhook events delivered or given up more than this many days ago are deleted from the outbox \
                (their history in `GET /v1/webhooks/{id}/deliveries` with them); events still being retried stay.
                """)
        }
    }
}

extension HeraldConfiguration {
    /// Each app's own clean-up rules, where they differ from `base` (`engine.cleanup.*`): an app a
    /// dialect with a lifecycle of its own serves starts from that lifecycle
    /// (``Dialect/cleanupPolicy(_:base:)``: LeanCloud's), every other app from `base`; the app's
    /// `app.<id>.lifecycle.*` keys then override either.
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    static func lifecyclePolicies(
        reader: ConfigReader, appIDs: [String], base: CleanupPolicy, dialects: DialectSettings
    ) throws -> [String: CleanupPolicy] {
        var policies: [String: CleanupPolicy] = [:]
        for id in appIDs {
            if reader.contains(EngineConfiguration.Settings.appCleanupInterval, app: id) {
                throw HeraldError.invalidConfiguration(
                    EngineConfiguration.Settings.appCleanupInterval.key(app: id),
                    "is not per app: set \(EngineConfiguration.Settings.cleanupInterval.key)")
            }
            let start =
                HeraldApplication.dialects.lazy.compactMap { $0.cleanupPolicy(appID: id, in: dialects, base: base) }
                .first ?? base
            let policy = try CleanupPolicy(reader: reader, settings: .app, app: id, defaults: start)
            if policy != base { policies[id] = policy }
        }
        return policies
    }
}

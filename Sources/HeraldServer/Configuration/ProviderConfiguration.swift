import Configuration
import Foundation
import HeraldAPI
import HeraldCore
import HeraldEngine

/// An app's push providers, as configuration names them (files, ids, hosts): each provider's
/// settings under `app.<id>.<provider>` (read by its ``ProviderSetup``), and the ledger's policy.
/// ``TransportFactory`` turns them into transports.
public struct ProviderConfiguration: Sendable {
    private var settings: [String: any Sendable] = [:]
    /// Which outcomes the ledger keeps.
    public var deliveryLog: EngineConfiguration.DeliveryLog
    /// What a token the provider rejected does to its installation.
    public var rejectedTokens: RejectedTokenRule = .invalidate
    /// The high-priority Live Activity pushes each activity may have per hour.
    public var liveActivityHighPriorityPerHour = LiveActivityBudget.defaultPerHour

    /// Creates an app's provider settings with none configured.
    public init(deliveryLog: EngineConfiguration.DeliveryLog = .failures) {
        self.deliveryLog = deliveryLog
    }

    /// Reads app `appID`'s settings of each provider (`app.<id>.apns.*`, `app.<id>.fcm.*`, … see each
    /// ``ProviderSetup``) and its ``Settings``.
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    public init(appID: String, reader: ConfigReader) throws {
        for provider in TransportFactory.providers {
            settings[provider.settingsKey] = try provider.readSettings(appID: appID, reader: reader)
        }
        deliveryLog = try reader.value(Settings.deliveryLog, app: appID)
        rejectedTokens = try reader.value(Settings.rejectedTokens, app: appID)
        liveActivityHighPriorityPerHour = try reader.value(Settings.liveActivityHighPriorityPerHour, app: appID)
    }

    /// The ledger's settings of an app.
    public enum Settings {
        public static let deliveryLog = Setting<EngineConfiguration.DeliveryLog>(
            "app.<id>.delivery_log", choices: [.failures, .all], default: .failures,
            "Whether the ledger keeps every delivery's outcome (`all`) or only the failures (`failures`).")
        public static let rejectedTokens = Setting<RejectedTokenRule>(
            "app.<id>.rejected_tokens", choices: RejectedTokenRule.allCases, default: .invalidate,
            """
            What a token the provider rejects as malformed or not the app's (APNs `400 BadDeviceToken` or \
            `DeviceTokenNotForTopic`, FCM `INVALID_ARGUMENT` on the token: often a development build's token sent to \
            production) does to its installation: `invalidate` it at once, or `count` it as one of its failures \
            (`engine.max_failures` in a row deactivate it). A token that is gone (APNs 410, FCM `UNREGISTERED`) always \
            invalidates. Installations registered through ArgusAI count it whatever this says (its document: "Log but \
            don't delete on other failures").
            """)
        public static let liveActivityHighPriorityPerHour = Setting<Int>(
            "app.<id>.live_activities.high_priority_per_hour", 0...3600, unit: "pushes",
            default: LiveActivityBudget.defaultPerHour,
            """
            How many Live Activity pushes of one activity go at APNs priority 10 (`"priority": "high"`) in an hour;             past it they go at priority 5 until the hour is over. Apple throttles frequent high-priority updates             and publishes no number, asking that most updates use priority 5; the default follows that advice             (docs/live-activities.md). The same budget decides an Android live update's FCM priority.
            """)
    }

    /// The settings keys of the providers the app configures (`apns`, `fcm`, …), sorted.
    var configured: [String] { settings.keys.sorted() }

    /// One provider's settings; nil when the app does not configure it.
    func settings<Setup: ProviderSetup>(of setup: Setup.Type) -> Setup.Settings? {
        settings[Setup.settingsKey] as? Setup.Settings
    }

    /// Replaces one provider's settings.
    mutating func set<Setup: ProviderSetup>(_ value: Setup.Settings?, of setup: Setup.Type) {
        settings[Setup.settingsKey] = value
    }
}

extension EngineConfiguration {
    /// Reads the ``Settings`` (`engine.*`) and the clean-up rules (``CleanupPolicy/Settings/engine``).
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    public init(reader: ConfigReader, deliveryLog: [String: DeliveryLog]) throws {
        let cleanupHours = try reader.value(Settings.cleanupInterval)
        self.init(
            pageSize: try reader.value(Settings.pageSize),
            pipelineDepth: try reader.value(Settings.pipelineDepth),
            rangeSize: try reader.value(Settings.rangeSize),
            workers: try reader.value(Settings.workers),
            lease: .seconds(try reader.value(Settings.leaseSeconds)),
            pollInterval: .milliseconds(try reader.value(Settings.pollInterval)),
            retryPolicy: RetryPolicy(
                base: .milliseconds(try reader.value(Settings.retryBase)),
                cap: .seconds(try reader.value(Settings.retryCap)),
                maxAttempts: try reader.value(Settings.retryMaxAttempts)),
            unreachablePause: (
                base: .milliseconds(try reader.value(Settings.unreachablePauseBase)),
                cap: .seconds(try reader.value(Settings.unreachablePauseCap))
            ),
            maxFailures: try reader.value(Settings.maxFailures),
            deliveryLog: deliveryLog,
            cleanupInterval: cleanupHours == 0 ? nil : .seconds(cleanupHours * 3600),
            cleanupPolicy: try CleanupPolicy(reader: reader, settings: .engine, defaults: CleanupPolicy()),
            channelConfirmWindow: .milliseconds(try reader.value(Settings.channelConfirm)),
            channelMaxWait: .seconds(try reader.value(Settings.channelMaxWait) * 86_400),
            channelRecheck: .seconds(try reader.value(Settings.channelRecheck)))
    }

    /// The dispatch engine's settings.
    public enum Settings {
        public static let pageSize = Setting<Int>(
            "engine.page_size", 1...10_000, default: 2000,
            "The most recipients sent and not yet committed (what a crash can send twice).")
        public static let pipelineDepth = Setting<Int>(
            "engine.pipeline_depth", 1...64, default: 4,
            "Batches in flight during a fan-out; a batch is a page divided by this (never more than the page).")
        public static let rangeSize = Setting<Int>(
            "engine.range_size", 0...10_000_000, default: 10_000,
            """
            A notification reaching more installations than this is cut into ranges of this many, each a job that any \
            node's workers claim, so every node on a PostgreSQL database works one broadcast (and several workers of \
            one node do); `0` never cuts (one worker sends the whole target).
            """)
        public static let workers = Setting<Int>(
            "engine.workers", 0...64, default: 8,
            """
            Notifications worked at once (each waits on the database and the providers in turn, so several keep a \
            machine busy); `0`: this node serves the API and its direct channels and sends nothing (the other nodes \
            on its PostgreSQL database do).
            """)
        public static let leaseSeconds = Setting<Int>(
            "engine.lease_seconds", 1...3600, unit: "seconds", default: 60,
            "A job locked longer without renewal is taken over.")
        public static let pollInterval = Setting<Int>(
            "engine.poll_interval_ms", 10...60_000, unit: "milliseconds", default: 1000,
            """
            How often one idle worker looks for due jobs (a new send wakes one at once, and a worker that finds a job \
            wakes the next).
            """)
        public static let retryBase = Setting<Int>(
            "engine.retry.base_ms", 1...3_600_000, unit: "milliseconds", default: 1000,
            """
            Exponential backoff with full jitter: the ceiling of the delay after the first attempt, doubling with each \
            attempt (the delay is added to a provider's `Retry-After`).
            """)
        public static let retryCap = Setting<Int>(
            "engine.retry.cap_seconds", 1...86_400, unit: "seconds", default: 300,
            "The largest ceiling the backoff reaches.")
        public static let retryMaxAttempts = Setting<Int>(
            "engine.retry.max_attempts", 1...100, default: 5, "Attempts of one delivery in all, the first included.")
        public static let unreachablePauseBase = Setting<Int>(
            "engine.unreachable_pause.base_ms", 1...3_600_000, unit: "milliseconds", default: 1000,
            """
            A provider that answers none of a batch's pushes (connections refused, TLS failing, no HTTP/2 preface \
            within the connect timeout, requests timing out) is paused for the app this long, doubling with each such \
            batch in a row: its deliveries wait without a request, the other providers go on.
            """)
        public static let unreachablePauseCap = Setting<Int>(
            "engine.unreachable_pause.cap_seconds", 1...86_400, unit: "seconds", default: 30,
            "The longest pause of an unreachable provider.")
        public static let maxFailures = Setting<Int>(
            "engine.max_failures", 1...1000, default: 5, "Failures in a row that deactivate an installation.")
        public static let channelConfirm = Setting<Int>(
            "engine.channel.confirm_ms", 100...300_000, unit: "milliseconds", default: 10_000,
            """
            A direct channel that confirms has this long to confirm a push before it is torn down and its pushes fall \
            back to the cloud.
            """)
        public static let channelMaxWait = Setting<Int>(
            "engine.channel.max_wait_days", 1...365, unit: "days", default: 28,
            "How long a push without an expiry waits for a direct-only device.")
        public static let channelRecheck = Setting<Int>(
            "engine.channel.recheck_seconds", 10...86_400, unit: "seconds", default: 3600,
            "How often a push waiting for a direct-only device looks again (it is woken when the device connects).")
        public static let cleanupInterval = Setting<Int>(
            "engine.cleanup.interval_hours", 0...8760, unit: "hours", default: 24,
            "How often the clean-up job runs (`0`: never).")
        public static let appCleanupInterval = Setting<String?>(
            "app.<id>.lifecycle.interval_hours", .other("not accepted"), defaultText: "—",
            "Not per app: setting it stops start-up. The clean-up job's interval is `engine.cleanup.interval_hours`.")
        /// Every setting above but the clean-up job's, in the reference's order.
        public static let all: [any DeclaredSetting] = [
            pageSize, pipelineDepth, rangeSize, workers, leaseSeconds, pollInterval, retryBase, retryCap,
            retryMaxAttempts,
            unreachablePauseBase, unreachablePauseCap, maxFailures, channelConfirm, channelMaxWait, channelRecheck,
        ]
    }
}

import Configuration
import Foundation
import HeraldCore
import HeraldEngine

/// An app's push providers, as configuration names them (files, ids, hosts): each provider's
/// settings under `app.<id>.<provider>` (read by its ``ProviderSetup``), and the ledger's policy.
/// ``TransportFactory`` turns them into transports.
public struct ProviderConfiguration: Sendable {
    private var settings: [String: any Sendable] = [:]
    /// Which outcomes the ledger keeps.
    public var deliveryLog: EngineConfiguration.DeliveryLog

    /// Creates an app's provider settings with none configured.
    public init(deliveryLog: EngineConfiguration.DeliveryLog = .failures) {
        self.deliveryLog = deliveryLog
    }

    /// Reads, under `app.<id>`: each provider's settings (`apns.*`, `fcm.*`, … see each
    /// ``ProviderSetup``) and `delivery_log` (`failures` or `all`; `failures`).
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    public init(appID: String, reader: ConfigReader) throws {
        for provider in TransportFactory.providers {
            settings[provider.settingsKey] = try provider.readSettings(
                appID: appID, reader: reader.scoped(to: ConfigKey([provider.settingsKey])))
        }
        let log = reader.string(forKey: "delivery_log", default: "failures")
        guard let deliveryLog = EngineConfiguration.DeliveryLog(rawValue: log) else {
            throw HeraldConfiguration.invalid("app.\(appID).delivery_log", "must be failures or all")
        }
        self.deliveryLog = deliveryLog
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
    /// Reads `engine.page_size` (2000), `engine.pipeline_depth` (4), `engine.workers` (8), `engine.lease_seconds` (60),
    /// `engine.poll_interval_ms` (1000), `engine.retry.base_ms` (1000), `engine.retry.cap_seconds` (300),
    /// `engine.retry.max_attempts` (5), `engine.unreachable_pause.base_ms` (1000),
    /// `engine.unreachable_pause.cap_seconds` (30), `engine.max_failures` (5), `engine.cleanup.interval_hours`
    /// (24; 0 turns the job off), `engine.cleanup.invalid_days` (30), `engine.cleanup.failing_days` (7),
    /// `engine.cleanup.unseen_days` (0: off), `engine.cleanup.undelivered_days` (0: off),
    /// `engine.cleanup.retention_days` (30), `engine.cleanup.stale_days` (0: off) — ArgusAI's rules (002), which every
    /// app without its own follows (see ``CleanupPolicy/init(reader:prefix:defaults:)``), `engine.channel.confirm_ms` (10000),
    /// `engine.channel.max_wait_days` (28), `engine.channel.recheck_seconds` (3600).
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    public init(reader: ConfigReader, deliveryLog: [String: DeliveryLog]) throws {
        func integer(_ key: String, _ value: Int, _ range: ClosedRange<Int>) throws -> Int {
            let number = try HeraldConfiguration.integer(reader, key, default: value)
            guard range.contains(number) else {
                throw HeraldConfiguration.invalid(key, "must be \(range.lowerBound) to \(range.upperBound)")
            }
            return number
        }
        let cleanupHours = try integer("engine.cleanup.interval_hours", 24, 0...8760)
        self.init(
            pageSize: try integer("engine.page_size", 2000, 1...10_000),
            pipelineDepth: try integer("engine.pipeline_depth", 4, 1...64),
            workers: try integer("engine.workers", 8, 0...64),
            lease: .seconds(try integer("engine.lease_seconds", 60, 1...3600)),
            pollInterval: .milliseconds(try integer("engine.poll_interval_ms", 1000, 10...60_000)),
            retryPolicy: RetryPolicy(
                base: .milliseconds(try integer("engine.retry.base_ms", 1000, 1...3_600_000)),
                cap: .seconds(try integer("engine.retry.cap_seconds", 300, 1...86_400)),
                maxAttempts: try integer("engine.retry.max_attempts", 5, 1...100)),
            unreachablePause: (
                base: .milliseconds(try integer("engine.unreachable_pause.base_ms", 1000, 1...3_600_000)),
                cap: .seconds(try integer("engine.unreachable_pause.cap_seconds", 30, 1...86_400))
            ),
            maxFailures: try integer("engine.max_failures", 5, 1...1000),
            deliveryLog: deliveryLog,
            cleanupInterval: cleanupHours == 0 ? nil : .seconds(cleanupHours * 3600),
            cleanupPolicy: try CleanupPolicy(reader: reader, prefix: "engine.cleanup", defaults: CleanupPolicy()),
            channelConfirmWindow: .milliseconds(try integer("engine.channel.confirm_ms", 10_000, 100...300_000)),
            channelMaxWait: .seconds(try integer("engine.channel.max_wait_days", 28, 1...365) * 86_400),
            channelRecheck: .seconds(try integer("engine.channel.recheck_seconds", 3600, 10...86_400)))
    }
}

import Configuration
import HeraldCore
import HeraldEngine

extension CleanupPolicy {
    /// LeanCloud's installation lifecycle (003): an installation not opened (saved again) for 60 days
    /// becomes invalid until it is, one invalid for over 60 days is deleted, and one not opened for
    /// 120 days is deleted. Nothing else deletes one (no rule on failures or deliveries); notifications
    /// are kept as long as `base` keeps them.
    static func leanCloud(base: CleanupPolicy) -> CleanupPolicy {
        CleanupPolicy(
            invalidAfter: .seconds(60 * 86_400), failureThreshold: base.failureThreshold, failingAfter: nil,
            unseenAfter: .seconds(120 * 86_400), undeliveredAfter: nil,
            notificationRetention: base.notificationRetention, staleAfter: .seconds(60 * 86_400))
    }

    /// Reads the clean-up keys under `prefix` (`engine.cleanup` or `app.<id>.lifecycle`); a key not
    /// set keeps `defaults`'s rule. `invalid_days` (0 to 3650): invalid installations invalidated
    /// longer ago are deleted; `failing_days` (0 to 3650): installations with 5 or more failures and
    /// no delivery within it are deleted; `unseen_days` (0 to 3650, 0: off): installations neither
    /// seen nor updated within it are deleted; `undelivered_days` (0 to 3650, 0: off): installations
    /// delivered nothing within it (since their creation) are deleted; `stale_days` (0 to 3650, 0:
    /// off): valid installations neither seen nor updated within it become invalid until registered
    /// again; `retention_days` (0 to 3650): finished notifications older than it are deleted with
    /// their ledger.
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    init(reader: ConfigReader, prefix: String, defaults: CleanupPolicy) throws {
        func days(_ name: String) throws -> Int? {
            let key = "\(prefix).\(name)"
            guard reader.int(forKey: ConfigKey(key)) != nil || reader.string(forKey: ConfigKey(key)) != nil else {
                return nil
            }
            let value = try HeraldConfiguration.integer(reader, key, default: 0)
            guard (0...3650).contains(value) else { throw HeraldConfiguration.invalid(key, "must be 0 to 3650") }
            return value
        }
        func period(_ days: Int) -> Duration { .seconds(days * 86_400) }
        // A rule that 0 turns off.
        func optional(_ name: String, _ value: Duration?) throws -> Duration? {
            guard let days = try days(name) else { return value }
            return days == 0 ? nil : period(days)
        }
        self = defaults
        if let days = try days("invalid_days") { invalidAfter = period(days) }
        if let days = try days("failing_days") { failingAfter = period(days) }
        unseenAfter = try optional("unseen_days", unseenAfter)
        undeliveredAfter = try optional("undelivered_days", undeliveredAfter)
        staleAfter = try optional("stale_days", staleAfter)
        if let days = try days("retention_days") { notificationRetention = period(days) }
    }
}

extension HeraldConfiguration {
    /// Each app's own clean-up rules, where they differ from `base` (`engine.cleanup.*`): an app with
    /// the LeanCloud dialect starts from LeanCloud's lifecycle (``CleanupPolicy/leanCloud(base:)``),
    /// every other app from `base`; the app's `app.<id>.lifecycle.*` keys then override either.
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    static func lifecyclePolicies(
        reader: ConfigReader, appIDs: [String], base: CleanupPolicy, dialects: DialectSettings
    ) throws -> [String: CleanupPolicy] {
        var policies: [String: CleanupPolicy] = [:]
        for id in appIDs {
            let prefix = "app.\(id).lifecycle"
            if reader.string(forKey: ConfigKey("\(prefix).interval_hours")) != nil
                || reader.int(forKey: ConfigKey("\(prefix).interval_hours")) != nil
            {
                throw invalid(
                    "\(prefix).interval_hours", "is not per app: set engine.cleanup.interval_hours")
            }
            let start = dialects.leanCloud[id]?.isEnabled == true ? CleanupPolicy.leanCloud(base: base) : base
            let policy = try CleanupPolicy(reader: reader, prefix: prefix, defaults: start)
            if policy != base { policies[id] = policy }
        }
        return policies
    }
}

import Foundation

/// What an installation's preferences say to do with one notification.
public enum PreferenceDecision: Sendable, Equatable {
    /// Send it now, with or without sound.
    case deliver(soundEnabled: Bool)
    /// Drop it; `reason` is one of the stable codes in `SkipReason`.
    case skip(reason: String)
    /// Hold it and send it at this instant (the end of the quiet hours).
    case deferUntil(Date)

    /// The stable reasons a notification is skipped, as they appear in delivery records.
    public enum SkipReason {
        /// The installation is muted.
        public static let muted = "muted"
        /// The notification's source is not among the enabled sources.
        public static let sourceDisabled = "source_disabled"
        /// The notification's category is not among the enabled categories.
        public static let categoryDisabled = "category_disabled"
        /// The notification falls in quiet hours and the mode is `skip`.
        public static let quietHours = "quiet_hours"
    }

    /// The interruption level that breaks through mute and quiet hours (APNs' `critical`).
    public static let criticalInterruptionLevel = "critical"
}

extension Preferences {
    /// Applies the preferences to one notification, at `now`.
    ///
    /// In order: a muted installation skips it; a source or category outside an enabled list skips it
    /// (a notification without a source or category passes that list); inside quiet hours it is skipped
    /// or deferred to the end of the window, by `quietHoursMode`; otherwise it is delivered, with sound
    /// if `soundEnabled`.
    ///
    /// A notification whose interruption level is `critical` is delivered through mute and quiet hours,
    /// as the alert it stands for (a safety or health warning) cannot wait; it still honours the source
    /// and category lists, which the user set for what they never want, and `soundEnabled`.
    ///
    /// Quiet hours are read on the clock of their own `timezone`, else of `installationTimeZone`, else
    /// UTC; a zone name that does not load counts as absent.
    public func decide(
        source: String?, category: String?, interruptionLevel: String?, installationTimeZone: String?, now: Date
    ) -> PreferenceDecision {
        let critical = interruptionLevel == PreferenceDecision.criticalInterruptionLevel
        if !critical, let mutedUntil, mutedUntil > now {
            return .skip(reason: PreferenceDecision.SkipReason.muted)
        }
        if let enabledSources, let source, !enabledSources.contains(source) {
            return .skip(reason: PreferenceDecision.SkipReason.sourceDisabled)
        }
        if let enabledCategories, let category, !enabledCategories.contains(category) {
            return .skip(reason: PreferenceDecision.SkipReason.categoryDisabled)
        }
        if !critical, let quietHours, quietHours.enabled {
            let zone =
                quietHours.timezone.flatMap(TimeZone.init(identifier:))
                ?? installationTimeZone.flatMap(TimeZone.init(identifier:)) ?? TimeZone(secondsFromGMT: 0)!
            if quietHours.contains(LocalDateTime(now, in: zone)) {
                switch quietHoursMode {
                case .skip: return .skip(reason: PreferenceDecision.SkipReason.quietHours)
                case .defer: return .deferUntil(quietHours.endInstant(after: now, in: zone))
                }
            }
        }
        return .deliver(soundEnabled: soundEnabled)
    }
}

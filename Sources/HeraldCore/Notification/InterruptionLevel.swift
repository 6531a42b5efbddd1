/// How urgently a notification interrupts its user (APNs `aps.interruption-level`, iOS 15+);
/// `critical` also goes through mute and quiet hours.
public enum InterruptionLevel: String, Sendable, CaseIterable {
    case passive, active
    case timeSensitive = "time-sensitive"
    case critical
}

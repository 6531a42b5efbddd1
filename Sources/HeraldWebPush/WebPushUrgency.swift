/// How soon a push matters to the user (RFC 8030 §5.3): push services and browsers may hold back
/// lower urgencies to save battery. Sent as the `Urgency` header.
public enum WebPushUrgency: String, Sendable, Hashable, CaseIterable {
    /// Only on power and Wi-Fi (advertisements).
    case veryLow = "very-low"
    /// On power or Wi-Fi (topic updates).
    case low
    /// On neither power nor Wi-Fi (chat, calendar): what the push service assumes without the header.
    case normal
    /// Even on low battery (incoming call, time-sensitive alert).
    case high
}

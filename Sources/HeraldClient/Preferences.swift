import Foundation

/// An installation's notification preferences (`/v1/installations/{id}/preferences`): which
/// sources and categories it wants, quiet hours, sound and muting. Setting them replaces them
/// whole; a nil list means "all".
public struct Preferences: Sendable, Equatable, Codable {
    /// A daily window in which notifications are held back.
    public struct QuietHours: Sendable, Equatable, Codable {
        /// `HH:mm`, 24-hour.
        public var start: String
        /// `HH:mm`, 24-hour; before `start` for a window across midnight.
        public var end: String
        /// IANA zone; nil means the installation's, else UTC.
        public var timeZone: String?
        /// False keeps the times without holding anything back.
        public var enabled: Bool

        /// Creates a window.
        public init(start: String, end: String, timeZone: String? = nil, enabled: Bool = true) {
            self.start = start
            self.end = end
            self.timeZone = timeZone
            self.enabled = enabled
        }

        /// Decodes a window; one without `enabled` (an older server's) is on.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            start = try container.decode(String.self, forKey: .start)
            end = try container.decode(String.self, forKey: .end)
            timeZone = try container.decodeIfPresent(String.self, forKey: .timeZone)
            enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled) ?? true
        }

        enum CodingKeys: String, CodingKey {
            case start, end, enabled
            case timeZone = "timezone"
        }
    }

    /// What happens to a notification in quiet hours: `skip` drops it, `defer` delivers it when
    /// they end.
    public struct QuietHoursMode: RawRepresentable, Sendable, Hashable, Codable {
        public var rawValue: String
        /// Creates a mode from Herald's name for it.
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let skip = Self(rawValue: "skip")
        public static let `defer` = Self(rawValue: "defer")
    }

    /// The sources (cameras, services) whose notifications are wanted; nil means every source.
    public var enabledSources: [String]?
    /// The categories (event types) wanted; nil means every category.
    public var enabledCategories: [String]?
    public var quietHours: QuietHours?
    public var quietHoursMode: QuietHoursMode
    public var soundEnabled: Bool
    /// Nothing is delivered before this instant.
    public var mutedUntil: Date?

    /// Creates preferences; the defaults want everything, with sound.
    public init(
        enabledSources: [String]? = nil, enabledCategories: [String]? = nil, quietHours: QuietHours? = nil,
        quietHoursMode: QuietHoursMode = .skip, soundEnabled: Bool = true, mutedUntil: Date? = nil
    ) {
        self.enabledSources = enabledSources
        self.enabledCategories = enabledCategories
        self.quietHours = quietHours
        self.quietHoursMode = quietHoursMode
        self.soundEnabled = soundEnabled
        self.mutedUntil = mutedUntil
    }

    enum CodingKeys: String, CodingKey {
        case enabledSources = "enabled_sources"
        case enabledCategories = "enabled_categories"
        case quietHours = "quiet_hours"
        case quietHoursMode = "quiet_hours_mode"
        case soundEnabled = "sound_enabled"
        case mutedUntil = "muted_until"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        enabledSources = try container.decodeIfPresent([String].self, forKey: .enabledSources)
        enabledCategories = try container.decodeIfPresent([String].self, forKey: .enabledCategories)
        quietHours = try container.decodeIfPresent(QuietHours.self, forKey: .quietHours)
        quietHoursMode = try container.decodeIfPresent(QuietHoursMode.self, forKey: .quietHoursMode) ?? .skip
        soundEnabled = try container.decodeIfPresent(Bool.self, forKey: .soundEnabled) ?? true
        mutedUntil = try container.decodeIfPresent(String.self, forKey: .mutedUntil).map { text in
            guard let date = Timestamp.parse(text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .mutedUntil, in: container, debugDescription: "not an RFC 3339 date-time: \(text)")
            }
            return date
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        // Every member, null where nil: the route replaces the preferences whole.
        try container.encode(enabledSources, forKey: .enabledSources)
        try container.encode(enabledCategories, forKey: .enabledCategories)
        try container.encode(quietHours, forKey: .quietHours)
        try container.encode(quietHoursMode, forKey: .quietHoursMode)
        try container.encode(soundEnabled, forKey: .soundEnabled)
        try container.encode(mutedUntil.map(Timestamp.format), forKey: .mutedUntil)
    }
}

/// RFC 3339 date-times as Herald writes and reads them.
enum Timestamp {
    /// `2026-12-24T09:00:00.250Z` (UTC, milliseconds).
    static func format(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// A date-time with an offset, with or without a fraction of a second.
    static func parse(_ text: String) -> Date? {
        (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
            ?? (try? Date.ISO8601FormatStyle().parse(text))
    }
}

import Foundation

extension Preferences {
    /// What quiet hours do to a notification that falls inside them.
    public enum QuietHoursMode: String, Sendable, CaseIterable {
        /// Drop it.
        case skip
        /// Hold it and deliver it when the quiet hours end.
        case `defer`
    }

    /// A time of day to the minute, written `HH:mm` on a 24-hour clock (`07:00`, `22:30`).
    public struct TimeOfDay: Sendable, Hashable, Comparable {
        /// The hour, 0 to 23.
        public let hour: Int
        /// The minute, 0 to 59.
        public let minute: Int

        /// Creates a time of day, or nil when the hour or minute is out of range.
        public init?(hour: Int, minute: Int) {
            guard (0...23).contains(hour), (0...59).contains(minute) else { return nil }
            self.hour = hour
            self.minute = minute
        }

        /// Parses `HH:mm` (two digits each, 24-hour clock); nil for anything else.
        public init?(_ text: String) {
            let bytes = Array(text.utf8)
            guard bytes.count == 5, bytes[2] == UInt8(ascii: ":") else { return nil }
            let digits = [bytes[0], bytes[1], bytes[3], bytes[4]]
            guard digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            let values = digits.map { Int($0 - 0x30) }
            self.init(hour: values[0] * 10 + values[1], minute: values[2] * 10 + values[3])
        }

        /// The time as `HH:mm`.
        public var text: String {
            (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
        }

        /// Seconds since midnight.
        public var secondOfDay: Int { hour * 3_600 + minute * 60 }

        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.secondOfDay < rhs.secondOfDay }
    }

    /// A daily window, from `start` (inclusive) to `end` (exclusive) on the local clock, in which
    /// notifications are held back. A window whose end is before its start crosses midnight
    /// (22:00 to 07:00); a window whose start equals its end is empty (parsing refuses it). A window
    /// switched off (`enabled: false`) keeps its times and holds nothing back until switched on again.
    public struct QuietHours: Sendable, Equatable {
        /// When the window opens.
        public var start: TimeOfDay
        /// When the window closes; local times from here on are outside it.
        public var end: TimeOfDay
        /// The IANA time zone of the local clock; nil to use the installation's zone (UTC if it has none).
        public var timezone: String?
        /// Whether the window holds notifications back; one switched off keeps its times.
        public var enabled: Bool

        /// The members a quiet-hours object may carry.
        public static let fields: Set<String> = ["start", "end", "timezone", "enabled"]

        /// Creates a window.
        public init(start: TimeOfDay, end: TimeOfDay, timezone: String? = nil, enabled: Bool = true) {
            self.start = start
            self.end = end
            self.timezone = timezone
            self.enabled = enabled
        }

        /// Parses and validates a quiet-hours object.
        /// - Throws: `HeraldError` naming the member at fault: `unknown_field`, `missing_field`,
        ///   `invalid_type`, `invalid_time` (not `HH:mm`), `invalid_timezone` (not an IANA name), or
        ///   `invalid_quiet_hours` naming the object when start equals end.
        public init(parsing object: JSONObjectReader) throws(HeraldError) {
            try object.rejectUnknown(allowed: Self.fields)
            start = try Self.readTime(object, "start")
            end = try Self.readTime(object, "end")
            timezone = try object.string("timezone")
            if let timezone { try InstallationRules.validateTimeZone(timezone, field: object.name("timezone")) }
            enabled = try object.bool("enabled") ?? true
            guard start != end else {
                throw .invalidValue(
                    object.path, code: "invalid_quiet_hours",
                    "Quiet hours must end at a different time than they start.")
            }
        }

        /// The window as JSON, `timezone` null when nil.
        public var json: JSONValue {
            .object([
                "start": .string(start.text), "end": .string(end.text),
                "timezone": timezone.map(JSONValue.string) ?? .null, "enabled": .bool(enabled),
            ])
        }

        /// Whether the local clock reading `time` is inside the window.
        public func contains(_ time: LocalDateTime) -> Bool {
            let second = time.secondOfDay
            if start < end {
                return second >= start.secondOfDay && second < end.secondOfDay
            }
            return start > end && (second >= start.secondOfDay || second < end.secondOfDay)
        }

        /// The next instant after `now` at which the clock in `timeZone` reaches `end`, for a `now`
        /// inside the window.
        ///
        /// An `end` skipped by a daylight-saving gap is reached at the first instant after the gap; in a
        /// repeated hour it is the first time it comes round after `now`.
        func endInstant(after now: Date, in timeZone: TimeZone) -> Date {
            let local = LocalDateTime(now, in: timeZone)
            // Past the start of a window that crosses midnight, the end is tomorrow.
            let days = start > end && local.secondOfDay >= start.secondOfDay ? 1 : 0
            let target = local.on(daysLater: days, atSecondOfDay: end.secondOfDay)
            let instants = target.instants(in: timeZone)
            if let next = instants.first(where: { $0 > now }) { return next }
            return instants.last ?? target.instant(in: timeZone)
        }

        private static func readTime(_ object: JSONObjectReader, _ key: String) throws(HeraldError) -> TimeOfDay {
            let text = try object.requiredString(key)
            guard let time = TimeOfDay(text) else {
                throw .invalidValue(
                    object.name(key), code: "invalid_time",
                    "Field '\(object.name(key))' must be a time of day as HH:mm on a 24-hour clock, like 22:00.")
            }
            return time
        }
    }
}

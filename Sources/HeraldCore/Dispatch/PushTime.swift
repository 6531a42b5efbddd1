import Foundation

/// When a scheduled notification goes out: one instant for everyone, or a wall-clock time that each
/// device reaches in its own time zone ("09:00 wherever the user is").
///
/// Written as RFC 3339: with an offset (`2026-12-24T09:00:00Z`, `2026-12-24T09:00:00+02:00`) it is an
/// instant; without one (`2026-12-24T09:00:00`) it is device-local.
public enum PushTime: Sendable, Equatable {
    /// The same instant for every device.
    case instant(Date)
    /// A wall-clock time, reached by each device in its own time zone.
    case local(LocalDateTime)

    /// The largest offset ahead of UTC in use (Pacific/Kiritimati, UTC+14): the first place a local
    /// time comes round.
    public static let maximumOffset: Duration = .seconds(14 * 3_600)
    /// The largest offset behind UTC in use (UTC−12): the last place a local time comes round.
    public static let minimumOffset: Duration = .seconds(-12 * 3_600)

    /// Parses an RFC 3339 date-time, its offset optional (a fraction of a second, up to nine digits, is
    /// allowed either way; a leap second, `:60`, is not).
    /// - Throws: `HeraldError` with code `invalid_push_time` naming `field` when the text is anything else.
    public init(parsing text: String, field: String) throws(HeraldError) {
        guard let time = Self.parse(text) else {
            throw .invalidValue(
                field, code: "invalid_push_time",
                "Field '\(field)' must be an RFC 3339 date-time like 2026-12-24T09:00:00Z, or without an offset "
                    + "(2026-12-24T09:00:00) for the device's local time.")
        }
        self = time
    }

    /// Parses an RFC 3339 date-time with an optional offset; nil when the text is not one.
    public static func parse(_ text: String) -> PushTime? {
        guard let parsed = LocalDateTime.parse(rfc3339: text) else { return nil }
        let time = parsed.time
        guard let offset = parsed.offset else { return .local(time) }
        return .instant(LocalDateTime.date(seconds: time.epochSeconds - offset, nanosecond: time.nanosecond))
    }

    /// The instant the notification is due on a device in `timeZone`.
    ///
    /// A local time the zone skips (a daylight-saving gap) is due at the first instant after the gap; a
    /// local time the zone repeats is due the first time it comes round.
    public func instant(in timeZone: TimeZone) -> Date {
        switch self {
        case .instant(let date): date
        case .local(let time): time.instant(in: timeZone)
        }
    }

    /// The first instant the notification is due anywhere: when a local time comes round at UTC+14.
    public var earliestInstant: Date {
        switch self {
        case .instant(let date): date
        case .local(let time): Self.date(of: time, atOffset: Self.maximumOffset)
        }
    }

    /// The last instant the notification is due anywhere: when a local time comes round at UTC−12.
    public var latestInstant: Date {
        switch self {
        case .instant(let date): date
        case .local(let time): Self.date(of: time, atOffset: Self.minimumOffset)
        }
    }

    /// The time as RFC 3339: an instant in UTC (`2026-12-24T07:00:00Z`) with the shortest fraction of a
    /// second that reads back as the same `Date` (none when it is whole); a local time without an offset.
    /// Parsing it gives back an equal value of the same kind.
    public var rfc3339: String {
        switch self {
        case .instant(let date):
            let (seconds, nanosecond) = LocalDateTime.split(date)
            let fraction = LocalDateTime.shortestNanosecond(seconds: seconds, nanosecond: nanosecond, of: date)
            return LocalDateTime(epochSeconds: seconds, nanosecond: fraction).rfc3339 + "Z"
        case .local(let time):
            return time.rfc3339
        }
    }

    private static func date(of time: LocalDateTime, atOffset offset: Duration) -> Date {
        LocalDateTime.date(
            seconds: time.epochSeconds - Int(offset.components.seconds), nanosecond: time.nanosecond)
    }
}

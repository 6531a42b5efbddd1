import Foundation

/// A wall-clock date and time with no time zone: what an RFC 3339 `date-time` says before its offset.
///
/// Herald uses it for push times meant for "09:00 on the device" and for the end of a user's quiet
/// hours. Turning it into an instant needs a time zone, and there the wall clock can be missing (the
/// hour skipped when daylight saving time starts) or repeated (the hour lived twice when it ends);
/// `instant(in:)` settles both the same way everywhere. The year is 1 to 9999, as RFC 3339 writes it.
public struct LocalDateTime: Sendable, Hashable {
    /// The year, 1 to 9999.
    public let year: Int
    /// The month, 1 to 12.
    public let month: Int
    /// The day of the month, 1 to 31 depending on the month.
    public let day: Int
    /// The hour, 0 to 23.
    public let hour: Int
    /// The minute, 0 to 59.
    public let minute: Int
    /// The second, 0 to 59 (leap seconds are not represented).
    public let second: Int
    /// The fraction of the second in nanoseconds, 0 to 999 999 999.
    public let nanosecond: Int

    /// Creates a wall-clock time from its fields, or nil when they do not name a day of the proleptic
    /// Gregorian calendar and a time of day.
    public init?(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, nanosecond: Int = 0) {
        guard (1...9999).contains(year), (1...12).contains(month),
            (1...Self.daysIn(month: month, year: year)).contains(day), (0...23).contains(hour),
            (0...59).contains(minute), (0...59).contains(second), (0...999_999_999).contains(nanosecond)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
        self.nanosecond = nanosecond
    }

    /// The wall-clock time that a clock set to `timeZone` shows at `date`.
    public init(_ date: Date, in timeZone: TimeZone) {
        let (seconds, nanosecond) = Self.split(date)
        self.init(epochSeconds: seconds + timeZone.secondsFromGMT(for: date), nanosecond: nanosecond)
    }

    /// The wall-clock time `epochSeconds` after 1970-01-01T00:00:00 (read as if it were UTC).
    init(epochSeconds: Int, nanosecond: Int) {
        let days = Self.floorDivide(epochSeconds, 86_400)
        let secondOfDay = epochSeconds - days * 86_400
        (year, month, day) = Self.civil(fromDays: days)
        hour = secondOfDay / 3_600
        minute = secondOfDay % 3_600 / 60
        second = secondOfDay % 60
        self.nanosecond = nanosecond
    }

    /// The instant at which a clock set to `timeZone` shows this time.
    ///
    /// When the clock skips this time (a daylight-saving gap) the answer is the first instant after
    /// the gap, so 02:30 on the night Paris moves from 02:00 to 03:00 is 03:00 local time. When the
    /// clock shows it twice (the hour repeated when daylight saving time ends) it is the earlier one.
    public func instant(in timeZone: TimeZone) -> Date {
        instants(in: timeZone).first ?? gapEnd(in: timeZone)
    }

    /// Every instant at which a clock set to `timeZone` shows this time, earliest first: none in a
    /// daylight-saving gap, two in a repeated hour, one otherwise.
    func instants(in timeZone: TimeZone) -> [Date] {
        let wall = epochSeconds
        let around = [offset(timeZone, at: wall - 86_400), offset(timeZone, at: wall + 86_400)]
        let guesses = Set(around + around.map { offset(timeZone, at: wall - $0) })
        return
            guesses
            .map { wall - $0 }
            .filter { wall - $0 == offset(timeZone, at: $0) }
            .sorted()
            .map { Self.date(seconds: $0, nanosecond: nanosecond) }
    }

    /// The first instant whose wall-clock time is at or after this one, for a time the clock skips.
    private func gapEnd(in timeZone: TimeZone) -> Date {
        let wall = epochSeconds
        let around = [offset(timeZone, at: wall - 86_400), offset(timeZone, at: wall + 86_400)]
        // The local clock reads before `wall` at `low` and at or after it at `high`.
        var low = wall - around.max()!
        var high = wall - around.min()!
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if middle + offset(timeZone, at: middle) >= wall { high = middle } else { low = middle }
        }
        return Self.date(seconds: high, nanosecond: 0)
    }

    private func offset(_ timeZone: TimeZone, at seconds: Int) -> Int {
        timeZone.secondsFromGMT(for: Self.date(seconds: seconds, nanosecond: 0))
    }

    /// The time as RFC 3339 without an offset (`2026-12-24T09:00:00`, with a fraction only when the
    /// nanoseconds are not zero, trailing zeros dropped).
    public var rfc3339: String {
        var text =
            "\(Self.pad(year, 4))-\(Self.pad(month, 2))-\(Self.pad(day, 2))"
            + "T\(Self.pad(hour, 2)):\(Self.pad(minute, 2)):\(Self.pad(second, 2))"
        if nanosecond != 0 {
            var fraction = Self.pad(nanosecond, 9)
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return text
    }

    /// Seconds from 1970-01-01T00:00:00 to this wall-clock time, read as if it were UTC.
    var epochSeconds: Int {
        Self.days(fromCivil: year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second
    }

    /// Seconds since midnight.
    var secondOfDay: Int { hour * 3_600 + minute * 60 + second }

    /// The time `secondOfDay` seconds after midnight on this date moved by `days` days.
    func on(daysLater days: Int, atSecondOfDay secondOfDay: Int) -> LocalDateTime {
        LocalDateTime(epochSeconds: epochSeconds - self.secondOfDay + days * 86_400 + secondOfDay, nanosecond: 0)
    }

    /// Parses RFC 3339 §5.6 `date-time`, with the offset optional: the wall-clock time, and the offset
    /// from UTC in seconds when the text has one (`Z` is 0). Nil when the text is anything else.
    static func parse(rfc3339 text: String) -> (time: LocalDateTime, offset: Int?)? {
        let bytes = Array(text.utf8)
        func number(at start: Int, digits: Int) -> Int? {
            guard start + digits <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<start + digits] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        func byte(at index: Int, is characters: String) -> Bool {
            index < bytes.count && characters.utf8.contains(bytes[index])
        }
        // RFC 3339 allows lower-case "t" and "z" (§5.6, note on ABNF case-insensitivity).
        guard let year = number(at: 0, digits: 4), byte(at: 4, is: "-"), let month = number(at: 5, digits: 2),
            byte(at: 7, is: "-"), let day = number(at: 8, digits: 2), byte(at: 10, is: "Tt"),
            let hour = number(at: 11, digits: 2), byte(at: 13, is: ":"), let minute = number(at: 14, digits: 2),
            byte(at: 16, is: ":"), let second = number(at: 17, digits: 2)
        else { return nil }
        var index = 19
        var nanosecond = 0
        if byte(at: index, is: ".") {
            let start = index + 1
            index = start
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
            // Nine digits is all a nanosecond clock can keep; refuse more rather than drop them.
            guard (1...9).contains(index - start), let fraction = number(at: start, digits: index - start) else {
                return nil
            }
            nanosecond = fraction * Self.powersOfTen[9 - (index - start)]
        }
        var offset: Int?
        if index == bytes.count {
            offset = nil
        } else if byte(at: index, is: "Zz"), index + 1 == bytes.count {
            offset = 0
        } else if byte(at: index, is: "+-"), index + 6 == bytes.count, let hours = number(at: index + 1, digits: 2),
            byte(at: index + 3, is: ":"), let minutes = number(at: index + 4, digits: 2), hours <= 23, minutes <= 59
        {
            offset = (bytes[index] == UInt8(ascii: "-") ? -1 : 1) * (hours * 3_600 + minutes * 60)
        } else {
            return nil
        }
        guard
            let time = LocalDateTime(
                year: year, month: month, day: day, hour: hour, minute: minute, second: second,
                nanosecond: nanosecond)
        else { return nil }
        return (time, offset)
    }

    /// An instant as whole seconds since 1970 and nanoseconds, clamped to the years 1 to 9999.
    ///
    /// Read from `timeIntervalSinceReferenceDate`, which is what `Date` stores, so that writing the
    /// nanoseconds out and reading them back with `date(seconds:nanosecond:)` gives the same `Date`.
    static func split(_ date: Date) -> (seconds: Int, nanosecond: Int) {
        let reference = date.timeIntervalSinceReferenceDate
        let bounds = Double(minimumSeconds - referenceEpoch)...Double(maximumSeconds - referenceEpoch)
        guard reference >= bounds.lowerBound else { return (minimumSeconds, 0) }
        guard reference <= bounds.upperBound else { return (maximumSeconds, 0) }
        let whole = reference.rounded(.down)
        var seconds = Int(whole) + referenceEpoch
        var nanosecond = Int(((reference - whole) * 1e9).rounded())
        if nanosecond == 1_000_000_000 {
            seconds += 1
            nanosecond = 0
        }
        return (seconds, nanosecond)
    }

    /// The nanoseconds of `date` with the fewest decimal digits that still read back as `date`.
    ///
    /// A `Date` holds about a tenth of a microsecond today, so `.123` seconds is stored as
    /// 0.123000025…; writing nine digits would be exact but noisy, so this finds `.123`.
    static func shortestNanosecond(seconds: Int, nanosecond: Int, of date: Date) -> Int {
        for digits in 0..<9 {
            let unit = powersOfTen[9 - digits]
            let rounded = (nanosecond + unit / 2) / unit * unit
            if rounded < 1_000_000_000, Self.date(seconds: seconds, nanosecond: rounded) == date { return rounded }
        }
        return nanosecond
    }

    /// The instant whole `seconds` since 1970 plus `nanosecond`.
    static func date(seconds: Int, nanosecond: Int) -> Date {
        Date(timeIntervalSinceReferenceDate: Double(seconds - referenceEpoch) + Double(nanosecond) / 1e9)
    }

    /// Seconds from 1970 to 2001-01-01T00:00:00Z, the reference date of `Date`.
    private static let referenceEpoch = 978_307_200
    private static let minimumSeconds = days(fromCivil: 1, 1, 1) * 86_400
    private static let maximumSeconds = days(fromCivil: 9999, 12, 31) * 86_400 + 86_399
    private static let powersOfTen = [
        1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000,
    ]

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year.isMultiple(of: 4) && !year.isMultiple(of: 100)) || year.isMultiple(of: 400) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    // Days between 1970-01-01 and a proleptic Gregorian date, and back, after Howard Hinnant's
    // "chrono-compatible low-level date algorithms" (eras of 400 years starting on March 1).
    private static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int {
        let year = month <= 2 ? year - 1 : year
        let era = floorDivide(year, 400)
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = floorDivide(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Division rounding toward negative infinity (Swift's `/` rounds toward zero); `divisor` > 0.
    private static func floorDivide(_ dividend: Int, _ divisor: Int) -> Int {
        dividend >= 0 ? dividend / divisor : -((-dividend + divisor - 1) / divisor)
    }
}

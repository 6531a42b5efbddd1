import Foundation
import HeraldCore
import Testing

@Suite("Push times: absolute or device-local")
struct PushTimeTests {
    /// An instant written as RFC 3339 in UTC, read by Foundation (not by the code under test).
    static func at(_ text: String) -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)!
    }

    static func zone(_ identifier: String) -> TimeZone { TimeZone(identifier: identifier)! }

    static func local(_ text: String) throws -> PushTime {
        let time = try PushTime(parsing: text, field: "send_at")
        guard case .local = time else {
            Issue.record("\(text) should be a local time")
            return time
        }
        return time
    }

    @Test("With an offset or Z, a push time is one instant")
    func absolute() throws {
        let cases: [(String, Date)] = [
            ("2026-12-24T09:00:00Z", Self.at("2026-12-24T09:00:00Z")),
            ("2026-12-24T09:00:00+02:00", Self.at("2026-12-24T07:00:00Z")),
            ("2026-12-24T09:00:00-05:30", Self.at("2026-12-24T14:30:00Z")),
            ("2026-12-24T09:00:00-00:00", Self.at("2026-12-24T09:00:00Z")),
            ("2026-12-24t09:00:00z", Self.at("2026-12-24T09:00:00Z")),
            ("2026-12-24T09:00:00.5Z", Self.at("2026-12-24T09:00:00Z").addingTimeInterval(0.5)),
            ("2026-12-24T00:30:00+14:00", Self.at("2026-12-23T10:30:00Z")),
            ("2028-02-29T23:59:59Z", Self.at("2028-02-29T23:59:59Z")),
        ]
        for (text, expected) in cases {
            #expect(try PushTime(parsing: text, field: "send_at") == .instant(expected), "\(text)")
        }
        let time = try PushTime(parsing: "2026-12-24T09:00:00+02:00", field: "send_at")
        #expect(time.instant(in: Self.zone("Asia/Tokyo")) == Self.at("2026-12-24T07:00:00Z"))
        #expect(time.earliestInstant == Self.at("2026-12-24T07:00:00Z"))
        #expect(time.latestInstant == Self.at("2026-12-24T07:00:00Z"))
    }

    @Test("Without an offset, a push time is the wall-clock time in each device's zone")
    func local() throws {
        let summer = try Self.local("2026-07-01T09:00:00")
        #expect(summer == .local(LocalDateTime(year: 2026, month: 7, day: 1, hour: 9, minute: 0, second: 0)!))
        #expect(summer.instant(in: Self.zone("Europe/Paris")) == Self.at("2026-07-01T07:00:00Z"))
        #expect(summer.instant(in: Self.zone("America/New_York")) == Self.at("2026-07-01T13:00:00Z"))
        #expect(summer.instant(in: Self.zone("Europe/London")) == Self.at("2026-07-01T08:00:00Z"))
        #expect(summer.instant(in: Self.zone("UTC")) == Self.at("2026-07-01T09:00:00Z"))
        #expect(summer.instant(in: Self.zone("Asia/Kolkata")) == Self.at("2026-07-01T03:30:00Z"))
        #expect(summer.instant(in: Self.zone("Asia/Tokyo")) == Self.at("2026-07-01T00:00:00Z"))

        let winter = try Self.local("2026-12-24T09:00:00")
        #expect(winter.instant(in: Self.zone("Europe/Paris")) == Self.at("2026-12-24T08:00:00Z"))
        #expect(winter.instant(in: Self.zone("America/New_York")) == Self.at("2026-12-24T14:00:00Z"))
        #expect(winter.instant(in: Self.zone("Europe/London")) == Self.at("2026-12-24T09:00:00Z"))

        let fraction = try Self.local("2026-07-01T09:00:00.25")
        #expect(
            fraction.instant(in: Self.zone("Europe/Paris")) == Self.at("2026-07-01T07:00:00Z").addingTimeInterval(0.25))
    }

    @Test("A local time the clock skips is due when the gap ends")
    func daylightSavingGap() throws {
        // Paris: 2026-03-29 02:00 CET → 03:00 CEST at 01:00 UTC.
        #expect(
            try Self.local("2026-03-29T02:30:00").instant(in: Self.zone("Europe/Paris"))
                == Self.at("2026-03-29T01:00:00Z"))
        #expect(
            try Self.local("2026-03-29T02:00:00").instant(in: Self.zone("Europe/Paris"))
                == Self.at("2026-03-29T01:00:00Z"))
        #expect(
            try Self.local("2026-03-29T03:00:00").instant(in: Self.zone("Europe/Paris"))
                == Self.at("2026-03-29T01:00:00Z"))
        #expect(
            try Self.local("2026-03-29T01:59:59").instant(in: Self.zone("Europe/Paris"))
                == Self.at("2026-03-29T00:59:59Z"))
        // New York: 2026-03-08 02:00 EST → 03:00 EDT at 07:00 UTC.
        #expect(
            try Self.local("2026-03-08T02:30:00").instant(in: Self.zone("America/New_York"))
                == Self.at("2026-03-08T07:00:00Z"))
        // London: 2026-03-29 01:00 GMT → 02:00 BST at 01:00 UTC.
        #expect(
            try Self.local("2026-03-29T01:30:00").instant(in: Self.zone("Europe/London"))
                == Self.at("2026-03-29T01:00:00Z"))
    }

    @Test("A local time the clock shows twice is due the first time")
    func daylightSavingFold() throws {
        // Paris reads 02:00–03:00 twice on 2026-10-25: CEST (00:00–01:00 UTC), then CET (01:00–02:00 UTC).
        #expect(
            try Self.local("2026-10-25T02:30:00").instant(in: Self.zone("Europe/Paris"))
                == Self.at("2026-10-25T00:30:00Z"))
        #expect(
            try Self.local("2026-10-25T03:00:00").instant(in: Self.zone("Europe/Paris"))
                == Self.at("2026-10-25T02:00:00Z"))
        // New York reads 01:00–02:00 twice on 2026-11-01: EDT (05:00–06:00 UTC), then EST (06:00–07:00 UTC).
        #expect(
            try Self.local("2026-11-01T01:30:00").instant(in: Self.zone("America/New_York"))
                == Self.at("2026-11-01T05:30:00Z"))
    }

    @Test("Earliest at UTC+14, latest at UTC−12")
    func earliestAndLatest() throws {
        let time = try Self.local("2026-12-24T09:00:00")
        #expect(time.earliestInstant == Self.at("2026-12-23T19:00:00Z"))
        #expect(time.latestInstant == Self.at("2026-12-24T21:00:00Z"))
        #expect(time.instant(in: Self.zone("Pacific/Kiritimati")) == time.earliestInstant)
        #expect(time.instant(in: Self.zone("Etc/GMT+12")) == time.latestInstant)
    }

    @Test(
        "In every known zone: due within earliest and latest, at the first instant the clock reads the time",
        arguments: [
            "2026-07-01T09:00:00", "2026-12-24T09:00:00", "2026-03-29T02:30:00", "2026-10-25T02:30:00",
            "2026-03-08T02:30:00", "2026-11-01T01:30:00", "2026-01-01T00:00:00",
        ])
    func everyZone(_ text: String) throws {
        let time = try Self.local(text)
        guard case .local(let wall) = time else { return }
        #expect(TimeZone.knownTimeZoneIdentifiers.count > 300)
        for identifier in TimeZone.knownTimeZoneIdentifiers {
            let zone = Self.zone(identifier)
            let due = time.instant(in: zone)
            #expect(due >= time.earliestInstant && due <= time.latestInstant, "\(identifier)")
            #expect(LocalDateTime(due, in: zone).rfc3339 >= wall.rfc3339, "\(identifier)")
            #expect(LocalDateTime(due.addingTimeInterval(-1), in: zone).rfc3339 < wall.rfc3339, "\(identifier)")
        }
    }

    @Test("Anything else is refused with invalid_push_time naming the field")
    func invalid() {
        let bad = [
            "", "tomorrow", "2026-12-24", "2026-12-24T09:00", "2026-12-24T09:00Z", "2026-12-24 09:00:00Z",
            "2026-13-01T09:00:00Z", "2026-00-01T09:00:00Z", "2026-02-29T09:00:00Z", "2100-02-29T09:00:00",
            "2026-04-31T09:00:00", "2026-12-24T24:00:00Z", "2026-12-24T09:60:00Z", "2026-12-24T09:00:60Z",
            "2026-12-24T09:00:00+2:00", "2026-12-24T09:00:00+0200", "2026-12-24T09:00:00+24:00",
            "2026-12-24T09:00:00+02:60", "2026-12-24T09:00:00.Z", "2026-12-24T09:00:00.1234567891Z",
            "2026-12-24T09:00:00Z ", " 2026-12-24T09:00:00Z", "2026-12-24T09:00:00ZZ", "0000-01-01T00:00:00Z",
            "+2026-12-24T09:00:00Z", "2026-1-24T09:00:00Z", "２026-12-24T09:00:00Z",
        ]
        for text in bad {
            let error = #expect(throws: HeraldError.self, "\(text)") { try PushTime(parsing: text, field: "send_at") }
            #expect(error?.code == "invalid_push_time")
            #expect(error?.field == "send_at")
        }
    }

    @Test("RFC 3339 round trip keeps the kind; instants are written in UTC")
    func roundTrip() throws {
        let cases = [
            ("2026-12-24T09:00:00Z", "2026-12-24T09:00:00Z"),
            ("2026-12-24T09:00:00+02:00", "2026-12-24T07:00:00Z"),
            ("2026-12-24T09:00:00.500Z", "2026-12-24T09:00:00.5Z"),
            // A Date keeps about a tenth of a microsecond: the shortest fraction that reads back the same.
            ("2026-12-24T09:00:00.123Z", "2026-12-24T09:00:00.123Z"),
            ("2026-12-24T09:00:00.123456Z", "2026-12-24T09:00:00.123456Z"),
            ("2026-12-24T09:00:00.123456789Z", "2026-12-24T09:00:00.1234568Z"),
            ("2026-12-24T09:00:00.000000001Z", "2026-12-24T09:00:00Z"),
            ("2026-12-24T09:00:00", "2026-12-24T09:00:00"),
            ("2026-12-24T09:00:00.120", "2026-12-24T09:00:00.12"),
            ("2026-12-24T09:00:00.000000001", "2026-12-24T09:00:00.000000001"),
            ("1969-12-31T23:59:59.5Z", "1969-12-31T23:59:59.5Z"),
            ("9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z"),
            ("0001-01-01T00:00:00", "0001-01-01T00:00:00"),
        ]
        for (text, written) in cases {
            let time = try PushTime(parsing: text, field: "send_at")
            #expect(time.rfc3339 == written, "\(text)")
            #expect(try PushTime(parsing: time.rfc3339, field: "send_at") == time, "\(text)")
        }
        let odd = PushTime.instant(Date(timeIntervalSinceReferenceDate: 820_000_000.987_654_3))
        #expect(try PushTime(parsing: odd.rfc3339, field: "send_at") == odd)
    }

    @Test("Local date-times: only real calendar days and times of day")
    func localDateTimes() {
        #expect(LocalDateTime(year: 2028, month: 2, day: 29, hour: 0, minute: 0, second: 0) != nil)
        #expect(LocalDateTime(year: 2000, month: 2, day: 29, hour: 0, minute: 0, second: 0) != nil)
        #expect(LocalDateTime(year: 2026, month: 2, day: 29, hour: 0, minute: 0, second: 0) == nil)
        #expect(LocalDateTime(year: 2100, month: 2, day: 29, hour: 0, minute: 0, second: 0) == nil)
        #expect(LocalDateTime(year: 0, month: 1, day: 1, hour: 0, minute: 0, second: 0) == nil)
        #expect(LocalDateTime(year: 10_000, month: 1, day: 1, hour: 0, minute: 0, second: 0) == nil)
        #expect(
            LocalDateTime(year: 2026, month: 1, day: 1, hour: 0, minute: 0, second: 0, nanosecond: 1_000_000_000) == nil
        )
        let read = LocalDateTime(Self.at("2026-07-01T07:00:00Z"), in: Self.zone("Europe/Paris"))
        #expect(read == LocalDateTime(year: 2026, month: 7, day: 1, hour: 9, minute: 0, second: 0))
    }
}

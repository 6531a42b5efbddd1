import Foundation
import HeraldCore
import Testing

/// An instant written as RFC 3339 in UTC, read by Foundation (not by the code under test).
private func at(_ text: String) -> Date {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    if let date = formatter.date(from: text) { return date }
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.date(from: text)!
}

private func json(_ text: String) throws -> JSONValue { try JSONValue.parse(Array(text.utf8)) }

private func time(_ text: String) -> Preferences.TimeOfDay { Preferences.TimeOfDay(text)! }

@Suite("Preferences: parsing and JSON")
struct PreferencesParsingTests {
    struct Failure: Sendable, CustomTestStringConvertible {
        var body: String
        var code: String
        var field: String?
        var path = ""
        var testDescription: String { "\(code) \(field ?? "-"): \(body.prefix(80))" }
    }

    static let failures: [Failure] = [
        Failure(body: "[]", code: "invalid_body", field: nil),
        Failure(body: "3", code: "invalid_type", field: "preferences", path: "preferences"),
        Failure(body: #"{"colour": "red"}"#, code: "unknown_field", field: "colour"),
        Failure(body: #"{"enabled_sources": "news"}"#, code: "invalid_type", field: "enabled_sources"),
        Failure(body: #"{"enabled_sources": ["news", 3]}"#, code: "invalid_type", field: "enabled_sources[1]"),
        Failure(body: #"{"enabled_sources": [""]}"#, code: "invalid_length", field: "enabled_sources[0]"),
        Failure(
            body: #"{"enabled_categories": ["ok", "\#(String(repeating: "x", count: 101))"]}"#,
            code: "invalid_length", field: "enabled_categories[1]"),
        Failure(
            body: #"{"enabled_sources": [\#((0...100).map { "\"s\($0)\"" }.joined(separator: ","))]}"#,
            code: "too_many_items", field: "enabled_sources"),
        Failure(
            body: #"{"enabled_categories": [\#((0...100).map { "\"c\($0)\"" }.joined(separator: ","))]}"#,
            code: "too_many_items", field: "enabled_categories"),
        Failure(body: #"{"quiet_hours": "22:00"}"#, code: "invalid_type", field: "quiet_hours"),
        Failure(body: #"{"quiet_hours": {"end": "07:00"}}"#, code: "missing_field", field: "quiet_hours.start"),
        Failure(body: #"{"quiet_hours": {"start": "22:00"}}"#, code: "missing_field", field: "quiet_hours.end"),
        Failure(
            body: #"{"quiet_hours": {"start": 22, "end": "07:00"}}"#, code: "invalid_type", field: "quiet_hours.start"),
        Failure(
            body: #"{"quiet_hours": {"start": "7:00", "end": "08:00"}}"#, code: "invalid_time",
            field: "quiet_hours.start"),
        Failure(
            body: #"{"quiet_hours": {"start": "22:00", "end": "24:00"}}"#, code: "invalid_time",
            field: "quiet_hours.end"),
        Failure(
            body: #"{"quiet_hours": {"start": "22:60", "end": "07:00"}}"#, code: "invalid_time",
            field: "quiet_hours.start"),
        Failure(
            body: #"{"quiet_hours": {"start": "22:00:00", "end": "07:00"}}"#, code: "invalid_time",
            field: "quiet_hours.start"),
        Failure(
            body: #"{"quiet_hours": {"start": "22.00", "end": "07:00"}}"#, code: "invalid_time",
            field: "quiet_hours.start"),
        Failure(
            body: #"{"quiet_hours": {"start": "10pm", "end": "07:00"}}"#, code: "invalid_time",
            field: "quiet_hours.start"),
        Failure(
            body: #"{"quiet_hours": {"start": "22:00", "end": "22:00"}}"#, code: "invalid_quiet_hours",
            field: "quiet_hours"),
        Failure(
            body: #"{"quiet_hours": {"start": "22:00", "end": "07:00", "timezone": "Mars/Olympus"}}"#,
            code: "invalid_timezone", field: "quiet_hours.timezone"),
        Failure(
            body: #"{"quiet_hours": {"start": "22:00", "end": "07:00", "timezone": 1}}"#,
            code: "invalid_type", field: "quiet_hours.timezone"),
        Failure(
            body: #"{"quiet_hours": {"start": "22:00", "end": "07:00", "days": []}}"#,
            code: "unknown_field", field: "quiet_hours.days"),
        Failure(body: #"{"quiet_hours_mode": "later"}"#, code: "invalid_value", field: "quiet_hours_mode"),
        Failure(body: #"{"quiet_hours_mode": true}"#, code: "invalid_type", field: "quiet_hours_mode"),
        Failure(body: #"{"sound_enabled": "yes"}"#, code: "invalid_type", field: "sound_enabled"),
        Failure(body: #"{"muted_until": 1767225600}"#, code: "invalid_type", field: "muted_until"),
        Failure(body: #"{"muted_until": "tomorrow"}"#, code: "invalid_timestamp", field: "muted_until"),
        Failure(body: #"{"muted_until": "2026-12-24T09:00:00"}"#, code: "invalid_timestamp", field: "muted_until"),
        Failure(body: #"{"muted_until": "2026-02-30T09:00:00Z"}"#, code: "invalid_timestamp", field: "muted_until"),
        Failure(
            body: #"{"quiet_hours": {"start": "25:00", "end": "07:00"}}"#, code: "invalid_time",
            field: "preferences.quiet_hours.start", path: "preferences"),
        Failure(
            body: #"{"enabled_sources": [""]}"#, code: "invalid_length", field: "preferences.enabled_sources[0]",
            path: "preferences"),
        Failure(
            body: #"{"muted_until": "soon"}"#, code: "invalid_timestamp", field: "preferences.muted_until",
            path: "preferences"),
    ]

    @Test("Every invalid member is refused with a stable code naming the field", arguments: failures)
    func refused(_ failure: Failure) throws {
        let value = try json(failure.body)
        let error = #expect(throws: HeraldError.self) { try Preferences(parsing: value, field: failure.path) }
        #expect(error?.code == failure.code)
        #expect(error?.field == failure.field)
        #expect(error?.kind == .badRequest)
    }

    @Test("An empty object, or nulls, give the defaults: everything on, with sound, no quiet hours")
    func defaults() throws {
        #expect(try Preferences(parsing: json("{}")) == Preferences())
        let nulls = try json(
            #"{"enabled_sources": null, "enabled_categories": null, "quiet_hours": null, "quiet_hours_mode": null, "#
                + #""sound_enabled": null, "muted_until": null}"#)
        #expect(try Preferences(parsing: nulls) == Preferences())
        let defaults = Preferences()
        #expect(defaults.enabledSources == nil && defaults.enabledCategories == nil)
        #expect(defaults.quietHours == nil && defaults.mutedUntil == nil)
        #expect(defaults.quietHoursMode == .skip && defaults.soundEnabled)
    }

    @Test("Every member is read")
    func full() throws {
        let body = try json(
            """
            {"enabled_sources": ["news", "chat", "news"], "enabled_categories": [],
             "quiet_hours": {"start": "22:00", "end": "07:30", "timezone": "Europe/Paris"},
             "quiet_hours_mode": "defer", "sound_enabled": false, "muted_until": "2026-12-24T09:00:00+02:00"}
            """)
        let preferences = try Preferences(parsing: body)
        #expect(preferences.enabledSources == ["news", "chat"])
        #expect(preferences.enabledCategories == [])
        #expect(
            preferences.quietHours
                == Preferences.QuietHours(start: time("22:00"), end: time("07:30"), timezone: "Europe/Paris"))
        #expect(preferences.quietHoursMode == .defer)
        #expect(preferences.soundEnabled == false)
        #expect(preferences.mutedUntil == at("2026-12-24T07:00:00Z"))
    }

    @Test("Limits: 100 names of up to 100 characters are accepted")
    func limits() throws {
        let names = (0..<100).map { "\($0)" + String(repeating: "n", count: 97) }
        let body = JSONValue.object(["enabled_sources": .array(names.map(JSONValue.string))])
        #expect(try Preferences(parsing: body).enabledSources == names)
        let unicode = String(repeating: "é", count: 100)
        let categories = JSONValue.object(["enabled_categories": .array([.string(unicode)])])
        #expect(try Preferences(parsing: categories).enabledCategories == [unicode])
    }

    @Test("Times of day are HH:mm on a 24-hour clock")
    func timesOfDay() {
        #expect(Preferences.TimeOfDay("00:00") == Preferences.TimeOfDay(hour: 0, minute: 0))
        #expect(Preferences.TimeOfDay("23:59")?.secondOfDay == 86_340)
        #expect(Preferences.TimeOfDay("07:05")?.text == "07:05")
        #expect(Preferences.TimeOfDay(hour: 24, minute: 0) == nil)
        for bad in ["", "7:00", "07:0", "24:00", "12:60", "ab:cd", "07:00 ", "-1:00", "0７:00"] {
            #expect(Preferences.TimeOfDay(bad) == nil, "\(bad)")
        }
    }

    @Test(
        "JSON round trip is lossless",
        arguments: [
            Preferences(),
            Preferences(
                enabledSources: ["news", "chat"], enabledCategories: [],
                quietHours: .init(start: time("22:00"), end: time("07:00"), timezone: "Europe/Paris"),
                quietHoursMode: .defer, soundEnabled: false, mutedUntil: at("2026-12-24T09:00:00Z")),
            Preferences(
                enabledCategories: ["promo"], quietHours: .init(start: time("13:15"), end: time("14:45")),
                mutedUntil: at("2026-03-29T01:30:00.25Z")),
            Preferences(mutedUntil: Date(timeIntervalSinceReferenceDate: 820_000_000.123_456_7)),
            Preferences(mutedUntil: Date(timeIntervalSince1970: -86_400.5)),
        ])
    func roundTrip(_ preferences: Preferences) throws {
        #expect(try Preferences(parsing: preferences.json) == preferences)
        let bytes = preferences.json.serialized()
        #expect(try Preferences(parsing: JSONValue.parse(bytes)) == preferences)
        #expect(try Preferences(parsing: preferences.json).json == preferences.json)
    }

    @Test("JSON has every member; muted_until in UTC, a fraction only when there is one")
    func serialized() throws {
        #expect(
            String(decoding: Preferences().json.serialized(), as: UTF8.self)
                == #"{"enabled_categories":null,"enabled_sources":null,"muted_until":null,"quiet_hours":null,"#
                + #""quiet_hours_mode":"skip","sound_enabled":true}"#)
        let preferences = try Preferences(
            parsing: json(
                #"{"quiet_hours": {"start": "22:00", "end": "07:00"}, "muted_until": "2026-12-24T09:00:00+02:00"}"#))
        #expect(preferences.json.objectValue?["muted_until"] == .string("2026-12-24T07:00:00Z"))
        #expect(
            preferences.json.objectValue?["quiet_hours"]
                == .object([
                    "start": .string("22:00"), "end": .string("07:00"), "timezone": .null, "enabled": .bool(true),
                ]))
        // Switched off, the times are kept and hold nothing back.
        let off = try Preferences(
            parsing: json(#"{"quiet_hours": {"start": "00:00", "end": "23:59", "enabled": false}}"#))
        #expect(off.quietHours?.enabled == false)
        #expect(off.quietHours?.start.text == "00:00")
        #expect(try Preferences(parsing: off.json) == off)
        #expect(
            off.decide(
                source: nil, category: nil, interruptionLevel: nil, installationTimeZone: nil,
                now: Date(timeIntervalSince1970: 1_780_000_000)) == .deliver(soundEnabled: true))
        let bad = #expect(throws: HeraldError.self) {
            try Preferences(parsing: json(#"{"quiet_hours": {"start": "22:00", "end": "07:00", "enabled": "no"}}"#))
        }
        #expect(bad?.field == "quiet_hours.enabled")
        let fractional = Preferences(mutedUntil: at("2026-12-24T07:00:00Z").addingTimeInterval(0.25))
        #expect(fractional.json.objectValue?["muted_until"] == .string("2026-12-24T07:00:00.25Z"))
    }
}

@Suite("Preferences: what to do with a notification")
struct PreferenceDecisionTests {
    let night = Preferences.QuietHours(start: time("22:00"), end: time("07:00"), timezone: "Europe/Paris")

    func decide(
        _ preferences: Preferences, source: String? = nil, category: String? = nil, level: String? = nil,
        zone: String? = nil, at now: String
    ) -> PreferenceDecision {
        preferences.decide(
            source: source, category: category, interruptionLevel: level, installationTimeZone: zone, now: at(now))
    }

    @Test("The defaults deliver everything with sound; sound_enabled false delivers silently")
    func defaults() {
        #expect(
            decide(Preferences(), source: "news", category: "promo", at: "2026-01-15T12:00:00Z")
                == .deliver(soundEnabled: true))
        #expect(decide(Preferences(soundEnabled: false), at: "2026-01-15T12:00:00Z") == .deliver(soundEnabled: false))
    }

    @Test("Sources: outside the list skipped, inside delivered, none given not filtered, empty list skips all")
    func sources() {
        let preferences = Preferences(enabledSources: ["news", "chat"])
        let now = "2026-01-15T12:00:00Z"
        #expect(decide(preferences, source: "promo", at: now) == .skip(reason: "source_disabled"))
        #expect(decide(preferences, source: "chat", at: now) == .deliver(soundEnabled: true))
        #expect(decide(preferences, source: nil, at: now) == .deliver(soundEnabled: true))
        #expect(decide(preferences, source: "News", at: now) == .skip(reason: "source_disabled"))
        #expect(decide(Preferences(enabledSources: []), source: "news", at: now) == .skip(reason: "source_disabled"))
        #expect(decide(Preferences(enabledSources: []), at: now) == .deliver(soundEnabled: true))
    }

    @Test("Categories: the same rules as sources")
    func categories() {
        let preferences = Preferences(enabledCategories: ["alerts"])
        let now = "2026-01-15T12:00:00Z"
        #expect(decide(preferences, category: "promo", at: now) == .skip(reason: "category_disabled"))
        #expect(decide(preferences, category: "alerts", at: now) == .deliver(soundEnabled: true))
        #expect(decide(preferences, category: nil, at: now) == .deliver(soundEnabled: true))
        let both = Preferences(enabledSources: ["news"], enabledCategories: ["alerts"])
        #expect(decide(both, source: "news", category: "promo", at: now) == .skip(reason: "category_disabled"))
        #expect(decide(both, source: "chat", category: "promo", at: now) == .skip(reason: "source_disabled"))
    }

    @Test("Muted until a future instant skips; at or after it, delivers")
    func muted() {
        let preferences = Preferences(enabledSources: ["news"], mutedUntil: at("2026-01-15T12:00:00Z"))
        #expect(decide(preferences, source: "news", at: "2026-01-15T11:59:59Z") == .skip(reason: "muted"))
        #expect(decide(preferences, source: "promo", at: "2026-01-15T11:59:59Z") == .skip(reason: "muted"))
        #expect(decide(preferences, source: "news", at: "2026-01-15T12:00:00Z") == .deliver(soundEnabled: true))
        #expect(decide(preferences, source: "news", at: "2026-01-16T00:00:00Z") == .deliver(soundEnabled: true))
    }

    @Test("Critical alerts go through mute and quiet hours, not through the source and category lists")
    func critical() {
        let preferences = Preferences(
            enabledSources: ["alarm"], enabledCategories: ["safety"], quietHours: night, quietHoursMode: .defer,
            soundEnabled: false, mutedUntil: at("2027-01-01T00:00:00Z"))
        let inQuietHours = "2026-01-15T23:00:00Z"
        #expect(
            decide(preferences, source: "alarm", category: "safety", level: "critical", at: inQuietHours)
                == .deliver(soundEnabled: false))
        #expect(
            decide(preferences, source: "news", category: "safety", level: "critical", at: inQuietHours)
                == .skip(reason: "source_disabled"))
        #expect(
            decide(preferences, source: "alarm", category: "promo", level: "critical", at: inQuietHours)
                == .skip(reason: "category_disabled"))
        #expect(
            decide(preferences, source: "alarm", category: "safety", level: "time-sensitive", at: inQuietHours)
                == .skip(reason: "muted"))
        var unmuted = preferences
        unmuted.mutedUntil = nil
        #expect(
            decide(unmuted, source: "alarm", category: "safety", level: "time-sensitive", at: inQuietHours)
                == .deferUntil(at("2026-01-16T06:00:00Z")))
        #expect(
            decide(unmuted, source: "alarm", category: "safety", level: "critical", at: inQuietHours)
                == .deliver(soundEnabled: false))
    }

    @Test("A window crossing midnight: 21:59 out, 22:00 and 23:30 in, 06:59 in, 07:00 out")
    func crossingMidnight() {
        let skip = Preferences(quietHours: night)
        // Europe/Paris is UTC+1 in January.
        #expect(decide(skip, at: "2026-01-15T20:59:00Z") == .deliver(soundEnabled: true))
        #expect(decide(skip, at: "2026-01-15T21:00:00Z") == .skip(reason: "quiet_hours"))
        #expect(decide(skip, at: "2026-01-15T22:30:00Z") == .skip(reason: "quiet_hours"))
        #expect(decide(skip, at: "2026-01-16T05:59:00Z") == .skip(reason: "quiet_hours"))
        #expect(decide(skip, at: "2026-01-16T05:59:59Z") == .skip(reason: "quiet_hours"))
        #expect(decide(skip, at: "2026-01-16T06:00:00Z") == .deliver(soundEnabled: true))
        #expect(decide(skip, at: "2026-01-16T12:00:00Z") == .deliver(soundEnabled: true))
    }

    @Test("Defer returns the next time the local clock reaches the end")
    func deferred() {
        let preferences = Preferences(quietHours: night, quietHoursMode: .defer)
        // 23:30 in Paris: the end is 07:00 the next morning.
        #expect(decide(preferences, at: "2026-01-15T22:30:00Z") == .deferUntil(at("2026-01-16T06:00:00Z")))
        // 00:30 and 06:59 in Paris: the end is 07:00 the same morning.
        #expect(decide(preferences, at: "2026-01-15T23:30:00Z") == .deferUntil(at("2026-01-16T06:00:00Z")))
        #expect(decide(preferences, at: "2026-01-16T05:59:00Z") == .deferUntil(at("2026-01-16T06:00:00Z")))
        #expect(decide(preferences, at: "2026-01-16T06:00:00Z") == .deliver(soundEnabled: true))
        // A window inside one day.
        let lunch = Preferences(
            quietHours: .init(start: time("12:00"), end: time("13:30")), quietHoursMode: .defer)
        #expect(decide(lunch, at: "2026-01-15T11:59:00Z") == .deliver(soundEnabled: true))
        #expect(decide(lunch, at: "2026-01-15T12:00:00Z") == .deferUntil(at("2026-01-15T13:30:00Z")))
        #expect(decide(lunch, at: "2026-01-15T13:29:59.5Z") == .deferUntil(at("2026-01-15T13:30:00Z")))
        #expect(decide(lunch, at: "2026-01-15T13:30:00Z") == .deliver(soundEnabled: true))
    }

    @Test("The clock is the quiet hours' zone, else the installation's, else UTC")
    func zones() {
        var windowOnly = night
        windowOnly.timezone = nil
        let own = Preferences(quietHours: night, quietHoursMode: .defer)
        let inherited = Preferences(quietHours: windowOnly, quietHoursMode: .defer)
        // 23:30 UTC is 00:30 in Paris and 18:30 in New York (EST, UTC−5).
        let now = "2026-01-15T23:30:00Z"
        #expect(decide(own, zone: "America/New_York", at: now) == .deferUntil(at("2026-01-16T06:00:00Z")))
        #expect(decide(inherited, zone: "America/New_York", at: now) == .deliver(soundEnabled: true))
        #expect(decide(inherited, zone: nil, at: now) == .deferUntil(at("2026-01-16T07:00:00Z")))
        #expect(decide(inherited, zone: "Mars/Olympus", at: now) == .deferUntil(at("2026-01-16T07:00:00Z")))
        // 04:00 UTC is 23:00 the evening before in New York: the end is 07:00 EST, 12:00 UTC.
        #expect(
            decide(inherited, zone: "America/New_York", at: "2026-01-16T04:00:00Z")
                == .deferUntil(at("2026-01-16T12:00:00Z")))
        // 21:30 UTC is 22:30 in Paris but 21:30 in UTC.
        #expect(decide(own, at: "2026-01-15T21:30:00Z") == .deferUntil(at("2026-01-16T06:00:00Z")))
        #expect(decide(inherited, at: "2026-01-15T21:30:00Z") == .deliver(soundEnabled: true))
    }

    @Test("The nights the clocks change in Paris: the end is 07:00 local on the new offset")
    func daylightSavingNights() {
        let preferences = Preferences(quietHours: night, quietHoursMode: .defer)
        // 2026-03-29 02:00 CET → 03:00 CEST (01:00 UTC). 23:30 CET the night before; 07:00 CEST is 05:00 UTC.
        #expect(decide(preferences, at: "2026-03-28T22:30:00Z") == .deferUntil(at("2026-03-29T05:00:00Z")))
        #expect(decide(preferences, at: "2026-03-29T04:59:00Z") == .deferUntil(at("2026-03-29T05:00:00Z")))
        #expect(decide(preferences, at: "2026-03-29T05:00:00Z") == .deliver(soundEnabled: true))
        // 2026-10-25 03:00 CEST → 02:00 CET (01:00 UTC). 23:00 CEST the night before; 07:00 CET is 06:00 UTC.
        #expect(decide(preferences, at: "2026-10-24T21:00:00Z") == .deferUntil(at("2026-10-25T06:00:00Z")))
        #expect(decide(preferences, at: "2026-10-25T05:30:00Z") == .deferUntil(at("2026-10-25T06:00:00Z")))
        #expect(decide(preferences, at: "2026-10-25T06:00:00Z") == .deliver(soundEnabled: true))
    }

    @Test("An end the clock skips is reached when the gap ends; in a repeated hour, the next time after now")
    func endInGapOrFold() {
        let gap = Preferences(
            quietHours: .init(start: time("23:00"), end: time("02:30"), timezone: "Europe/Paris"),
            quietHoursMode: .defer)
        // 00:00 CET on 2026-03-29; 02:30 does not exist that night, the clock reaches 03:00 CEST at 01:00 UTC.
        #expect(decide(gap, at: "2026-03-28T23:00:00Z") == .deferUntil(at("2026-03-29T01:00:00Z")))
        #expect(decide(gap, at: "2026-03-29T00:59:59Z") == .deferUntil(at("2026-03-29T01:00:00Z")))
        #expect(decide(gap, at: "2026-03-29T01:00:00Z") == .deliver(soundEnabled: true))

        // On 2026-10-25 Paris reads 02:00 to 03:00 twice: CEST (00:00 to 01:00 UTC), then CET (01:00 to 02:00 UTC).
        let fold = Preferences(
            quietHours: .init(start: time("22:00"), end: time("02:30"), timezone: "Europe/Paris"),
            quietHoursMode: .defer)
        #expect(decide(fold, at: "2026-10-24T23:00:00Z") == .deferUntil(at("2026-10-25T00:30:00Z")))
        #expect(decide(fold, at: "2026-10-25T00:45:00Z") == .deliver(soundEnabled: true))
        // 02:10 CET, the second time round: the next 02:30 is the CET one.
        #expect(decide(fold, at: "2026-10-25T01:10:00Z") == .deferUntil(at("2026-10-25T01:30:00Z")))
        #expect(decide(fold, at: "2026-10-25T01:30:00Z") == .deliver(soundEnabled: true))
    }

    @Test("A daylight-saving night in New York, quiet hours in the installation's zone")
    func newYork() {
        let preferences = Preferences(
            quietHours: .init(start: time("22:00"), end: time("07:00")), quietHoursMode: .defer)
        // 2026-03-08 02:00 EST → 03:00 EDT. 23:00 EST on the 7th is 04:00 UTC; 07:00 EDT is 11:00 UTC.
        #expect(
            decide(preferences, zone: "America/New_York", at: "2026-03-08T04:00:00Z")
                == .deferUntil(at("2026-03-08T11:00:00Z")))
        // 2026-11-01 02:00 EDT → 01:00 EST. 23:00 EDT on Oct 31 is 03:00 UTC; 07:00 EST is 12:00 UTC.
        #expect(
            decide(preferences, zone: "America/New_York", at: "2026-11-01T03:00:00Z")
                == .deferUntil(at("2026-11-01T12:00:00Z")))
        #expect(
            decide(preferences, zone: "America/New_York", at: "2026-11-01T11:59:59Z") != .deliver(soundEnabled: true))
        #expect(
            decide(preferences, zone: "America/New_York", at: "2026-11-01T12:00:00Z") == .deliver(soundEnabled: true))
    }
}

import Foundation
import HeraldAPI
import HeraldCore

/// The `rateLimits` object of the relay's answers: a push token's counts for the current UTC day,
/// the daily maximum, what is left, and when the day ends (Home Assistant logs all of it).
///
/// As the document's reference relay counts them: `successful` is what the provider took and
/// `errors` what was refused — by the relay after the token was known (over the limit, too large,
/// misconfigured: counted as it answers) or by the provider (counted when the engine records its
/// answer, usually after the relay answered `201`, so an answer's `successful` and `errors` do not
/// yet hold its own push). `maximum` and `remaining` count what the relay accepted, at once, so the
/// `429` never waits for the provider; `total` is every request counted (accepted and refused).
package struct HomeAssistantRateLimits: Sendable, Equatable {
    package var usage: RelayUsage
    package var maximum: Int
    /// The next UTC midnight.
    package var resetsAt: Date

    /// Notifications still accepted today.
    package var remaining: Int { max(0, maximum - usage.accepted) }

    /// The object, every key always present; `resetsAt` is ISO 8601 in UTC with milliseconds
    /// (`2026-11-26T00:00:00.000Z`), as the `mobile_app` document's example shows.
    package var json: JSONValue {
        .object([
            "successful": .number(JSONNumber(usage.delivered)),
            "errors": .number(JSONNumber(usage.refused + usage.failed)),
            "total": .number(JSONNumber(usage.total)),
            "maximum": .number(JSONNumber(maximum)),
            "remaining": .number(JSONNumber(remaining)),
            "resetsAt": .string(UTCDay.timestamp(resetsAt)),
        ])
    }
}

/// A UTC calendar day: the period of the relay's counters.
package struct UTCDay: Sendable, Equatable {
    /// `YYYY-MM-DD`, the counters' key.
    package var key: String
    /// The day's end: the next UTC midnight.
    package var end: Date

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// The UTC day holding `date`.
    package init(_ date: Date) {
        let start = Self.calendar.startOfDay(for: date)
        let parts = Self.calendar.dateComponents([.year, .month, .day], from: start)
        key = String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
        end = Self.calendar.date(byAdding: .day, value: 1, to: start) ?? start.addingTimeInterval(86_400)
    }

    /// `date` as ISO 8601 in UTC with milliseconds and `Z`.
    package static func timestamp(_ date: Date) -> String {
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: date)
        let milliseconds = (parts.nanosecond ?? 0) / 1_000_000
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0,
            parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0, milliseconds)
    }
}

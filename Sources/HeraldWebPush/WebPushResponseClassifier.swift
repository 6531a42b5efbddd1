import Foundation
import HeraldCore

/// Maps a push service's answer (RFC 8030 §5, RFC 8292 §4) to one ``DeliveryOutcome``. Push
/// services give no common error vocabulary, so the status decides and the body's text is kept
/// as the reason.
///
/// | status | outcome |
/// |---|---|
/// | 2xx (201 Created, 202 Accepted) | delivered; the `Location` header is the provider id |
/// | 404 Not Found, 410 Gone | invalid token: the subscription has expired or was unsubscribed |
/// | 413 Payload Too Large | rejected |
/// | 429, 5xx | retry, not before `Retry-After` |
/// | 401, 403 | configuration failure: VAPID missing or refused, or the subscription was made with another key |
/// | 400 and anything else | rejected |
public enum WebPushResponseClassifier {
    /// Error bodies are kept up to this many characters.
    public static let maxReasonLength = 200

    /// The outcome of a response.
    /// - Parameters:
    ///   - location: The `Location` header, kept as the provider id on success.
    ///   - reason: The error body as text (see ``reason(fromBody:)``).
    ///   - retryAfter: The `Retry-After` delay (see ``retryAfter(_:now:)``).
    public static func outcome(
        status: Int, location: String? = nil, reason: String? = nil, retryAfter: Duration? = nil
    ) -> DeliveryOutcome {
        if (200..<300).contains(status) { return .delivered(providerID: location) }
        let wire = reason.map { "HTTP \(status): \($0)" } ?? "HTTP \(status)"
        switch status {
        case 404, 410:
            return .invalidToken(reason: wire, since: nil)
        case 429, 500..<600:
            return .retry(reason: wire, after: retryAfter)
        case 401, 403:
            return .configurationFailure(reason: wire)
        default:
            // 400 (a header or the encoding refused), 413 (too large for this service), and any other.
            return .rejected(reason: wire)
        }
    }

    /// The `Retry-After` header (RFC 9110 §10.2.3) as a delay from `now`: delay-seconds, or an
    /// HTTP-date (IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`) with a date in the past giving
    /// zero. Nil when absent or unreadable.
    public static func retryAfter(_ value: String?, now: Date) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if value.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            guard let seconds = Int(value) else { return nil }
            return .seconds(seconds)
        }
        guard let date = httpDate(value) else { return nil }
        return .seconds(max(0, Int(date.timeIntervalSince(now).rounded(.up))))
    }

    /// An error body as a reason: UTF-8 text with its whitespace runs collapsed to one space,
    /// shortened to ``maxReasonLength`` characters; nil when empty.
    public static func reason(fromBody body: some Collection<UInt8>) -> String? {
        let text = String(decoding: body, as: UTF8.self)
            .split(whereSeparator: { $0.isWhitespace || $0.isNewline })
            .joined(separator: " ")
        guard !text.isEmpty else { return nil }
        guard text.count > maxReasonLength else { return text }
        return String(text.prefix(maxReasonLength - 1)) + "…"
    }

    /// Parses IMF-fixdate (RFC 9110 §5.6.7), the only form senders may generate.
    static func httpDate(_ text: String) -> Date? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT",
            let day = Int(parts[1]), let year = Int(parts[3]),
            let month = months.firstIndex(of: String(parts[2])).map({ $0 + 1 })
        else { return nil }
        let clock = parts[4].split(separator: ":")
        guard clock.count == 3, let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
            (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT")!
        return calendar.date(
            from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second))
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
}

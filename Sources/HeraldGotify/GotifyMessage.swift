import Foundation
import HeraldCore

/// One Gotify message as `POST /message` takes it (JSON, a form, multipart form data as `curl -F`
/// sends, or query parameters): `message` (required), `title`, `priority` (Gotify's 0-10) and, in
/// JSON, `extras` (`client::display`, `client::notification` with `click.url` and `bigImageUrl`).
package struct GotifyMessage: Sendable, Equatable {
    package var message: String
    package var title: String?
    /// 0 to 10; Gotify's default for an application is 0, Apprise sends 5 when unset.
    package var priority: Int
    package var extras: [String: JSONValue]

    /// The largest message taken (the providers carry about 4 KB).
    package static let maxMessageBytes = 4_096

    /// Reads a message from its fields (all forms give text, JSON may give a number and extras).
    /// - Throws: `GotifyError` `400` naming the field: no message, a priority that is no integer.
    package init(fields: [String: JSONValue]) throws(GotifyError) {
        func text(_ name: String) throws(GotifyError) -> String? {
            switch fields[name] {
            case nil, .null?: return nil
            case .string(let value)?: return value
            default: throw .badRequest("Field '\(name)' must be a string")
            }
        }
        guard let message = try text("message"), !message.isEmpty else {
            throw .badRequest("Field 'message' is required")
        }
        guard message.utf8.count <= Self.maxMessageBytes else {
            throw .badRequest("Field 'message' is longer than \(Self.maxMessageBytes) bytes")
        }
        self.message = message
        let title = try text("title")
        self.title = title?.isEmpty == false ? title : nil
        switch fields["priority"] {
        case nil, .null?: priority = 0
        case .number(let number)?:
            guard let value = number.integerValue, (Int64(Int32.min)...Int64(Int32.max)).contains(value) else {
                throw .badRequest("Field 'priority' must be an integer")
            }
            priority = Int(value)
        case .string(let value)?:
            guard let number = Int(value.trimmingCharacters(in: .whitespaces)) else {
                throw .badRequest("Field 'priority' must be an integer")
            }
            priority = number
        default: throw .badRequest("Field 'priority' must be an integer")
        }
        switch fields["extras"] {
        case nil, .null?: extras = [:]
        case .object(let value)?: extras = value
        default: throw .badRequest("Field 'extras' must be an object")
        }
    }

    /// The notification: the message as the body, the title (Gotify shows the application's name
    /// without one: here the app's id), priority 0-3 a normal-priority push and 4-10 a high one (8
    /// and above time-sensitive on iOS, as Gotify's Android client vibrates), the extras in the
    /// data with their click URL as the deep link and `bigImageUrl` as the image.
    package func sendRequest(to target: NotificationTarget, appID: String, source: String) -> SendRequest {
        let notification = extras["client::notification"]?.objectValue
        var click: String?
        if case .string(let url)? = notification?["click"]?.objectValue?["url"] { click = url }
        var image: String?
        if case .string(let url)? = notification?["bigImageUrl"] { image = url }
        var data: [String: JSONValue] = ["priority": .number(JSONNumber(priority))]
        if !extras.isEmpty { data["extras"] = .object(extras) }
        let payload = NotificationPayload(
            title: title ?? appID, body: message, image: image, deepLink: click, data: data,
            interruptionLevel: priority >= 8 ? .timeSensitive : nil, priority: priority >= 4 ? .high : .normal)
        return SendRequest(target: target, payload: payload, source: source, respectPreferences: true)
    }
}

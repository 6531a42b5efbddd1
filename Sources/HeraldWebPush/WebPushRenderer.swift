import Foundation
import HeraldCore

/// Renders the unified payload for a browser: the JSON a service worker's `push` handler receives
/// (`event.data.json()`) and passes to `showNotification(title, options)`, and the RFC 8030
/// delivery headers.
///
/// The body: `title`, and the `NotificationOptions` members `body`, `icon`, `image`, `badge` (the
/// count, under `badge_count`: the Web API's `badge` is an image URL), `tag` (the collapse id),
/// `renotify`, `silent` (no sound), `data` (the custom data with `url`, the deep link, and
/// `herald_id`, the notification's id), `url`,
/// `timestamp` (milliseconds), and `webpush` overrides merged over them (`null` removes one).
struct WebPushRenderer: Sendable {
    /// A rendered browser notification.
    struct Rendered: Sendable, Equatable {
        /// The serialized JSON body (encrypted by the client before it is sent).
        var body: [UInt8]
        /// RFC 8030 §5.2: seconds the push service keeps the message for an offline browser.
        var ttl: Int
        /// RFC 8030 §5.3.
        var urgency: String
        /// RFC 8030 §5.4: a newer message with the same topic replaces an undelivered one.
        var topic: String?
    }

    /// How long a push service keeps a message when the notification says nothing: four weeks.
    static let defaultTTL = 2_419_200

    /// The browser notification for one subscription.
    func render(_ notification: PushNotification, badge: Int?, soundEnabled: Bool, now: Date) -> Rendered {
        let payload = notification.payload
        var data = payload.data
        if let link = payload.deepLink { data["url"] = .string(link) }
        // The service worker reports an open with this id (POST /v1/opens) from `notification.data`.
        data[PushNotification.idDataKey] = .string(notification.id)
        var body: [String: JSONValue] = [
            "timestamp": .number(JSONNumber(Int64((notification.createdAt.timeIntervalSince1970 * 1000).rounded())))
        ]
        body["title"] = payload.title.map(JSONValue.string)
        let text = [payload.subtitle, payload.body].compactMap { $0 }.joined(separator: "\n")
        body["body"] = text.isEmpty ? nil : .string(text)
        body["image"] = payload.image.map(JSONValue.string)
        body["url"] = payload.deepLink.map(JSONValue.string)
        if let collapse = payload.collapseID {
            body["tag"] = .string(collapse)
            body["renotify"] = .bool(true)
        }
        if let badge { body["badge_count"] = .number(JSONNumber(badge)) }
        if !soundEnabled || payload.sound == nil { body["silent"] = .bool(!soundEnabled) }
        if !data.isEmpty { body["data"] = .object(data) }
        if let category = payload.category { body["category"] = .string(category) }
        if let override = payload.overrides["webpush"]?.objectValue {
            body = body.merging(deep: override).filter { $0.value != .null }
        }

        var ttl = payload.ttl ?? Self.defaultTTL
        if let expiresAt = notification.expiresAt { ttl = min(ttl, max(0, Int(expiresAt.timeIntervalSince(now)))) }
        let silentOnly = payload.title == nil && payload.body == nil && payload.subtitle == nil
        let urgency =
            switch payload.priority {
            case .high: payload.interruptionLevel == .passive ? "normal" : "high"
            case .normal: silentOnly ? "low" : "normal"
            }
        return Rendered(
            body: JSONValue.object(body).serialized(), ttl: ttl, urgency: urgency, topic: payload.collapseID)
    }
}

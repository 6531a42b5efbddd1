import Foundation
import HeraldCore

/// Renders the unified payload as an FCM HTTP v1 `Message`: `notification` from the alert, `data`
/// as strings (FCM requires it), `android` and `apns` blocks from the payload's options, and the
/// `fcm` overrides (`android`, `apns`, `webpush`, `fcm_options`, `data`, `notification`) merged over them;
/// a `null` `notification` or `apns` override removes that block. `data.herald_id` is the
/// notification's id.
package struct FCMRenderer: Sendable {
    /// The data key that carries the notification id.
    static let notificationIDKey = PushNotification.idDataKey

    /// A renderer.
    package init() {}

    /// The message for one device.
    /// - Throws: `HeraldError` when an override has the wrong shape.
    package func render(
        _ notification: PushNotification, token: String, badge: Int?, soundEnabled: Bool, now: Date
    ) throws(HeraldError) -> FCMMessage {
        if let live = notification.liveActivity {
            return renderLiveActivity(live, of: notification, token: token, now: now)
        }
        let payload = notification.payload
        let overrides = payload.overrides["fcm"]?.objectValue ?? [:]
        var data: [String: String] = [:]
        for (key, value) in payload.data { data[key] = Self.string(value) }
        data["deep_link"] = payload.deepLink ?? data["deep_link"]
        // The app reports an open with this id (POST /v1/opens); a `data.herald_id: null` override drops it.
        data[Self.notificationIDKey] = notification.id
        for (key, value) in overrides["data"]?.objectValue ?? [:] {
            data[key] = value == .null ? nil : Self.string(value)
        }

        var alert: FCMMessage.Notification?
        if payload.title != nil || payload.body != nil || payload.image != nil {
            alert = FCMMessage.Notification(title: payload.title, body: payload.body, image: payload.image)
        }
        if let override = overrides["notification"]?.objectValue {
            // A string replaces the rendered field, a null removes it (SNS's GCM payload without a body
            // shows no default text).
            func field(_ key: String, _ rendered: String?) -> String? {
                switch override[key] {
                case .string(let text)?: text
                case .null?: nil
                default: rendered
                }
            }
            let merged = FCMMessage.Notification(
                title: field("title", alert?.title), body: field("body", alert?.body),
                image: field("image", alert?.image))
            alert = merged.title == nil && merged.body == nil && merged.image == nil ? nil : merged
        } else if overrides["notification"] == .null {
            // A null override removes the block: a data message, which the app displays itself.
            alert = nil
        }

        var androidNotification: [String: JSONValue] = [:]
        if soundEnabled, let sound = payload.sound { androidNotification["sound"] = .string(sound) }
        if let badge { androidNotification["notification_count"] = .number(JSONNumber(badge)) }
        if let category = payload.category { androidNotification["click_action"] = .string(category) }
        if let thread = payload.threadID { androidNotification["tag"] = .string(thread) }
        // An updatable notification's tag is its replacement key: its next revision replaces it on screen.
        if notification.updatable, let key = payload.collapseID { androidNotification["tag"] = .string(key) }
        var ttl = payload.ttl
        if let expiresAt = notification.expiresAt { ttl = max(0, Int(expiresAt.timeIntervalSince(now))) }
        var android = FCMMessage.Android(
            collapseKey: payload.collapseID, priority: payload.priority == .high ? .high : .normal, ttl: ttl,
            notification: androidNotification.isEmpty || alert == nil ? nil : androidNotification)
        if let override = overrides["android"]?.objectValue {
            if case .string(let key)? = override["collapse_key"] { android.collapseKey = key }
            if case .string(let raw)? = override["priority"] {
                android.priority = FCMMessage.Android.Priority(rawValue: raw.lowercased())
            }
            if case .string(let raw)? = override["ttl"], let seconds = Int(raw.dropLast()) { android.ttl = seconds }
            if case .string(let name)? = override["restricted_package_name"] { android.restrictedPackageName = name }
            if case .bool(let flag)? = override["direct_boot_ok"] { android.directBootOK = flag }
            if case .object(let fields)? = override["notification"] {
                android.notification = (android.notification ?? [:]).merging(deep: fields)
            }
            if case .object(let fields)? = override["data"] {
                android.data = fields.compactMapValues { $0 == .null ? nil : Self.string($0) }
            }
        }

        // Apple devices reached through FCM: the badge, sound and category travel in the apns block.
        var aps: [String: JSONValue] = [:]
        if let badge { aps["badge"] = .number(JSONNumber(badge)) }
        if soundEnabled, let sound = payload.sound { aps["sound"] = .string(sound) }
        aps["category"] = payload.category.map(JSONValue.string)
        aps["thread-id"] = payload.threadID.map(JSONValue.string)
        if payload.contentAvailable { aps["content-available"] = .number(1) }
        if payload.mutableContent || payload.image != nil { aps["mutable-content"] = .number(1) }
        var apns: [String: JSONValue] = [:]
        if !aps.isEmpty { apns["payload"] = .object(["aps": .object(aps)]) }
        apns = overrides["apns"] == .null ? [:] : apns.merging(deep: overrides["apns"]?.objectValue ?? [:])

        return FCMMessage(
            target: .token(token), notification: alert, data: data.isEmpty ? nil : data, android: android,
            apns: apns.isEmpty ? nil : apns, webpush: overrides["webpush"]?.objectValue,
            fcmOptions: overrides["fcm_options"]?.objectValue)
    }

    /// A Live Activity push to an Android device (docs/live-activities.md): a data message the app
    /// draws its live update from — the activity, event, revision and content state, and the tag of
    /// the notification to replace — collapsed per activity, so FCM keeps only the newest for a
    /// device that is offline.
    func renderLiveActivity(
        _ live: LiveActivityPush, of notification: PushNotification, token: String, now: Date
    ) -> FCMMessage {
        var data = live.dataMessage
        data[Self.notificationIDKey] = notification.id
        data["tag"] = LiveActivityPush.tag(live.activityID)
        if let title = notification.payload.title { data["title"] = title }
        if let body = notification.payload.body { data["body"] = body }
        let ttl = notification.expiresAt.map { max(0, Int($0.timeIntervalSince(now))) } ?? notification.payload.ttl
        let android = FCMMessage.Android(
            collapseKey: LiveActivityPush.tag(live.activityID), priority: live.highPriority ? .high : .normal, ttl: ttl,
            notification: nil)
        return FCMMessage(target: .token(token), notification: nil, data: data, android: android)
    }

    /// FCM data values are strings: strings stay, everything else is sent as its JSON text.
    static func string(_ value: JSONValue) -> String {
        if case .string(let text) = value { return text }
        return String(decoding: value.serialized(), as: UTF8.self)
    }
}

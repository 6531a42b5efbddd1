import Foundation
import HeraldCore

/// Renders the unified payload as an APNs request: `aps` from the payload's fields, custom data
/// beside it, `herald: {"id": <notification id>}`, and the `apns` overrides (`aps`, `headers`,
/// other top-level keys; for a sandbox recipient `apns_sandbox` when given) merged over that.
package struct APNsRenderer: Sendable {
    /// The top-level key that carries Herald's own fields (the notification id).
    static let heraldKey = "herald"

    /// The topic when the installation has no bundle id.
    package var defaultTopic: String?

    /// A renderer sending installations without a bundle id to `defaultTopic`.
    package init(defaultTopic: String?) { self.defaultTopic = defaultTopic }

    /// The notification for one device in `environment`.
    /// - Throws: `HeraldError` when there is no topic or an override header is invalid.
    package func render(
        _ notification: PushNotification, token: String, environment: PushEnvironment, bundleID: String?, badge: Int?,
        soundEnabled: Bool, now: Date
    ) throws(HeraldError) -> APNsNotification {
        if let live = notification.liveActivity {
            return try renderLiveActivity(live, of: notification, token: token, bundleID: bundleID, now: now)
        }
        let payload = notification.payload
        let overrides = payload.apnsOverrides(for: environment)
        var aps: [String: JSONValue] = [:]
        var alert: [String: JSONValue] = [:]
        alert["title"] = payload.title.map(JSONValue.string)
        alert["subtitle"] = payload.subtitle.map(JSONValue.string)
        alert["body"] = payload.body.map(JSONValue.string)
        if !alert.isEmpty { aps["alert"] = .object(alert) }
        if let badge { aps["badge"] = .number(JSONNumber(badge)) }
        if soundEnabled, let sound = payload.sound {
            aps["sound"] =
                payload.interruptionLevel == .critical
                ? .object(["critical": .number(1), "name": .string(sound), "volume": .number(1)]) : .string(sound)
        }
        aps["category"] = payload.category.map(JSONValue.string)
        aps["thread-id"] = payload.threadID.map(JSONValue.string)
        if payload.contentAvailable { aps["content-available"] = .number(1) }
        // A notification service extension needs mutable-content to download an image.
        if payload.mutableContent || payload.image != nil { aps["mutable-content"] = .number(1) }
        aps["interruption-level"] = payload.interruptionLevel.map { .string($0.rawValue) }
        var body = payload.data
        body["image"] = payload.image.map(JSONValue.string) ?? body["image"]
        body["deep_link"] = payload.deepLink.map(JSONValue.string) ?? body["deep_link"]
        body["aps"] = .object(aps.merging(deep: overrides["aps"]?.objectValue ?? [:]))
        // The app reports an open with this id (POST /v1/opens); a `herald: null` override drops it.
        body[Self.heraldKey] = .object(["id": .string(notification.id)])
        for (key, value) in overrides where key != "aps" && key != "headers" {
            body[key] = value == .null ? nil : value
        }

        let headers = overrides["headers"]?.objectValue ?? [:]
        func header(_ name: String) throws(HeraldError) -> String? {
            switch headers[name] {
            case nil, .null?: return nil
            case .string(let value)?: return value
            case .number(let value)?: return value.description
            default: throw .invalidType("payload.overrides.apns.headers.\(name)", expected: "a string")
            }
        }
        let isBackground = alert.isEmpty && payload.contentAvailable && payload.sound == nil && badge == nil
        var pushType: APNsPushType = isBackground ? .background : .alert
        if let raw = try header("apns-push-type") {
            guard let type = APNsPushType(rawValue: raw) else {
                throw .invalidValue("payload.overrides.apns.headers.apns-push-type", "Unknown APNs push type '\(raw)'.")
            }
            pushType = type
        }
        var priority: APNsPriority = payload.priority == .high ? .immediate : .considerate
        if let raw = try header("apns-priority") {
            guard let value = Int(raw).flatMap(APNsPriority.init(rawValue:)) else {
                throw .invalidValue("payload.overrides.apns.headers.apns-priority", "apns-priority is 10, 5 or 1.")
            }
            priority = value
        }
        var expiration = notification.expiresAt ?? payload.ttl.map { now.addingTimeInterval(TimeInterval($0)) }
        if let raw = try header("apns-expiration"), let seconds = Double(raw) {
            expiration = Date(timeIntervalSince1970: seconds)
        }
        // An explicit apns-topic override is the whole topic; otherwise the type's suffix is added.
        var bundle = bundleID ?? defaultTopic
        if let topic = try header("apns-topic") {
            let suffix = pushType.topic(bundleID: "")
            bundle = !suffix.isEmpty && topic.hasSuffix(suffix) ? String(topic.dropLast(suffix.count)) : topic
        }
        guard let bundle else {
            throw .invalidValue(
                "apns.topic", code: "missing_topic",
                "APNs needs a topic: register installations with bundle_id or configure the app's apns.topic.")
        }
        return APNsNotification(
            deviceToken: token, pushType: pushType, bundleID: bundle, priority: priority, expiration: expiration,
            collapseID: try header("apns-collapse-id") ?? payload.collapseID,
            payload: JSONValue.object(body).serialized())
    }

    /// A Live Activity push ("Starting and updating Live Activities with ActivityKit push
    /// notifications"): `apns-push-type: liveactivity` on `<bundle>.push-type.liveactivity`, priority
    /// 10 within the activity's budget and 5 past it, and `aps` with the `timestamp`, the `event`, the
    /// `content-state`, for a start the `attributes-type` and `attributes`, and the options given.
    func renderLiveActivity(
        _ live: LiveActivityPush, of notification: PushNotification, token: String, bundleID: String?, now: Date
    ) throws(HeraldError) -> APNsNotification {
        guard let bundle = bundleID ?? defaultTopic else {
            throw .invalidValue(
                "apns.topic", code: "missing_topic",
                "APNs needs a topic: register installations with bundle_id or configure the app's apns.topic.")
        }
        return APNsNotification(
            deviceToken: token, pushType: .liveactivity, bundleID: bundle,
            priority: live.highPriority ? .immediate : .considerate, expiration: notification.expiresAt,
            collapseID: nil,
            payload: JSONValue.object(["aps": .object(Self.liveActivityAPS(live, notification))]).serialized())
    }

    /// The `aps` dictionary of a Live Activity push (also a broadcast's).
    package static func liveActivityAPS(
        _ live: LiveActivityPush, _ notification: PushNotification
    ) -> [String: JSONValue] {
        let payload = notification.payload
        var aps: [String: JSONValue] = [
            "timestamp": .number(JSONNumber(live.timestamp)), "event": .string(live.event.rawValue),
        ]
        aps["content-state"] = live.contentState.map(JSONValue.object)
        var alert: [String: JSONValue] = [:]
        alert["title"] = payload.title.map(JSONValue.string)
        alert["body"] = payload.body.map(JSONValue.string)
        alert["sound"] = payload.sound.map(JSONValue.string)
        if !alert.isEmpty { aps["alert"] = .object(alert) }
        aps["stale-date"] = live.staleDate.map { .number(JSONNumber($0)) }
        aps["dismissal-date"] = live.dismissalDate.map { .number(JSONNumber($0)) }
        aps["relevance-score"] = live.relevanceScore.map { .number(JSONNumber($0)) }
        if live.event == .start {
            aps["attributes-type"] = .string(live.attributesType)
            aps["attributes"] = .object(live.attributes ?? [:])
            if live.inputPushToken { aps["input-push-token"] = .number(1) }
            aps["input-push-channel"] = live.inputPushChannel.map(JSONValue.string)
        }
        return aps
    }
}

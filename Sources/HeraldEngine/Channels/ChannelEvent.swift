import HeraldCore

/// The event a notification becomes on a direct channel, in Home Assistant's local push shape
/// (`{"message", "title"?, "data"?}`; the channel adds `hass_confirm_id` when it confirms): the
/// Companion apps and `herald listen` read it as they read Home Assistant's.
enum ChannelEvent {
    /// The event for one device.
    static func render(_ notification: PushNotification, badge: Int?) -> [String: JSONValue] {
        let payload = notification.payload
        if notification.revision?.removal == true, let key = payload.collapseID {
            // Home Assistant's command, which its apps (and a service worker) act on by tag.
            return [
                "message": .string("clear_notification"),
                "data": .object(["tag": .string(key), "notification_id": .string(notification.id)]),
            ]
        }
        var data = payload.data
        data["url"] = payload.deepLink.map(JSONValue.string)
        data["image"] = payload.image.map(JSONValue.string)
        data["tag"] = payload.collapseID.map(JSONValue.string)
        data["subtitle"] = payload.subtitle.map(JSONValue.string)
        data["group"] = payload.threadID.map(JSONValue.string)
        data["sound"] = payload.sound.map(JSONValue.string)
        data["category"] = payload.category.map(JSONValue.string)
        data["badge"] = badge.map { .number(JSONNumber($0)) }
        data["notification_id"] = .string(notification.id)
        if let live = notification.liveActivity {
            // A live update the app draws, replacing its notification of the activity (docs/live-activities.md).
            data["live_activity"] = live.structured
            data["tag"] = .string(LiveActivityPush.tag(live.activityID))
        }
        var event: [String: JSONValue] = ["message": .string(payload.body ?? payload.title ?? "")]
        if payload.body != nil, let title = payload.title { event["title"] = .string(title) }
        event["data"] = .object(data)
        return event
    }
}

import HeraldCore

/// A `GCM` value in the legacy FCM HTTP shape (`{"notification": {…}, "data": {…}, "time_to_live": …}`)
/// as FCM v1 `fcm` overrides (docs/dialects/sns-api.md, "Legacy GCM payloads"): `title`, `body` and
/// `image` make the cross-platform `notification`; the other notification keys go to
/// `android.notification` under their FCM v1 names — most keep theirs, `android_channel_id` becomes
/// `channel_id`, Android's integer `visibility` (-1, 0, 1) becomes FCM v1's enum (`SECRET`, `PRIVATE`,
/// `PUBLIC`), and `body_loc_args` / `title_loc_args` written as a JSON array in a string become that
/// array. Keys FCM v1's `AndroidNotification` does not have (the iOS-only `badge` and `subtitle`,
/// anything unknown) are left out, as the legacy API left out what Android does not use: FCM v1
/// refuses a message with a field it does not know.
package struct SNSLegacyGCM {
    /// The `fcm` overrides: `notification`, `data` and `android`.
    package var overrides: [String: JSONValue] = [:]

    /// `AndroidNotification`'s fields by their proto names (FCM v1's projects.messages reference).
    package static let androidNotificationFields: Set<String> = [
        "title", "body", "icon", "color", "sound", "tag", "click_action", "body_loc_key", "body_loc_args",
        "title_loc_key", "title_loc_args", "channel_id", "ticker", "sticky", "event_time", "local_only",
        "notification_priority", "default_sound", "default_vibrate_timings", "default_light_settings",
        "vibrate_timings", "visibility", "notification_count", "light_settings", "image",
        "bypass_proxy_notification", "proxy",
    ]

    /// FCM v1's `AndroidNotification.Visibility` for Android's `Notification.visibility` values.
    static let visibilities: [Int64: String] = [-1: "SECRET", 0: "PRIVATE", 1: "PUBLIC"]

    /// Translates a legacy payload.
    /// - Throws: `SNSAPIFailure` `InvalidParameter` for `data` that is not an object or a `visibility`
    ///   that is neither Android's integer nor FCM v1's name.
    package init(_ payload: [String: JSONValue]) throws(SNSAPIFailure) {
        var android: [String: JSONValue] = [:]
        if case .object(let notification)? = payload["notification"] {
            var alert: [String: JSONValue] = [:]
            var extra: [String: JSONValue] = [:]
            for (key, value) in notification {
                switch key {
                case "title", "body", "image": alert[key] = value
                case "android_channel_id": extra["channel_id"] = value
                case "visibility": extra[key] = try Self.visibility(value)
                case "body_loc_args", "title_loc_args": extra[key] = Self.arguments(value)
                case _ where Self.isAndroidNotificationField(key): extra[key] = value
                default: continue
                }
            }
            overrides["notification"] = .object(alert)
            if !extra.isEmpty { android["notification"] = .object(extra) }
        }
        if let data = payload["data"] {
            guard case .object = data else {
                throw .invalidParameter(
                    "Invalid parameter: Message Reason: Invalid notification for protocol GCM: data must be an object")
            }
            overrides["data"] = data
        }
        if case .number(let seconds)? = payload["time_to_live"] { android["ttl"] = .string("\(seconds)s") }
        for key in ["collapse_key", "priority", "restricted_package_name"] {
            if case .string(let value)? = payload[key] { android[key] = .string(value) }
        }
        if !android.isEmpty { overrides["android"] = .object(android) }
    }

    /// Whether FCM v1's `AndroidNotification` has the field, by its proto name or its JSON name
    /// (`click_action`, `clickAction`).
    static func isAndroidNotificationField(_ key: String) -> Bool {
        androidNotificationFields.contains(key) || androidNotificationFields.contains(protoName(key))
    }

    /// A JSON name's proto name: `clickAction` → `click_action`.
    static func protoName(_ key: String) -> String {
        var name = ""
        for character in key {
            if character.isUppercase {
                name += "_" + character.lowercased()
            } else {
                name.append(character)
            }
        }
        return name
    }

    /// Android's `Notification.visibility` (an integer, or its text) as FCM v1's enum; FCM v1's own names
    /// pass through.
    static func visibility(_ value: JSONValue) throws(SNSAPIFailure) -> JSONValue {
        switch value {
        case .number(let number):
            if let name = number.integerValue.flatMap({ visibilities[$0] }) { return .string(name) }
        case .string(let text):
            if let name = Int64(text).flatMap({ visibilities[$0] }) { return .string(name) }
            let name = text.uppercased()
            if ["VISIBILITY_UNSPECIFIED", "PRIVATE", "PUBLIC", "SECRET"].contains(name) { return .string(name) }
        default: break
        }
        throw .invalidParameter(
            "Invalid parameter: Message Reason: Invalid notification for protocol GCM: visibility must be -1 (secret), "
                + "0 (private) or 1 (public)")
    }

    /// Localization arguments: the legacy API took a JSON array written as a string; FCM v1 takes the array.
    static func arguments(_ value: JSONValue) -> JSONValue {
        guard case .string(let text) = value, case .array(let items)? = try? JSONValue.parse(Array(text.utf8)) else {
            return value
        }
        return .array(items)
    }
}

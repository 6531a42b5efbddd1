import HeraldAPI
import HeraldCore

/// A push's per-platform `data.ios` / `data.android` objects: each is what its platform receives
/// in place of the common fields, carried as the payload's provider overrides (a `null` in an
/// override removes what Herald rendered from the common fields).
package enum LeanCloudPlatformData {
    /// `data.ios`: `alert` (string or APNs alert object), `badge` (a number, or `"Increment"`:
    /// the engine's per-device increment), `sound`, `category`, `thread-id`, `content-available`,
    /// `mutable-content`, and custom keys beside `aps`; the common custom keys are left out.
    package static func apply(ios: [String: JSONValue], to payload: inout NotificationPayload) throws(LeanCloudFailure)
    {
        var aps: [String: JSONValue] = [:]
        switch ios["alert"] {
        case nil, .null?: aps["alert"] = .null
        case .string(let text)?: aps["alert"] = .object(["body": .string(text), "title": .null, "subtitle": .null])
        case .object(let alert)?:
            var replaced = alert
            for key in ["title", "subtitle", "body"] where replaced[key] == nil { replaced[key] = .null }
            aps["alert"] = .object(replaced)
        default: throw .invalidType("data.ios.alert must be a string or an object.")
        }
        switch try LeanCloudPush.badge(ios["badge"]) {
        case .increment?: payload.badge = .increment
        case .set(let value)?: aps["badge"] = .number(JSONNumber(value))
        case nil: aps["badge"] = .null
        }
        for key in ["sound", "category", "thread-id"] {
            aps[key] = try LeanCloudInstallation.string(ios, key).map(JSONValue.string) ?? .null
        }
        for key in ["content-available", "mutable-content"] {
            aps[key] = try LeanCloudPush.flag(ios, key) ? .number(JSONNumber(1)) : .null
        }
        var apns: [String: JSONValue] = ["aps": .object(aps)]
        for key in payload.data.keys { apns[key] = .null }
        for (key, value) in ios where !LeanCloudPush.reserved.contains(key) && key != "thread-id" {
            apns[key] = value
        }
        payload.overrides["apns"] = .object(apns)
    }

    /// `data.android`: `alert` (the body) and `title` make the notification; without either the
    /// push is data only (`action` and the custom keys), as LeanCloud's silent push; the common
    /// custom keys are left out.
    package static func apply(
        android: [String: JSONValue], to payload: inout NotificationPayload
    ) throws(LeanCloudFailure) {
        let body = try LeanCloudInstallation.string(android, "alert")
        let title = try LeanCloudInstallation.string(android, "title")
        var fcm: [String: JSONValue] = [:]
        if body == nil, title == nil {
            fcm["notification"] = .null
        } else {
            var notification: [String: JSONValue] = [:]
            notification["body"] = body.map(JSONValue.string)
            notification["title"] = title.map(JSONValue.string)
            fcm["notification"] = .object(notification)
        }
        var data: [String: JSONValue] = [:]
        for key in payload.data.keys { data[key] = .null }
        for (key, value) in android where !LeanCloudPush.reserved.contains(key) { data[key] = value }
        fcm["data"] = .object(data)
        payload.overrides["fcm"] = .object(fcm)
    }
}

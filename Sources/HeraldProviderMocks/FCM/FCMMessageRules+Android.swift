import Foundation
import HeraldCore

/// FCM HTTP v1's checks of `message.android` (AndroidConfig) and `message.android.notification`
/// (AndroidNotification), field by field as the projects.messages reference lists them. Google's JSON
/// transcoder takes a field by its proto name (`channel_id`) or its JSON name (`channelId`), `null` for any
/// field (its default), and an enum by its name or its number; anything else is `400 INVALID_ARGUMENT`.
extension FCMMessageRules {
    /// What a field holds, as the transcoder checks it.
    enum FieldKind: Sendable {
        case string
        case bool
        case int32
        /// A `float` or `double`.
        case number
        case strings
        /// A `google.protobuf.Timestamp`: an RFC 3339 date in UTC or with an offset.
        case timestamp
        case duration
        case durations
        /// An enum, by its full type name and its values in number order.
        case enumeration(String, [String])
        /// A message, by its full type name and its fields.
        case message(String, [String: FieldKind])
    }

    static let androidConfigType = "type.googleapis.com/google.firebase.fcm.v1.AndroidConfig"
    static let androidNotificationType = "type.googleapis.com/google.firebase.fcm.v1.AndroidNotification"

    /// AndroidNotification's fields.
    static let androidNotificationFields: [String: FieldKind] = [
        "title": .string, "body": .string, "icon": .string, "color": .string, "sound": .string, "tag": .string,
        "click_action": .string, "body_loc_key": .string, "body_loc_args": .strings, "title_loc_key": .string,
        "title_loc_args": .strings, "channel_id": .string, "ticker": .string, "sticky": .bool,
        "event_time": .timestamp, "local_only": .bool,
        "notification_priority": .enumeration(
            "type.googleapis.com/google.firebase.fcm.v1.AndroidNotification.NotificationPriority",
            [
                "PRIORITY_UNSPECIFIED", "PRIORITY_MIN", "PRIORITY_LOW", "PRIORITY_DEFAULT", "PRIORITY_HIGH",
                "PRIORITY_MAX",
            ]),
        "default_sound": .bool, "default_vibrate_timings": .bool, "default_light_settings": .bool,
        "vibrate_timings": .durations,
        "visibility": .enumeration(
            "type.googleapis.com/google.firebase.fcm.v1.AndroidNotification.Visibility",
            ["VISIBILITY_UNSPECIFIED", "PRIVATE", "PUBLIC", "SECRET"]),
        "notification_count": .int32,
        "light_settings": .message(
            "type.googleapis.com/google.firebase.fcm.v1.LightSettings",
            [
                "color": .message(
                    "type.googleapis.com/google.type.Color",
                    ["red": .number, "green": .number, "blue": .number, "alpha": .number]),
                "light_on_duration": .duration, "light_off_duration": .duration,
            ]),
        "image": .string, "bypass_proxy_notification": .bool,
        "proxy": .enumeration(
            "type.googleapis.com/google.firebase.fcm.v1.AndroidNotification.Proxy",
            ["PROXY_UNSPECIFIED", "ALLOW", "DENY", "IF_PRIORITY_LOWERED"]),
    ]

    static func checkAndroid(_ value: JSONValue?) -> GoogleRPCError? {
        guard let value else { return nil }
        guard case .object(let fields) = value else {
            return .invalidValue(at: "message.android", type: androidConfigType, value: render(value))
        }
        let known: Set = [
            "collapse_key", "priority", "ttl", "restricted_package_name", "data", "notification", "fcm_options",
            "direct_boot_ok", "bandwidth_constrained_ok", "restricted_satellite_ok",
        ]
        if let unknown = unknownName(in: fields, known: known) {
            return .unknownName(unknown, at: "message.android")
        }
        if let error = checkStrings(
            fields, names: ["collapse_key", "collapseKey", "restricted_package_name", "restrictedPackageName"],
            at: "message.android")
        {
            return error
        }
        if let priority = fields["priority"] {
            guard case .string(let text) = priority, ["normal", "high"].contains(text.lowercased()) else {
                return .invalidValue(
                    at: "message.android.priority",
                    type: "type.googleapis.com/google.firebase.fcm.v1.AndroidMessagePriority", value: render(priority))
            }
        }
        if let ttl = fields["ttl"] {
            guard case .string(let text) = ttl, let seconds = durationSeconds(text) else {
                return .invalidValue(
                    at: "message.android.ttl", type: "type.googleapis.com/google.protobuf.Duration", value: render(ttl))
            }
            if seconds > maximumTTLSeconds {
                return .invalidArgument("TTL must be between 0 and 4 weeks", field: "message.android.ttl")
            }
        }
        for name in ["direct_boot_ok", "bandwidth_constrained_ok", "restricted_satellite_ok"] {
            if let error = check(field(name, in: fields), as: .bool, at: "message.android.\(name)") { return error }
        }
        if let error = checkStringMap(fields["data"], at: "message.android.data") { return error }
        if let options = field("fcm_options", in: fields), options != .null {
            let type = "type.googleapis.com/google.firebase.fcm.v1.AndroidFcmOptions"
            if let error = check(
                options, as: .message(type, ["analytics_label": .string]), at: "message.android.fcm_options")
            {
                return error
            }
        }
        guard let notification = field("notification", in: fields), notification != .null else { return nil }
        return check(
            notification, as: .message(androidNotificationType, androidNotificationFields),
            at: "message.android.notification")
    }

    /// `value` checked as a field of `kind` at `path`.
    static func check(_ value: JSONValue?, as kind: FieldKind, at path: String) -> GoogleRPCError? {
        guard let value, value != .null else { return nil }
        switch kind {
        case .string:
            guard case .string = value else {
                return .invalidValue(at: path, type: "TYPE_STRING", value: render(value))
            }
        case .bool:
            guard case .bool = value else { return .invalidValue(at: path, type: "TYPE_BOOL", value: render(value)) }
        case .int32:
            let number: Int64? =
                switch value {
                case .number(let number): number.integerValue
                case .string(let text): Int64(text)
                default: nil
                }
            guard let number, (Int64(Int32.min)...Int64(Int32.max)).contains(number) else {
                return .invalidValue(at: path, type: "TYPE_INT32", value: render(value))
            }
        case .number:
            guard case .number = value else { return .invalidValue(at: path, type: "TYPE_FLOAT", value: render(value)) }
        case .strings:
            guard case .array(let items) = value else {
                return .invalidValue(at: path, type: "TYPE_STRING", value: render(value))
            }
            for (index, item) in items.enumerated() {
                if let error = check(item, as: .string, at: "\(path)[\(index)]") { return error }
            }
        case .timestamp:
            guard case .string(let text) = value, isTimestamp(text) else {
                return .invalidValue(
                    at: path, type: "type.googleapis.com/google.protobuf.Timestamp", value: render(value))
            }
        case .duration:
            guard case .string(let text) = value, durationSeconds(text) != nil else {
                return .invalidValue(
                    at: path, type: "type.googleapis.com/google.protobuf.Duration", value: render(value))
            }
        case .durations:
            guard case .array(let items) = value else {
                return .invalidValue(
                    at: path, type: "type.googleapis.com/google.protobuf.Duration", value: render(value))
            }
            for (index, item) in items.enumerated() {
                if let error = check(item, as: .duration, at: "\(path)[\(index)]") { return error }
            }
        case .enumeration(let type, let names):
            let known: Bool =
                switch value {
                case .string(let text): names.contains(text.uppercased())
                case .number(let number): number.integerValue.map { (0..<Int64(names.count)).contains($0) } ?? false
                default: false
                }
            guard known else { return .invalidValue(at: path, type: type, value: render(value)) }
        case .message(let type, let fields):
            guard case .object(let members) = value else {
                return .invalidValue(at: path, type: type, value: render(value))
            }
            if let unknown = unknownName(in: members, known: Set(fields.keys)) {
                return .unknownName(unknown, at: path)
            }
            for (name, kind) in fields.sorted(by: { $0.key < $1.key }) {
                if let error = check(field(name, in: members), as: kind, at: "\(path).\(name)") { return error }
            }
        }
        return nil
    }

    /// The first member, in sorted order, that is none of `known` by its proto name or its JSON name.
    static func unknownName(in members: [String: JSONValue], known: Set<String>) -> String? {
        let names = known.union(known.map(jsonName))
        return members.keys.sorted().first { !names.contains($0) }
    }

    /// A field given by its proto name or its JSON name.
    static func field(_ name: String, in members: [String: JSONValue]) -> JSONValue? {
        members[name] ?? members[jsonName(name)]
    }

    /// A proto field name's JSON name: `click_action` → `clickAction`.
    static func jsonName(_ name: String) -> String {
        let parts = name.split(separator: "_")
        return parts.enumerated().map { $0.offset == 0 ? String($0.element) : $0.element.capitalized }.joined()
    }

    /// RFC 3339 as `google.protobuf.Timestamp` takes it: `2024-05-01T10:00:00Z`, with up to nine fractional
    /// digits, `Z` or an offset.
    static func isTimestamp(_ text: String) -> Bool {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if formatter.date(from: text) != nil { return true }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text) != nil
    }
}

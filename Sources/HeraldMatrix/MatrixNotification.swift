import Foundation
import HeraldCore

/// One `POST /_matrix/push/v1/notify` body as a homeserver sends it (the Matrix specification's
/// Push Gateway API): an event, or only a badge update, for one user's devices (its pushers).
package struct MatrixNotification: Sendable, Equatable {
    /// A pusher of the user: the Matrix app id, the pushkey (the device's APNs or FCM token) and
    /// the pusher's data (`format`, and what else the client set, such as Sygnal's `default_payload`).
    package struct Device: Sendable, Equatable {
        package var appID: String
        package var pushkey: String
        package var data: [String: JSONValue]
        package var tweaks: [String: JSONValue]

        /// The pusher asked for ids only (`data.format` is `event_id_only`).
        package var eventIDOnly: Bool { data["format"] == .string("event_id_only") }
    }

    package var eventID: String?
    package var roomID: String?
    package var type: String?
    package var sender: String?
    package var senderDisplayName: String?
    package var roomName: String?
    package var roomAlias: String?
    package var content: [String: JSONValue]?
    /// `high` unless the homeserver said `low`.
    package var lowPriority: Bool
    package var unread: Int?
    package var missedCalls: Int?
    package var devices: [Device]

    /// The pushkeys a notify may carry: a homeserver sends one user's pushers.
    package static let maxDevices = 100
    /// A pushkey is at most 512 bytes (the specification's limit).
    package static let maxPushkeyBytes = 512

    /// Reads a notify body.
    /// - Throws: `MatrixError` `M_BAD_JSON` naming what is missing or malformed.
    package init(parsing json: JSONValue) throws(MatrixError) {
        guard case .object(let body) = json, case .object(let notification)? = body["notification"] else {
            throw .badJSON("The body must be an object with a 'notification' object.")
        }
        func string(_ key: String) throws(MatrixError) -> String? {
            switch notification[key] {
            case nil, .null?: return nil
            case .string(let value)?: return value
            default: throw .badJSON("notification.\(key) must be a string.")
            }
        }
        eventID = try string("event_id")
        roomID = try string("room_id")
        type = try string("type")
        sender = try string("sender")
        senderDisplayName = try string("sender_display_name")
        roomName = try string("room_name")
        roomAlias = try string("room_alias")
        switch notification["user_is_target"] {
        case nil, .null?, .bool(_)?: break
        default: throw .badJSON("notification.user_is_target must be a boolean.")
        }
        switch notification["content"] {
        case nil, .null?: content = nil
        case .object(let value)?: content = value
        default: throw .badJSON("notification.content must be an object.")
        }
        switch try string("prio") {
        case nil, "high"?: lowPriority = false
        case "low"?: lowPriority = true
        default: throw .badJSON("notification.prio must be 'high' or 'low'.")
        }
        switch notification["counts"] {
        case nil, .null?: break
        case .object(let counts)?:
            func count(_ key: String) throws(MatrixError) -> Int? {
                if counts[key] == nil || counts[key] == .null { return nil }
                guard case .number(let number)? = counts[key], let value = number.integerValue, value >= 0,
                    value <= Int32.max
                else { throw .badJSON("notification.counts.\(key) must be a non-negative integer.") }
                return Int(value)
            }
            unread = try count("unread")
            missedCalls = try count("missed_calls")
        default: throw .badJSON("notification.counts must be an object.")
        }
        guard case .array(let devices)? = notification["devices"], !devices.isEmpty else {
            throw .badJSON("notification.devices must be a non-empty array.")
        }
        guard devices.count <= Self.maxDevices else {
            throw .badJSON("notification.devices holds at most \(Self.maxDevices) devices.")
        }
        self.devices = []
        for (index, device) in devices.enumerated() {
            guard case .object(let fields) = device, case .string(let appID)? = fields["app_id"], !appID.isEmpty,
                case .string(let pushkey)? = fields["pushkey"], !pushkey.isEmpty
            else {
                throw .badJSON("notification.devices[\(index)] must have a string app_id and pushkey.")
            }
            for (key, isValid) in [
                ("data", { if case .object = $0 { true } else { false } }),
                ("tweaks", { if case .object = $0 { true } else { false } }),
                ("pushkey_ts", { if case .number(let n) = $0 { n.integerValue != nil } else { false } }),
            ] as [(String, (JSONValue) -> Bool)] {
                if let member = fields[key], member != .null, !isValid(member) {
                    throw .badJSON("notification.devices[\(index)].\(key) has the wrong type.")
                }
            }
            guard pushkey.utf8.count <= Self.maxPushkeyBytes else {
                throw .badJSON("notification.devices[\(index)].pushkey is longer than \(Self.maxPushkeyBytes) bytes.")
            }
            self.devices.append(
                Device(
                    appID: appID, pushkey: pushkey, data: fields["data"]?.objectValue ?? [:],
                    tweaks: fields["tweaks"]?.objectValue ?? [:]))
        }
    }

    /// The notification for one device: with `event_id_only`, a data push carrying only the ids
    /// and counts (the app fetches the event itself); otherwise an alert titled with the room (or
    /// the sender) whose body is the message, the ids in its data. `counts.unread` is the badge,
    /// `prio: low` a normal-priority push, a `sound` tweak the sound; the pusher's
    /// `default_payload` (Sygnal's) is merged into the APNs payload.
    package func payload(for device: Device, route: MatrixConfiguration.Route) -> NotificationPayload {
        var data: [String: JSONValue] = [:]
        data["event_id"] = eventID.map(JSONValue.string)
        data["room_id"] = roomID.map(JSONValue.string)
        data["unread_count"] = unread.map { .number(JSONNumber($0)) }
        data["missed_calls"] = missedCalls.map { .number(JSONNumber($0)) }
        data["prio"] = .string(lowPriority ? "low" : "high")
        var payload = NotificationPayload(
            badge: unread.map(NotificationPayload.Badge.set), data: data, priority: lowPriority ? .normal : .high)
        if route != .fcm, case .object(let defaultPayload)? = device.data["default_payload"] {
            payload.overrides["apns"] = .object(defaultPayload)
        }
        if device.eventIDOnly || eventID == nil {
            // Ids only, or a badge update: nothing to show, the app wakes and fetches.
            payload.contentAvailable = true
            return payload
        }
        data["type"] = type.map(JSONValue.string)
        data["sender"] = sender.map(JSONValue.string)
        data["sender_display_name"] = senderDisplayName.map(JSONValue.string)
        data["room_name"] = roomName.map(JSONValue.string)
        payload.data = data
        payload.title = roomName ?? roomAlias ?? senderDisplayName ?? sender
        payload.body = alertBody
        payload.threadID = roomID
        if case .string(let sound)? = device.tweaks["sound"] { payload.sound = sound }
        return payload
    }

    /// The alert's text: the message's body (prefixed by its sender in a named room), an
    /// invitation, or a generic line for other events.
    var alertBody: String {
        let who = senderDisplayName ?? sender ?? "Someone"
        if type == "m.room.member", content?["membership"] == .string("invite") {
            return "\(who) invited you to \(roomName ?? roomAlias ?? "a room")"
        }
        if case .string(let text)? = content?["body"] {
            let clipped = text.count > 1_000 ? String(text.prefix(1_000)) + "…" : text
            return roomName == nil && roomAlias == nil ? clipped : "\(who): \(clipped)"
        }
        if type == "m.room.encrypted" { return "\(who) sent an encrypted message" }
        return "\(who) sent an event"
    }
}

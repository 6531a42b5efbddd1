import HeraldAPI
import HeraldCore

/// Translates a Home Assistant push request into Herald's unified payload, rendered the way the
/// Companion apps read their pushes:
///
/// - **Android** (FCM): a data-only message. The app builds the notification itself from `data`:
///   `message`, `title`, `webhook_id` and every option of the service call (`channel`, `tag`,
///   `group`, `image`, `clickAction`, `persistent`, `sticky`, `command`, …) as strings, actions as
///   `action_N_key/title/uri/behavior`; `priority` and `ttl` set FCM's Android options.
/// - **Apple** (APNs directly, or through FCM's `apns` block): an alert with `aps.alert`
///   {title, subtitle, body}, `sound` (`default` unless `data.sound` / `push.sound`; `none` drops it),
///   `data.push` merged into `aps` (badge, sound, `interruption-level`, category), `tag` as
///   `apns-collapse-id`, `group` as `thread-id`, attachments, `url`, `entity_id`, `action_data` as
///   `homeassistant`, with category `DYNAMIC` and `mutable-content` where the app's extension needs them.
/// - **Commands** (`request_location_update`, `clear_badge`, `clear_notification`, `remove_channel`,
///   `update_widgets`, `update_complications`, `command_*`) go without an alert: data-only on
///   Android, a background push with `homeassistant.command` on Apple (`clear_badge`: badge 0).
///   Like Home Assistant's own relay, the relay neither counts them nor stops them at the limit.
/// - The provider blocks of `data` pass through as the document's example server passes them:
///   `android`, `apns`, `webpush` and `data` to FCM's message, `apns` (headers, payload) and
///   `apns_headers` to APNs.
package enum HomeAssistantCompanionPayload {
    /// Messages that are commands to the Companion app rather than text to show.
    package static let namedCommands: Set<String> = [
        "request_location_update", "request_location_updates", "clear_badge", "clear_notification",
        "remove_channel", "update_widgets", "update_complications",
    ]

    /// Whether the message is a Companion command (a silent, data-only push).
    package static func isCommand(_ message: String) -> Bool {
        namedCommands.contains(message) || message.hasPrefix("command_")
    }

    /// The service call's options that shape the message and are not copied to Android's `data`.
    private static let structural: Set<String> = [
        "android", "apns", "webpush", "data", "apns_headers", "push", "actions", "priority", "ttl",
    ]

    /// The unified payload for a device of `platform`.
    /// - Throws: `HeraldError` naming the `data` member at fault.
    package static func payload(
        for request: HomeAssistantPushRequest, platform: Platform
    ) throws(HeraldError) -> NotificationPayload {
        let data = request.data
        let command = isCommand(request.message)
        var payload = NotificationPayload()
        payload.priority = try priority(data["priority"]) ?? .high
        payload.ttl = try ttl(data["ttl"])
        var fcm: [String: JSONValue] = [:]
        if case .object(let android)? = data["android"] { fcm["android"] = .object(android) }
        if case .object(let fields)? = data["data"] { fcm["data"] = .object(fields) }
        if case .object(let webpush)? = data["webpush"] { fcm["webpush"] = .object(webpush) }

        if platform.isApple {
            let apple = try AppleRendering(request)
            payload.title = apple.alert?.title
            payload.subtitle = apple.alert?.subtitle
            payload.body = apple.alert?.body
            payload.contentAvailable = apple.background
            payload.mutableContent = apple.aps["mutable-content"] != nil
            // Background pushes must go at APNs priority 5.
            if apple.background { payload.priority = .normal }
            var body = apple.extras
            body["aps"] = .object(apple.aps)
            body["headers"] = .object(apple.headers)
            var passedAPNs: [String: JSONValue] = [:]
            if case .object(let block)? = data["apns"] { passedAPNs = block }
            // Native APNs: FCM's apns block shape ({headers, payload}) maps onto the request's own parts.
            var native = body
            if case .object(let extra)? = passedAPNs["payload"] { native = native.merging(deep: extra) }
            if case .object(let extra)? = passedAPNs["headers"] {
                native["headers"] = .object(apple.headers.merging(deep: extra))
            }
            payload.overrides["apns"] = .object(native)
            var fcmAPNs: [String: JSONValue] = ["headers": .object(apple.headers)]
            fcmAPNs["payload"] = .object(apple.extras.merging(deep: ["aps": .object(apple.aps)]))
            fcm["apns"] = .object(fcmAPNs.merging(deep: passedAPNs))
            if apple.alert == nil { fcm["notification"] = .null }
        } else {
            payload.data = androidData(request)
            if case .object(let apns)? = data["apns"] { fcm["apns"] = .object(apns) }
            // The Companion app builds the notification itself: a data-only message.
            fcm["notification"] = .null
            payload.title = request.title
            payload.body = command ? nil : request.message
        }
        payload.overrides["fcm"] = .object(fcm)
        return payload
    }

    /// Android's `data`: message, title, webhook id, actions and every other option as strings.
    private static func androidData(_ request: HomeAssistantPushRequest) -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        for (key, value) in request.data where !structural.contains(key) && value != .null {
            result[key] = .string(Self.string(value))
        }
        if case .array(let actions)? = request.data["actions"] {
            for (index, action) in actions.enumerated() {
                guard case .object(let fields) = action else { continue }
                for (name, key) in [("action", "key"), ("title", "title"), ("uri", "uri"), ("behavior", "behavior")] {
                    if let value = fields[name], value != .null {
                        result["action_\(index + 1)_\(key)"] = .string(Self.string(value))
                    }
                }
            }
        }
        result["message"] = .string(request.message)
        if let title = request.title { result["title"] = .string(title) }
        if let webhook = request.registration.webhookID { result["webhook_id"] = .string(webhook) }
        return result
    }

    /// `data.priority`: `high` or `normal` (FCM's words; Android's `max`/`min` map to them).
    private static func priority(_ value: JSONValue?) throws(HeraldError) -> NotificationPayload.Priority? {
        switch value {
        case nil, .null?: return nil
        case .string(let raw)?:
            switch raw.lowercased() {
            case "high", "max": return .high
            case "normal", "low", "min", "default": return .normal
            default: break
            }
        default: break
        }
        throw .invalidValue("data.priority", "data.priority must be \"high\" or \"normal\".")
    }

    /// `data.ttl`: seconds, as a number or a numeric string (FCM's `"3600s"` too).
    private static func ttl(_ value: JSONValue?) throws(HeraldError) -> Int? {
        var seconds: Int?
        switch value {
        case nil, .null?: return nil
        case .number(let number)?: seconds = number.integerValue.map(Int.init)
        case .string(let raw)?: seconds = Int(raw.hasSuffix("s") ? String(raw.dropLast()) : raw)
        default: break
        }
        guard let seconds, (0...2_419_200).contains(seconds) else {
            throw .invalidValue("data.ttl", "data.ttl must be 0 to 2419200 seconds.")
        }
        return seconds
    }

    /// A value as the Companion app reads `data`: strings as they are, anything else as JSON text.
    package static func string(_ value: JSONValue) -> String {
        if case .string(let text) = value { return text }
        return String(decoding: value.serialized(), as: UTF8.self)
    }
}

/// The Apple rendering the iOS and macOS Companion apps expect: `aps`, the APNs headers and the
/// payload keys beside `aps`.
package struct AppleRendering {
    /// The alert's text; nil for a command.
    package var alert: (title: String?, subtitle: String?, body: String?)?
    package var aps: [String: JSONValue] = [:]
    package var headers: [String: JSONValue] = [:]
    /// Payload keys beside `aps` (`homeassistant`, `url`, `attachment`, `webhook_id`, …).
    package var extras: [String: JSONValue] = [:]
    /// A silent push (`content-available`), sent as APNs' background type.
    package var background = false

    /// Renders a request.
    /// - Throws: `HeraldError` naming the `data` member at fault.
    package init(_ request: HomeAssistantPushRequest) throws(HeraldError) {
        let data = request.data
        if case .object(let fields)? = data["apns_headers"] { headers = fields }
        if let webhook = request.registration.webhookID { extras["webhook_id"] = .string(webhook) }
        let push: [String: JSONValue]
        switch data["push"] {
        case nil, .null?: push = [:]
        case .object(let fields)?: push = fields
        default: throw .invalidType("data.push", expected: "an object")
        }
        let message = request.message
        if message == "clear_badge" {
            aps["badge"] = .number(0)
        } else if HomeAssistantCompanionPayload.isCommand(message) {
            let command = message == "request_location_updates" ? "request_location_update" : message
            var homeassistant: [String: JSONValue] = ["command": .string(command)]
            if message == "clear_notification" {
                if case .string(let tag)? = data["tag"] { homeassistant["tag"] = .string(tag) }
                if let collapse = headers.removeValue(forKey: "apns-collapse-id") {
                    homeassistant["collapseId"] = collapse
                }
            }
            aps["content-available"] = .number(1)
            if let badge = push["badge"].flatMap(Self.number) { aps["badge"] = badge }
            extras["homeassistant"] = .object(homeassistant)
            background = true
        } else {
            renderAlert(request, push: push)
        }
        Self.normalizeSound(&aps)
        if let badge = aps["badge"], let number = Self.number(badge) { aps["badge"] = number }
        headers["apns-push-type"] = .string(background ? "background" : "alert")
    }

    private mutating func renderAlert(_ request: HomeAssistantPushRequest, push: [String: JSONValue]) {
        let data = request.data
        var needsCategory = false
        var needsMutableContent = false
        var subtitle: String?
        if case .string(let text)? = data["subtitle"] { subtitle = text }
        let deleting = request.message == "delete_alert"
        if !deleting { alert = (request.title, subtitle, request.message) }
        aps["sound"] = .string("default")
        for (key, value) in push { aps[key] = value }
        if case .array? = data["actions"] {
            extras["actions"] = data["actions"]
            needsCategory = true
        }
        if let sound = data["sound"], sound != .null { aps["sound"] = sound }
        for key in ["entity_id", "action_data", "attachment"] {
            guard let value = data[key], value != .null else { continue }
            extras[key == "action_data" ? "homeassistant" : key] = value
            needsCategory = true
            if key != "action_data" { needsMutableContent = true }
        }
        for (key, contentType) in [("video", "mpeg4"), ("image", "jpeg"), ("audio", "waveformaudio")] {
            guard case .string(let url)? = data[key] else { continue }
            var attachment = extras["attachment"]?.objectValue ?? [:]
            if attachment["content-type"] == nil { attachment["content-type"] = .string(contentType) }
            if attachment["url"] == nil { attachment["url"] = .string(url) }
            extras["attachment"] = .object(attachment)
            needsCategory = true
            needsMutableContent = true
        }
        // Android's clickAction opens a URL too: the Apple apps read it as `url`.
        if case .string(let url)? = data["url"] ?? data["clickAction"] { extras["url"] = .string(url) }
        for key in ["shortcut", "presentation_options"] {
            if let value = data[key], value != .null { extras[key] = value }
        }
        if case .string(let tag)? = data["tag"] { headers["apns-collapse-id"] = .string(tag) }
        if case .string(let group)? = data["group"] { aps["thread-id"] = .string(group) }
        if case .string(let category)? = aps["category"] {
            aps["category"] = .string(category.uppercased())
        } else if needsCategory {
            aps["category"] = .string("DYNAMIC")
        }
        if needsMutableContent { aps["mutable-content"] = .number(1) }
        if deleting { aps["sound"] = nil }
        var shown: [String: JSONValue] = [:]
        if let alert {
            shown["title"] = alert.title.map(JSONValue.string)
            shown["subtitle"] = alert.subtitle.map(JSONValue.string)
            shown["body"] = alert.body.map(JSONValue.string)
            aps["alert"] = .object(shown)
        }
    }

    /// `none` drops the sound; a critical sound's `volume` and `critical` become numbers.
    private static func normalizeSound(_ aps: inout [String: JSONValue]) {
        switch aps["sound"] {
        case .string(let name)? where name.lowercased() == "none": aps["sound"] = nil
        case .object(var sound)?:
            if let volume = sound["volume"], let number = Self.number(volume) { sound["volume"] = number }
            if let critical = sound["critical"], let number = Self.number(critical) { sound["critical"] = number }
            aps["sound"] = .object(sound)
        default: break
        }
    }

    /// A number, or a string holding one (Home Assistant templates render numbers as strings).
    package static func number(_ value: JSONValue) -> JSONValue? {
        switch value {
        case .number: return value
        case .string(let text):
            if let integer = Int(text) { return .number(JSONNumber(integer)) }
            if let double = Double(text), double.isFinite { return .number(JSONNumber(double)) }
            return nil
        default: return nil
        }
    }
}

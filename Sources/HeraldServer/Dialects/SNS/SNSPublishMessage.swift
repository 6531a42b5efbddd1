import Foundation
import HeraldCore

/// `Publish`'s message as a native payload.
///
/// A plain `Message` is the alert body. With `MessageStructure=json`, `Message` is a JSON object
/// of strings: `default` (required) is the alert body wherever no platform key applies; `APNS` /
/// `APNS_SANDBOX` hold the APNs payload (`aps` and custom keys), which becomes the `apns` overrides;
/// `GCM` holds an FCM message, either `{"fcmV1Message": {"message": {…}}}` or the legacy
/// `{"notification": {…}, "data": {…}}`, which becomes the `fcm` overrides. A platform key replaces
/// the default text on its platform, as in SNS. The `AWS.SNS.MOBILE.*` message attributes become
/// APNs headers and FCM's TTL.
struct SNSPublishMessage {
    /// The native payload.
    var payload: NotificationPayload

    /// The platform keys a structured message may hold.
    static let platformKeys = ["default", "APNS", "APNS_SANDBOX", "GCM"]

    /// Translates a message.
    /// - Parameters:
    ///   - platform: the endpoint's platform; nil for a topic (every platform key applies, `APNS`
    ///     before `APNS_SANDBOX`, as one native notification carries one APNs override).
    /// - Throws: `SNSAPIFailure` `InvalidParameter` with SNS's wording for a malformed message.
    init(
        message: String, structure: String?, attributes: [String: SNSQueryParameters.MessageAttribute],
        platform: SNSAPIRoutes.PlatformKind?, now: Date
    ) throws(SNSAPIFailure) {
        payload = NotificationPayload()
        switch structure {
        case nil, "":
            payload.body = message
        case "json":
            guard case .object(let members)? = try? JSONValue.parse(Array(message.utf8)) else {
                throw .invalidParameter("Invalid parameter: Message Structure - JSON message body failed to parse")
            }
            guard case .string(let text)? = members["default"] else {
                throw .invalidParameter("Invalid parameter: Message Structure - No default entry in JSON message body")
            }
            var overrides: [String: JSONValue] = [:]
            let apnsKeys: [String] =
                switch platform {
                case .apns?: ["APNS"]
                case .apnsSandbox?: ["APNS_SANDBOX"]
                case .gcm?: []
                case nil: ["APNS", "APNS_SANDBOX"]
                }
            if let key = apnsKeys.first(where: { members[$0] != nil }) {
                overrides["apns"] = .object(
                    try Self.apns(try Self.object(members[key], key: key), hidingDefault: platform == nil))
            }
            if platform == nil || platform == .gcm, members["GCM"] != nil {
                overrides["fcm"] = .object(try Self.fcm(try Self.object(members["GCM"], key: "GCM")))
            }
            // An endpoint whose platform key is given gets that payload alone; a topic's
            // notification keeps the default text for the platforms without a key.
            let hasPlatformKey = platform != nil && !overrides.isEmpty
            payload.body = hasPlatformKey ? nil : text
            // As SNS delivers it: a platform key's payload reaches the device with nothing added
            // (no Herald notification id).
            if case .object(var apns)? = overrides["apns"] {
                apns["herald"] = .null
                overrides["apns"] = .object(apns)
            }
            if case .object(var fcm)? = overrides["fcm"] {
                var data = fcm["data"]?.objectValue ?? [:]
                data["herald_id"] = .null
                fcm["data"] = .object(data)
                overrides["fcm"] = .object(fcm)
            }
            payload.overrides = overrides
        default:
            throw .invalidParameter("Invalid parameter: MessageStructure Reason: must be json")
        }
        try apply(attributes, now: now)
    }

    /// A platform key's value: a JSON object written as a string.
    private static func object(_ value: JSONValue?, key: String) throws(SNSAPIFailure) -> [String: JSONValue] {
        guard case .string(let text)? = value, case .object(let object)? = try? JSONValue.parse(Array(text.utf8))
        else {
            throw .invalidParameter(
                "Invalid parameter: Message Reason: Invalid notification for protocol \(key): the value must be a "
                    + "JSON object in a string")
        }
        return object
    }

    /// An APNs payload as `apns` overrides: the default text never shows beside the payload's own
    /// alert, and an `aps` without an alert but with `content-available` is a background push.
    /// - Parameter hidingDefault: whether the payload keeps the default text (a topic's), which the
    ///   overrides must then take out of the alert.
    private static func apns(
        _ object: [String: JSONValue], hidingDefault: Bool
    ) throws(SNSAPIFailure) -> [String: JSONValue] {
        var overrides = object
        var aps: [String: JSONValue] = [:]
        if let value = object["aps"] {
            guard case .object(let members) = value else {
                throw .invalidParameter("Invalid parameter: Message Reason: Invalid notification for protocol APNS")
            }
            aps = members
        }
        switch aps["alert"] {
        case nil:
            if hidingDefault { aps["alert"] = .null }
            if aps["content-available"] != nil, aps["sound"] == nil, aps["badge"] == nil {
                overrides["headers"] = .object(["apns-push-type": .string("background"), "apns-priority": .string("5")])
            }
        case .object(var alert)? where hidingDefault:
            for key in ["title", "subtitle", "body"] where alert[key] == nil { alert[key] = .null }
            aps["alert"] = .object(alert)
        default: break
        }
        overrides["aps"] = .object(aps)
        return overrides
    }

    /// An FCM message (v1 or legacy) as `fcm` overrides.
    private static func fcm(_ object: [String: JSONValue]) throws(SNSAPIFailure) -> [String: JSONValue] {
        var overrides: [String: JSONValue] = [:]
        if let v1 = object["fcmV1Message"] {
            guard case .object(let wrapper) = v1, case .object(let message)? = wrapper["message"] else {
                throw .invalidParameter(
                    "Invalid parameter: Message Reason: Invalid notification for protocol GCM: fcmV1Message needs "
                        + "a message object")
            }
            for key in ["notification", "data", "android", "apns", "webpush", "fcm_options"] {
                if let value = message[key] { overrides[key] = value }
            }
        } else {
            // The legacy HTTP API's shape: notification, data and a few delivery options.
            var android: [String: JSONValue] = [:]
            if case .object(let notification)? = object["notification"] {
                var alert: [String: JSONValue] = [:]
                var extra: [String: JSONValue] = [:]
                for (key, value) in notification {
                    switch key {
                    case "title", "body": alert[key] = value
                    case "image": alert["image"] = value
                    default: extra[key] = value
                    }
                }
                overrides["notification"] = .object(alert)
                if !extra.isEmpty { android["notification"] = .object(extra) }
            }
            if let data = object["data"] {
                guard case .object = data else {
                    throw .invalidParameter(
                        "Invalid parameter: Message Reason: Invalid notification for protocol GCM: data must be an "
                            + "object")
                }
                overrides["data"] = data
            }
            if case .number(let seconds)? = object["time_to_live"] { android["ttl"] = .string("\(seconds)s") }
            if case .string(let key)? = object["collapse_key"] { android["collapse_key"] = .string(key) }
            if case .string(let priority)? = object["priority"] { android["priority"] = .string(priority) }
            if !android.isEmpty { overrides["android"] = .object(android) }
        }
        if case .object(var notification)? = overrides["notification"] {
            for key in ["title", "body"] where notification[key] == nil { notification[key] = .null }
            overrides["notification"] = .object(notification)
        } else {
            // No notification: a data message, as SNS sends it, without the default text.
            overrides["notification"] = .null
        }
        return overrides
    }

    /// The `AWS.SNS.MOBILE.*` attributes SNS reads for APNs and FCM.
    private mutating func apply(
        _ attributes: [String: SNSQueryParameters.MessageAttribute], now: Date
    ) throws(SNSAPIFailure) {
        var headers = payload.overrides["apns"]?.objectValue?["headers"]?.objectValue ?? [:]
        for (name, attribute) in attributes {
            switch name {
            case "AWS.SNS.MOBILE.APNS.PUSH_TYPE": headers["apns-push-type"] = .string(attribute.value)
            case "AWS.SNS.MOBILE.APNS.PRIORITY":
                headers["apns-priority"] = .string(attribute.value)
                if attribute.value == "5" || attribute.value == "1" { payload.priority = .normal }
            case "AWS.SNS.MOBILE.APNS.COLLAPSE_ID": headers["apns-collapse-id"] = .string(attribute.value)
            case "AWS.SNS.MOBILE.APNS.TOPIC": headers["apns-topic"] = .string(attribute.value)
            case "AWS.SNS.MOBILE.APNS.TTL":
                let seconds = try Self.ttl(attribute, name: name)
                headers["apns-expiration"] = .string("\(Int(now.timeIntervalSince1970) + seconds)")
            case "AWS.SNS.MOBILE.FCM.TTL", "AWS.SNS.MOBILE.GCM.TTL":
                let seconds = try Self.ttl(attribute, name: name)
                var fcm = payload.overrides["fcm"]?.objectValue ?? [:]
                var android = fcm["android"]?.objectValue ?? [:]
                android["ttl"] = .string("\(seconds)s")
                fcm["android"] = .object(android)
                payload.overrides["fcm"] = .object(fcm)
            default: continue
            }
        }
        if !headers.isEmpty {
            var apns = payload.overrides["apns"]?.objectValue ?? [:]
            apns["headers"] = .object(headers)
            payload.overrides["apns"] = .object(apns)
        }
    }

    private static func ttl(
        _ attribute: SNSQueryParameters.MessageAttribute, name: String
    ) throws(SNSAPIFailure) -> Int {
        guard let seconds = Int(attribute.value), (0...2_419_200).contains(seconds) else {
            throw .invalidParameter(
                "Invalid parameter: MessageAttributes Reason: \(name) must be a number of seconds up to 2419200")
        }
        return seconds
    }
}

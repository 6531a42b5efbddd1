import Foundation
import HeraldAPI
import HeraldCore

/// `Publish`'s message as a native payload, resolved per recipient as SNS resolves it.
///
/// A plain `Message` is the `default` text. With `MessageStructure=json`, `Message` is a JSON object
/// of strings: `default` and the platform keys, each a payload written as a JSON string. As SNS, a
/// topic's message needs `default`; one to an endpoint needs `default` or that endpoint's own key.
/// Each recipient gets the key of its own platform and environment — production Apple endpoints
/// `APNS`, sandbox ones `APNS_SANDBOX`, Android `GCM` — delivered as given; a recipient whose key is
/// absent gets the `default` text, on Apple devices exactly as SNS sends it:
/// `{"aps":{"alert":"<default>"}}`. In the native payload: the body is the default text, the `apns`
/// overrides hold the production resolution, `apns_sandbox` the sandbox one (when it differs), and
/// the `fcm` overrides Android's (`{"fcmV1Message": {"message": {…}}}`, or the legacy
/// `{"notification": {…}, "data": {…}}` translated to FCM v1's names: ``SNSLegacyGCM``). The
/// `AWS.SNS.MOBILE.*` message attributes become APNs headers and FCM's TTL.
package struct SNSPublishMessage {
    /// The native payload.
    package var payload: NotificationPayload

    /// The platform keys a structured message may hold.
    package static let platformKeys = ["default", "APNS", "APNS_SANDBOX", "GCM"]

    /// Translates a message.
    /// - Parameter endpointKey: the platform key of the endpoint a publish targets (`APNS`,
    ///   `APNS_SANDBOX` or `GCM`); `nil` for a topic.
    /// - Throws: `SNSAPIFailure` `InvalidParameter` with SNS's wording for a malformed message.
    package init(
        message: String, structure: String?, endpointKey: String? = nil,
        attributes: [String: SNSQueryParameters.MessageAttribute], now: Date
    ) throws(SNSAPIFailure) {
        payload = NotificationPayload()
        let text: String?
        var members: [String: JSONValue] = [:]
        switch structure {
        case nil, "":
            text = message
        case "json":
            guard case .object(let object)? = try? JSONValue.parse(Array(message.utf8)) else {
                throw .invalidParameter("Invalid parameter: Message Structure - JSON message body failed to parse")
            }
            // SNS ignores a key whose value is not a string. A topic's message must have `default` (a
            // subscriber may lack its key); an endpoint's may do without when it has the endpoint's own key.
            if case .string(let value)? = object["default"] {
                text = value
            } else if let endpointKey {
                guard case .string? = object[endpointKey] else {
                    throw .invalidParameter(
                        "Invalid parameter: JSON must contain an entry for 'default' or '\(endpointKey)'.")
                }
                text = nil
            } else {
                throw .invalidParameter("Invalid parameter: Message Structure - No default entry in JSON message body")
            }
            members = object
        default:
            throw .invalidParameter("Invalid parameter: MessageStructure Reason: must be json")
        }
        // The default text is the body: what a recipient without its platform's key shows.
        payload.body = text
        var overrides: [String: JSONValue] = [:]
        let production = try Self.apns(members, key: "APNS", default: text)
        let sandbox = try Self.apns(members, key: "APNS_SANDBOX", default: text)
        if let production { overrides["apns"] = .object(production) }
        if let sandbox, sandbox != production { overrides[NotificationPayload.apnsSandboxOverrides] = .object(sandbox) }
        var fcm: [String: JSONValue] = [:]
        if members["GCM"] != nil { fcm = try Self.fcm(try Self.object(members["GCM"], key: "GCM")) }
        // As SNS delivers it: nothing added (no Herald notification id).
        var data = fcm["data"]?.objectValue ?? [:]
        data["herald_id"] = .null
        fcm["data"] = .object(data)
        overrides["fcm"] = .object(fcm)
        payload.overrides = overrides
        try apply(attributes, now: now)
    }

    /// The APNs overrides of the recipients of `key` (`APNS` or `APNS_SANDBOX`): its payload as
    /// given, or, when the message has no such key, the default text as SNS sends it — a string
    /// alert and nothing else. `nil` when there is neither: only an endpoint of another platform
    /// receives such a message.
    private static func apns(
        _ members: [String: JSONValue], key: String, default text: String?
    ) throws(SNSAPIFailure) -> [String: JSONValue]? {
        var overrides: [String: JSONValue]
        if let value = members[key] {
            overrides = try apns(try object(value, key: key))
        } else if let text {
            overrides = ["aps": .object(["alert": .string(text)])]
        } else {
            return nil
        }
        overrides["herald"] = .null
        return overrides
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

    /// An APNs payload as `apns` overrides: the default text (the body) never shows beside the
    /// payload's own alert, and an `aps` without an alert but with `content-available` is a
    /// background push.
    private static func apns(_ object: [String: JSONValue]) throws(SNSAPIFailure) -> [String: JSONValue] {
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
            aps["alert"] = .null
            if aps["content-available"] != nil, aps["sound"] == nil, aps["badge"] == nil {
                overrides["headers"] = .object(["apns-push-type": .string("background"), "apns-priority": .string("5")])
            }
        case .object(var alert)?:
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
            overrides = try SNSLegacyGCM(object).overrides
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
        var headers: [String: JSONValue] = [:]
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
        guard !headers.isEmpty else { return }
        // The attributes apply to both environments, over the headers a payload implies.
        for key in ["apns", NotificationPayload.apnsSandboxOverrides] {
            guard var apns = payload.overrides[key]?.objectValue else { continue }
            apns["headers"] = .object((apns["headers"]?.objectValue ?? [:]).merging(headers) { $1 })
            payload.overrides[key] = .object(apns)
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

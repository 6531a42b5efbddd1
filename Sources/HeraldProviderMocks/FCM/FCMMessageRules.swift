import HeraldCore

/// A `projects.messages.send` request body that passed FCM's checks.
struct FCMSend: Sendable {
    var message: [String: JSONValue]
    var validateOnly: Bool
    var token: String?
    var topic: String?
    var condition: String?
}

/// FCM HTTP v1's checks of a `projects.messages.send` body (`{"message": {...}, "validate_only": bool}`), as pure
/// functions. Messages are worded as Google's JSON transcoder and FCM word them; the status and FCM error code are
/// what clients act on.
enum FCMMessageRules {
    static let requestFields: Set = ["message", "validate_only", "validateOnly"]
    static let messageFields: Set = [
        "name", "data", "notification", "android", "webpush", "apns", "fcm_options", "fcmOptions", "token", "topic",
        "condition",
    ]
    static let targetFields = ["token", "topic", "condition"]

    /// FCM's limit for a message; messages to topics get half.
    static let maximumMessageSize = 4096
    static let maximumTopicMessageSize = 2048
    /// The longest Android TTL FCM accepts: four weeks.
    static let maximumTTLSeconds = 2_419_200.0

    static func validate(_ body: [UInt8]) -> Result<FCMSend, GoogleRPCError> {
        guard let json = try? JSONValue.parse(body), let request = json.objectValue else {
            let message = "Invalid JSON payload received. Expected an object."
            return .failure(
                GoogleRPCError(
                    code: 400, status: "INVALID_ARGUMENT", message: message,
                    details: [.badRequest([.init(field: "", description: message)])]))
        }
        if let unknown = request.keys.sorted().first(where: { !requestFields.contains($0) }) {
            return .failure(.unknownName(unknown, at: nil))
        }
        var validateOnly = false
        if let value = request["validate_only"] ?? request["validateOnly"] {
            guard case .bool(let flag) = value else {
                return .failure(.invalidValue(at: "validate_only", type: "TYPE_BOOL", value: render(value)))
            }
            validateOnly = flag
        }
        let message: [String: JSONValue]
        switch request["message"] {
        case nil: message = [:]
        case .object(let members)?: message = members
        case let other?:
            return .failure(
                .invalidValue(
                    at: "message", type: "type.googleapis.com/google.firebase.fcm.v1.Message", value: render(other)))
        }
        if let unknown = message.keys.sorted().first(where: { !messageFields.contains($0) }) {
            return .failure(.unknownName(unknown, at: "message"))
        }

        var send = FCMSend(message: message, validateOnly: validateOnly)
        if let error = checkTarget(message, into: &send) { return .failure(error) }
        if let error = checkStringMap(message["data"], at: "message.data") { return .failure(error) }
        if let error = checkDataKeys(message["data"]) { return .failure(error) }
        if let error = checkNotification(message["notification"]) { return .failure(error) }
        if let error = checkAndroid(message["android"]) { return .failure(error) }
        if let error = checkAPNs(message["apns"]) { return .failure(error) }
        if let error = checkWebpush(message["webpush"]) { return .failure(error) }

        let limit = send.topic == nil ? maximumMessageSize : maximumTopicMessageSize
        if JSONValue.object(message).serialized().count > limit {
            return .failure(.invalidArgument("Message is too big"))
        }
        return .success(send)
    }

    private static func checkTarget(_ message: [String: JSONValue], into send: inout FCMSend) -> GoogleRPCError? {
        let present = targetFields.filter { message[$0] != nil }
        guard let target = present.first else {
            return .invalidArgument("Recipient of the message is not set.", field: "message")
        }
        if present.count > 1 {
            let text =
                "Invalid value at 'message' (oneof), oneof field 'target' is already set. Cannot set '\(present[1])'"
            return GoogleRPCError(
                code: 400, status: "INVALID_ARGUMENT", message: text,
                details: [.badRequest([.init(field: "message", description: text)])])
        }
        guard case .string(let value) = message[target] else {
            return .invalidValue(at: "message.\(target)", type: "TYPE_STRING", value: render(message[target]!))
        }
        switch target {
        case "token":
            guard isRegistrationToken(value) else {
                return .invalidArgument("The registration token is not a valid FCM registration token")
            }
            send.token = value
        case "topic":
            let name = value.hasPrefix("/topics/") ? String(value.dropFirst("/topics/".count)) : value
            guard isTopicName(name) else {
                return .invalidArgument("Invalid topic name: '\(value)'", field: "message.topic")
            }
            send.topic = name
        default:
            guard !value.isEmpty else {
                return .invalidArgument("Invalid condition expression", field: "message.condition")
            }
            send.condition = value
        }
        return nil
    }

    /// A `map<string, string>` field: an object whose values are all strings. Google's transcoder names the
    /// offending entry by position; the mock counts positions in sorted key order, as it keeps no key order.
    static func checkStringMap(_ value: JSONValue?, at field: String) -> GoogleRPCError? {
        guard let value else { return nil }
        guard case .object(let entries) = value else {
            return .invalidValue(at: field, type: "map<string, string>", value: render(value))
        }
        for (index, key) in entries.keys.sorted().enumerated() {
            guard case .string = entries[key] else {
                return .invalidValue(at: "\(field)[\(index)].value", type: "TYPE_STRING", value: render(entries[key]!))
            }
        }
        return nil
    }

    /// Keys FCM keeps for itself ("Invalid data key" in FCM's error code reference).
    private static func checkDataKeys(_ value: JSONValue?) -> GoogleRPCError? {
        guard case .object(let entries)? = value else { return nil }
        if let key = entries.keys.sorted().first(where: { $0 == "from" || $0 == "gcm" || $0.hasPrefix("google") }) {
            return .invalidArgument("Invalid data payload key: \(key)", field: "message.data")
        }
        return nil
    }

    private static func checkNotification(_ value: JSONValue?) -> GoogleRPCError? {
        guard let value else { return nil }
        guard case .object(let fields) = value else {
            return .invalidValue(
                at: "message.notification", type: "type.googleapis.com/google.firebase.fcm.v1.Notification",
                value: render(value))
        }
        return checkStrings(fields, names: ["title", "body", "image"], at: "message.notification")
    }

    private static func checkAPNs(_ value: JSONValue?) -> GoogleRPCError? {
        guard let value else { return nil }
        guard case .object(let fields) = value else {
            return .invalidValue(
                at: "message.apns", type: "type.googleapis.com/google.firebase.fcm.v1.ApnsConfig", value: render(value))
        }
        if let error = checkStringMap(fields["headers"], at: "message.apns.headers") { return error }
        if let payload = fields["payload"], payload.objectValue == nil {
            return .invalidValue(at: "message.apns.payload", type: "google.protobuf.Struct", value: render(payload))
        }
        return nil
    }

    private static func checkWebpush(_ value: JSONValue?) -> GoogleRPCError? {
        guard let value else { return nil }
        guard case .object(let fields) = value else {
            return .invalidValue(
                at: "message.webpush", type: "type.googleapis.com/google.firebase.fcm.v1.WebpushConfig",
                value: render(value))
        }
        return checkStringMap(fields["headers"], at: "message.webpush.headers")
            ?? checkStringMap(fields["data"], at: "message.webpush.data")
    }

    static func checkStrings(
        _ fields: [String: JSONValue], names: [String], at parent: String
    ) -> GoogleRPCError? {
        for name in names {
            guard let value = fields[name] else { continue }
            guard case .string = value else {
                return .invalidValue(at: "\(parent).\(name)", type: "TYPE_STRING", value: render(value))
            }
        }
        return nil
    }

    /// A `google.protobuf.Duration` in JSON: seconds with up to nine fractional digits and an `s` suffix.
    static func durationSeconds(_ text: String) -> Double? {
        guard text.hasSuffix("s") else { return nil }
        let number = text.dropLast()
        let parts = number.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let isDigits = { (part: Substring) in !part.isEmpty && part.utf8.allSatisfy { (0x30...0x39).contains($0) } }
        guard isDigits(parts[0]), parts.count == 1 || (isDigits(parts[1]) && parts[1].count <= 9) else { return nil }
        return Double(number)
    }

    /// Registration tokens are opaque, but always non-empty runs of URL-safe characters and `:`.
    static func isRegistrationToken(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.count <= 4096
            && token.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                    || "-_:.".unicodeScalars.contains($0)
            }
    }

    /// Topic names: `[a-zA-Z0-9-_.~%]+` (FCM's documented pattern).
    static func isTopicName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 900
            && name.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                    || "-_.~%".unicodeScalars.contains($0)
            }
    }

    static func render(_ value: JSONValue) -> String {
        String(decoding: value.serialized(), as: UTF8.self)
    }
}

import Foundation

/// A request to start a Live Activity or to update or end one (`POST /v1/live-activities`,
/// `POST /v1/live-activities/{id}/updates`), checked field by field; the engine turns it into a
/// notification.
public struct LiveActivityRequest: Sendable, Equatable {
    /// Who the start goes to (an update's audience is the activity's devices).
    public var target: NotificationTarget?
    /// The activity id the caller chose for a start (default: Herald's).
    public var activityID: String?
    public var event: LiveActivityPush.Event
    public var attributesType: String?
    public var attributes: [String: JSONValue]?
    public var contentState: [String: JSONValue]?
    /// The alert's title, body and sound.
    public var title: String?
    public var body: String?
    public var sound: String?
    public var staleDate: Int?
    public var dismissalDate: Int?
    public var relevanceScore: Double?
    public var inputPushToken: Bool
    /// Herald's id of the broadcast channel the started activity subscribes to.
    public var inputPushChannel: String?
    /// Asked for APNs priority 10 (within the activity's budget).
    public var highPriority: Bool
    /// Seconds the push is worth sending (APNs `apns-expiration`, FCM `ttl`).
    public var expirationInterval: Int?
    public var idempotencyKey: String?

    /// Ids (Herald's, or the app's own) are at most this long, of `A-Z a-z 0-9 . _ -`.
    public static let maxIDLength = 64
    /// Attribute type names are at most this long.
    public static let maxTypeLength = 128

    /// Reads a start (`start: true`) or an update body.
    /// - Throws: `HeraldError` naming the field at fault.
    public init(parsing value: JSONValue, start: Bool, idempotencyKeyHeader: String? = nil) throws(HeraldError) {
        let reader = try JSONObjectReader(value)
        let common: Set<String> = [
            "content_state", "alert", "stale_date", "dismissal_date", "relevance_score", "priority",
            "expiration_interval", "idempotency_key",
        ]
        let startOnly: Set<String> = [
            "target", "id", "attributes_type", "attributes", "input_push_token", "input_push_channel",
        ]
        try reader.rejectUnknown(allowed: common.union(start ? startOnly : ["event"]))
        if start {
            event = .start
            guard let targetValue = reader.members["target"], targetValue != .null else {
                throw .missingField("target")
            }
            let target = try NotificationTarget(parsing: targetValue)
            if case .tokens = target.audience {
                throw .invalidValue(
                    "target.tokens", code: "invalid_target",
                    "A Live Activity starts on registered installations: their push-to-start tokens are Herald's.")
            }
            self.target = target
            activityID = try Self.identifier(reader, "id")
            guard let type = try reader.string("attributes_type", maxLength: Self.maxTypeLength) else {
                throw .missingField("attributes_type")
            }
            attributesType = type
            var attributes = try reader.object("attributes")?.members ?? [:]
            if attributes[LiveActivityPush.activityIDAttribute] != nil {
                throw .invalidValue(
                    "attributes.\(LiveActivityPush.activityIDAttribute)", code: "reserved_attribute",
                    "Herald sets '\(LiveActivityPush.activityIDAttribute)' to the activity's id.")
            }
            attributes.removeValue(forKey: LiveActivityPush.activityIDAttribute)
            self.attributes = attributes
            inputPushToken = try reader.bool("input_push_token") ?? true
            inputPushChannel = try Self.identifier(reader, "input_push_channel")
            if inputPushToken, inputPushChannel != nil, reader.members["input_push_token"] == .bool(true) {
                throw .invalidValue(
                    "input_push_channel", code: "conflicting_inputs",
                    "An activity takes updates through its own token or a channel, not both.")
            }
            if inputPushChannel != nil { inputPushToken = false }
        } else {
            target = nil
            activityID = nil
            attributesType = nil
            attributes = nil
            inputPushToken = false
            inputPushChannel = nil
            guard let event = try reader.enumeration("event", as: LiveActivityPush.Event.self) else {
                throw .missingField("event")
            }
            guard event != .start else {
                throw .invalidValue("event", "An update's event is 'update' or 'end'; POST /v1/live-activities starts.")
            }
            self.event = event
        }
        contentState = try reader.object("content_state")?.members
        if contentState == nil, event != .end { throw .missingField("content_state") }
        if let alert = try reader.object("alert") {
            try alert.rejectUnknown(allowed: ["title", "body", "sound"])
            title = try alert.string("title", maxLength: 1000)
            body = try alert.string("body", maxLength: 4000)
            sound = try alert.string("sound", maxLength: 256)
        }
        if start, title == nil, body == nil {
            throw .invalidValue(
                "alert", code: "missing_alert", "Starting a Live Activity needs an alert (title or body).")
        }
        staleDate = try reader.integer("stale_date", in: 0...Self.maxDate)
        dismissalDate = try reader.integer("dismissal_date", in: 0...Self.maxDate)
        relevanceScore = try reader.number("relevance_score")
        if let score = relevanceScore, !score.isFinite || score < 0 {
            throw .invalidValue("relevance_score", "Field 'relevance_score' must be a number of at least 0.")
        }
        highPriority = try reader.enumeration("priority", as: NotificationPayload.Priority.self) == .high
        expirationInterval = try reader.integer("expiration_interval", in: 1...SendRequest.maxExpirationInterval)
        idempotencyKey = try SendRequest.idempotencyKey(reader, header: idempotencyKeyHeader)
    }

    /// Dates are seconds since 1970, before the year 10000.
    public static let maxDate = 253_402_300_799

    /// An id member: 1 to ``maxIDLength`` of `A-Z a-z 0-9 . _ -`.
    public static func identifier(_ reader: JSONObjectReader, _ key: String) throws(HeraldError) -> String? {
        guard let id = try reader.string(key, maxLength: maxIDLength) else { return nil }
        try validateID(id, field: reader.name(key))
        return id
    }

    /// Checks an activity or channel id (also one in a path).
    /// - Throws: `HeraldError` naming `field`.
    public static func validateID(_ id: String, field: String) throws(HeraldError) {
        let allowed = id.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == 0x2D || byte == 0x2E || byte == 0x5F
        }
        guard allowed, (1...maxIDLength).contains(id.utf8.count), id != "channels" else {
            throw .invalidValue(
                field, code: "invalid_id", "Ids are 1 to \(maxIDLength) of A-Z a-z 0-9 . _ - (and not 'channels').")
        }
    }

    /// The notification's payload: the alert (a Live Activity's only payload fields).
    public var payload: NotificationPayload {
        NotificationPayload(title: title, body: body, sound: sound, priority: highPriority ? .high : .normal)
    }
}

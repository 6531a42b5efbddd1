import Foundation

/// What a Live Activity notification carries besides its payload (docs/live-activities.md): which
/// activity, which event, the revision the store assigned it, and the ActivityKit fields APNs reads
/// (`attributes-type`, `attributes`, `content-state`, `stale-date`, `dismissal-date`,
/// `relevance-score`, `input-push-token`, `input-push-channel`). A notification with one is a Live
/// Activity push: the engine sends it to each installation's activity or push-to-start token instead
/// of its device token, in revision order, and a provider renders it as its Live Activity message.
public struct LiveActivityPush: Sendable, Equatable {
    /// What the push does to the activity (ActivityKit's `event`).
    public enum Event: String, Sendable, CaseIterable {
        case start, update, end
    }

    /// Herald's id of the activity (the `herald-activity-id` attribute of one Herald started).
    public var activityID: String
    public var event: Event
    /// The store-assigned revision: increasing per activity; a device is never sent a lower one
    /// after a higher one.
    public var revision: Int
    /// The ActivityKit `timestamp` (seconds since 1970), non-decreasing with the revision.
    public var timestamp: Int
    /// The Swift type name of the activity's attributes (`attributes-type`).
    public var attributesType: String
    /// The activity's static attributes (`start` only), Herald's id among them.
    public var attributes: [String: JSONValue]?
    /// The dynamic content (`content-state`).
    public var contentState: [String: JSONValue]?
    /// When the system marks the activity outdated (`stale-date`, seconds since 1970).
    public var staleDate: Int?
    /// When an ended activity leaves the Lock Screen (`dismissal-date`, seconds since 1970).
    public var dismissalDate: Int?
    /// Which of several activities the system features (`relevance-score`).
    public var relevanceScore: Double?
    /// Ask the started activity for its push token (`input-push-token: 1`, `start` only).
    public var inputPushToken: Bool
    /// The broadcast channel the started activity subscribes to (`input-push-channel`, its APNs id).
    public var inputPushChannel: String?
    /// Whether the push goes at APNs priority 10: asked for, and within the activity's hourly budget.
    public var highPriority: Bool
    /// The broadcast channel the push goes to instead of devices (its APNs channel id), if any.
    public var channel: String?

    /// The attribute key that carries Herald's activity id in an activity Herald starts, so the app
    /// can report the started activity's push token under that id.
    public static let activityIDAttribute = "herald-activity-id"

    /// Creates a Live Activity push.
    public init(
        activityID: String, event: Event, revision: Int = 0, timestamp: Int = 0, attributesType: String,
        attributes: [String: JSONValue]? = nil, contentState: [String: JSONValue]? = nil, staleDate: Int? = nil,
        dismissalDate: Int? = nil, relevanceScore: Double? = nil, inputPushToken: Bool = false,
        inputPushChannel: String? = nil, highPriority: Bool = false, channel: String? = nil
    ) {
        self.activityID = activityID
        self.event = event
        self.revision = revision
        self.timestamp = timestamp
        self.attributesType = attributesType
        self.attributes = attributes
        self.contentState = contentState
        self.staleDate = staleDate
        self.dismissalDate = dismissalDate
        self.relevanceScore = relevanceScore
        self.inputPushToken = inputPushToken
        self.inputPushChannel = inputPushChannel
        self.highPriority = highPriority
        self.channel = channel
    }

    /// The push as stored in the notification's spec.
    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "activity_id": .string(activityID), "event": .string(event.rawValue),
            "revision": .number(JSONNumber(revision)), "timestamp": .number(JSONNumber(timestamp)),
            "attributes_type": .string(attributesType),
            "high_priority": .bool(highPriority),
        ]
        object["attributes"] = attributes.map(JSONValue.object)
        object["content_state"] = contentState.map(JSONValue.object)
        object["stale_date"] = staleDate.map { .number(JSONNumber($0)) }
        object["dismissal_date"] = dismissalDate.map { .number(JSONNumber($0)) }
        object["relevance_score"] = relevanceScore.map { .number(JSONNumber($0)) }
        if inputPushToken { object["input_push_token"] = .bool(true) }
        object["input_push_channel"] = inputPushChannel.map(JSONValue.string)
        object["channel"] = channel.map(JSONValue.string)
        return .object(object)
    }

    /// Reads a stored push (``json``).
    /// - Throws: `HeraldError` when it is unreadable.
    public init(stored value: JSONValue) throws(HeraldError) {
        let reader = try JSONObjectReader(value, path: "live_activity")
        guard let event = try reader.enumeration("event", as: Event.self) else { throw .missingField("event") }
        self.init(
            activityID: try reader.requiredString("activity_id"), event: event,
            revision: try reader.integer("revision", in: 0...Int.max) ?? 0,
            timestamp: try reader.integer("timestamp", in: 0...Int.max) ?? 0,
            attributesType: try reader.requiredString("attributes_type"),
            attributes: try reader.object("attributes")?.members,
            contentState: try reader.object("content_state")?.members,
            staleDate: try reader.integer("stale_date", in: 0...Int.max),
            dismissalDate: try reader.integer("dismissal_date", in: 0...Int.max),
            relevanceScore: try reader.number("relevance_score"),
            inputPushToken: try reader.bool("input_push_token") ?? false,
            inputPushChannel: try reader.string("input_push_channel"),
            highPriority: try reader.bool("high_priority") ?? false, channel: try reader.string("channel"))
    }

    /// The collapse key and notification tag of an activity's messages to Android and the direct channel.
    public static func tag(_ activityID: String) -> String { "herald-la-" + activityID }

    /// What the direct channel's event carries (`data.live_activity`): the data message's members
    /// with their JSON types.
    public var structured: JSONValue {
        var object: [String: JSONValue] = [
            "id": .string(activityID), "event": .string(event.rawValue), "revision": .number(JSONNumber(revision)),
            "timestamp": .number(JSONNumber(timestamp)), "attributes_type": .string(attributesType),
        ]
        object["content_state"] = contentState.map(JSONValue.object)
        object["attributes"] = attributes.map(JSONValue.object)
        object["stale_date"] = staleDate.map { .number(JSONNumber($0)) }
        object["dismissal_date"] = dismissalDate.map { .number(JSONNumber($0)) }
        object["relevance_score"] = relevanceScore.map { .number(JSONNumber($0)) }
        return .object(object)
    }

    /// The members a device's app reads from a data message (FCM's `data`, the direct channel's
    /// event): every value a string, as FCM's `data` requires.
    public var dataMessage: [String: String] {
        var data: [String: String] = [
            "herald_live_activity": activityID, "event": event.rawValue, "revision": String(revision),
            "timestamp": String(timestamp),
            "attributes_type": attributesType,
        ]
        data["content_state"] = contentState.map { String(decoding: JSONValue.object($0).serialized(), as: UTF8.self) }
        data["attributes"] = attributes.map { String(decoding: JSONValue.object($0).serialized(), as: UTF8.self) }
        data["stale_date"] = staleDate.map(String.init)
        data["dismissal_date"] = dismissalDate.map(String.init)
        data["relevance_score"] = relevanceScore.map { String($0) }
        return data
    }
}

import Foundation
import HeraldCore

/// The JSON body of an APNs request: the `aps` dictionary ("Generating a remote notification")
/// and the app's custom keys beside it.
public struct APNsPayload: Sendable, Equatable {
    /// `aps.alert`: a plain string, or the dictionary form.
    public enum Alert: Sendable, Equatable {
        case text(String)
        case fields(AlertFields)
    }

    /// The dictionary form of `aps.alert`.
    public struct AlertFields: Sendable, Equatable {
        public var title: String?
        public var subtitle: String?
        public var body: String?
        public var launchImage: String?
        public var titleLocKey: String?
        public var titleLocArgs: [String]?
        public var subtitleLocKey: String?
        public var subtitleLocArgs: [String]?
        public var locKey: String?
        public var locArgs: [String]?

        /// Creates alert fields.
        public init(
            title: String? = nil, subtitle: String? = nil, body: String? = nil, launchImage: String? = nil,
            titleLocKey: String? = nil, titleLocArgs: [String]? = nil, subtitleLocKey: String? = nil,
            subtitleLocArgs: [String]? = nil, locKey: String? = nil, locArgs: [String]? = nil
        ) {
            self.title = title
            self.subtitle = subtitle
            self.body = body
            self.launchImage = launchImage
            self.titleLocKey = titleLocKey
            self.titleLocArgs = titleLocArgs
            self.subtitleLocKey = subtitleLocKey
            self.subtitleLocArgs = subtitleLocArgs
            self.locKey = locKey
            self.locArgs = locArgs
        }
    }

    /// `aps.sound`: a sound file name, or the critical-alert dictionary.
    public enum Sound: Sendable, Equatable {
        case named(String)
        case critical(name: String, volume: Double)
    }

    public var alert: Alert?
    public var badge: Int?
    public var sound: Sound?
    public var threadID: String?
    public var category: String?
    public var contentAvailable: Bool
    public var mutableContent: Bool
    public var targetContentID: String?
    public var interruptionLevel: InterruptionLevel?
    /// 0 to 1.
    public var relevanceScore: Double?
    public var filterCriteria: String?
    /// Live Activity keys.
    public var timestamp: Date?
    public var event: String?
    public var contentState: [String: JSONValue]?
    public var staleDate: Date?
    public var dismissalDate: Date?
    public var attributesType: String?
    public var attributes: [String: JSONValue]?
    /// Keys beside `aps`.
    public var custom: [String: JSONValue]

    /// Creates a payload.
    public init(
        alert: Alert? = nil, badge: Int? = nil, sound: Sound? = nil, threadID: String? = nil, category: String? = nil,
        contentAvailable: Bool = false, mutableContent: Bool = false, targetContentID: String? = nil,
        interruptionLevel: InterruptionLevel? = nil, relevanceScore: Double? = nil, filterCriteria: String? = nil,
        timestamp: Date? = nil, event: String? = nil, contentState: [String: JSONValue]? = nil,
        staleDate: Date? = nil, dismissalDate: Date? = nil, attributesType: String? = nil,
        attributes: [String: JSONValue]? = nil, custom: [String: JSONValue] = [:]
    ) {
        self.alert = alert
        self.badge = badge
        self.sound = sound
        self.threadID = threadID
        self.category = category
        self.contentAvailable = contentAvailable
        self.mutableContent = mutableContent
        self.targetContentID = targetContentID
        self.interruptionLevel = interruptionLevel
        self.relevanceScore = relevanceScore
        self.filterCriteria = filterCriteria
        self.timestamp = timestamp
        self.event = event
        self.contentState = contentState
        self.staleDate = staleDate
        self.dismissalDate = dismissalDate
        self.attributesType = attributesType
        self.attributes = attributes
        self.custom = custom
    }

    /// The payload as a JSON value; `aps` wins over a custom key of the same name.
    public var json: JSONValue {
        var aps: [String: JSONValue] = [:]
        switch alert {
        case .text(let text)?: aps["alert"] = .string(text)
        case .fields(let fields)?: aps["alert"] = .object(fields.json)
        case nil: break
        }
        if let badge { aps["badge"] = .number(JSONNumber(badge)) }
        switch sound {
        case .named(let name)?: aps["sound"] = .string(name)
        case .critical(let name, let volume)?:
            aps["sound"] = .object([
                "critical": .number(1), "name": .string(name), "volume": .number(JSONNumber(volume)),
            ])
        case nil: break
        }
        if let threadID { aps["thread-id"] = .string(threadID) }
        if let category { aps["category"] = .string(category) }
        if contentAvailable { aps["content-available"] = .number(1) }
        if mutableContent { aps["mutable-content"] = .number(1) }
        if let targetContentID { aps["target-content-id"] = .string(targetContentID) }
        if let interruptionLevel { aps["interruption-level"] = .string(interruptionLevel.rawValue) }
        if let relevanceScore { aps["relevance-score"] = .number(JSONNumber(relevanceScore)) }
        if let filterCriteria { aps["filter-criteria"] = .string(filterCriteria) }
        if let timestamp { aps["timestamp"] = .number(JSONNumber(timestamp.timeIntervalSince1970.rounded(.down))) }
        if let event { aps["event"] = .string(event) }
        if let contentState { aps["content-state"] = .object(contentState) }
        if let staleDate { aps["stale-date"] = .number(JSONNumber(staleDate.timeIntervalSince1970.rounded(.down))) }
        if let dismissalDate {
            aps["dismissal-date"] = .number(JSONNumber(dismissalDate.timeIntervalSince1970.rounded(.down)))
        }
        if let attributesType { aps["attributes-type"] = .string(attributesType) }
        if let attributes { aps["attributes"] = .object(attributes) }
        var root = custom
        root["aps"] = .object(aps)
        return .object(root)
    }

    /// The payload bytes as sent.
    public var bytes: [UInt8] { json.serialized() }
}

extension APNsPayload.AlertFields {
    var json: [String: JSONValue] {
        var object: [String: JSONValue] = [:]
        func set(_ key: String, _ value: String?) { if let value { object[key] = .string(value) } }
        func set(_ key: String, _ values: [String]?) {
            if let values { object[key] = .array(values.map(JSONValue.string)) }
        }
        set("title", title)
        set("subtitle", subtitle)
        set("body", body)
        set("launch-image", launchImage)
        set("title-loc-key", titleLocKey)
        set("title-loc-args", titleLocArgs)
        set("subtitle-loc-key", subtitleLocKey)
        set("subtitle-loc-args", subtitleLocArgs)
        set("loc-key", locKey)
        set("loc-args", locArgs)
        return object
    }
}

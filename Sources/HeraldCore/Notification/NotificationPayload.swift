/// The unified content of a notification, rendered per provider by the engine's transports.
public struct NotificationPayload: Sendable, Equatable {
    /// A badge to set, or the device's stored badge plus one.
    public enum Badge: Sendable, Equatable {
        case set(Int)
        case increment
    }

    /// Delivery priority: `high` wakes the device now, `normal` lets the provider save power.
    public enum Priority: String, Sendable, CaseIterable {
        case high, normal
    }

    public var title: String?
    public var subtitle: String?
    public var body: String?
    public var badge: Badge?
    public var sound: String?
    public var category: String?
    public var threadID: String?
    public var image: String?
    public var deepLink: String?
    /// Custom data delivered beside the alert.
    public var data: [String: JSONValue]
    public var contentAvailable: Bool
    public var mutableContent: Bool
    public var interruptionLevel: InterruptionLevel?
    public var priority: Priority
    public var collapseID: String?
    /// Seconds the provider keeps the notification for an offline device.
    public var ttl: Int?
    /// Raw provider fields merged over the rendered ones: `apns` (`aps`, `headers`, other payload
    /// keys), `apns_sandbox` (the same, for APNs sandbox recipients instead of `apns`: SNS's
    /// `APNS_SANDBOX`), `fcm` (`android`, `apns`, `webpush`, `fcm_options`, `data`, `notification`)
    /// and `webpush` (members of the JSON a service worker receives; `null` removes one).
    public var overrides: [String: JSONValue]
    /// The words in other languages, by BCP 47 tag: each device gets the best match for its locale
    /// (``LocaleMatcher``), else the default title, subtitle and body (docs/content.md).
    public var localizations: [String: LocalizedText] = [:]

    /// Creates a payload.
    public init(
        title: String? = nil, subtitle: String? = nil, body: String? = nil, badge: Badge? = nil, sound: String? = nil,
        category: String? = nil, threadID: String? = nil, image: String? = nil, deepLink: String? = nil,
        data: [String: JSONValue] = [:], contentAvailable: Bool = false, mutableContent: Bool = false,
        interruptionLevel: InterruptionLevel? = nil, priority: Priority = .high, collapseID: String? = nil,
        ttl: Int? = nil, overrides: [String: JSONValue] = [:]
    ) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.badge = badge
        self.sound = sound
        self.category = category
        self.threadID = threadID
        self.image = image
        self.deepLink = deepLink
        self.data = data
        self.contentAvailable = contentAvailable
        self.mutableContent = mutableContent
        self.interruptionLevel = interruptionLevel
        self.priority = priority
        self.collapseID = collapseID
        self.ttl = ttl
        self.overrides = overrides
    }

    /// The overrides key whose APNs fields replace `apns` for sandbox recipients.
    public static let apnsSandboxOverrides = "apns_sandbox"

    /// The APNs overrides of a recipient in `environment`: `apns_sandbox` for a sandbox one when
    /// given, else `apns`.
    public func apnsOverrides(for environment: PushEnvironment) -> [String: JSONValue] {
        if environment == .sandbox, let sandbox = overrides[Self.apnsSandboxOverrides]?.objectValue { return sandbox }
        return overrides["apns"]?.objectValue ?? [:]
    }

    static let fields: Set<String> = [
        "title", "subtitle", "body", "badge", "sound", "category", "thread_id", "image", "deep_link", "data",
        "content_available", "mutable_content", "interruption_level", "priority", "collapse_id", "ttl", "overrides",
        "localizations",
    ]

    /// Reads the `payload` object of a send request.
    /// - Throws: `HeraldError` naming the field at fault.
    /// - Parameter requiringContent: Whether an empty payload is refused (a Live Activity's may be
    ///   empty: its content is its content state).
    public init(parsing value: JSONValue, field: String = "payload", requiringContent: Bool = true) throws(HeraldError)
    {
        let reader = try JSONObjectReader(value, path: field)
        try reader.rejectUnknown(allowed: Self.fields)
        self.init()
        title = try reader.string("title", maxLength: 1000)
        subtitle = try reader.string("subtitle", maxLength: 1000)
        body = try reader.string("body", maxLength: 4000)
        switch reader.members["badge"] {
        case nil, .null?: badge = nil
        case .string("increment")?: badge = .increment
        case .number?: badge = .set(try reader.integer("badge", in: 0...999_999) ?? 0)
        default:
            throw .invalidValue(
                reader.name("badge"), "Field '\(reader.name("badge"))' must be a number or \"increment\".")
        }
        sound = try reader.string("sound", maxLength: 256)
        category = try reader.string("category", maxLength: 256)
        threadID = try reader.string("thread_id", maxLength: 256)
        image = try reader.string("image", maxLength: 2048)
        deepLink = try reader.string("deep_link", maxLength: 2048)
        if let data = try reader.object("data") { self.data = data.members }
        contentAvailable = try reader.bool("content_available") ?? false
        mutableContent = try reader.bool("mutable_content") ?? false
        interruptionLevel = try reader.enumeration("interruption_level", as: InterruptionLevel.self)
        priority = try reader.enumeration("priority", as: Priority.self) ?? .high
        collapseID = try reader.string("collapse_id", maxLength: 64)
        ttl = try reader.integer("ttl", in: 0...2_419_200)
        if let overrides = try reader.object("overrides") {
            let providers = ["apns", Self.apnsSandboxOverrides, "fcm", "webpush"]
            try overrides.rejectUnknown(allowed: Set(providers))
            for key in providers {
                if let provider = try overrides.object(key) { self.overrides[key] = .object(provider.members) }
            }
        }
        if let localizations = try reader.object("localizations") {
            self.localizations = try LocalizedText.parse(localizations)
        }
        if requiringContent, title == nil, subtitle == nil, body == nil, !contentAvailable, self.data.isEmpty,
            badge == nil,
            self.overrides.isEmpty
        {
            throw .invalidValue(
                field, code: "empty_payload",
                "The payload needs an alert (title, subtitle or body), data, a badge, content_available or overrides.")
        }
    }

    /// The payload as the send API writes it.
    public var json: JSONValue {
        var object: [String: JSONValue] = [:]
        object["title"] = title.map(JSONValue.string)
        object["subtitle"] = subtitle.map(JSONValue.string)
        object["body"] = body.map(JSONValue.string)
        switch badge {
        case .set(let value)?: object["badge"] = .number(JSONNumber(value))
        case .increment?: object["badge"] = .string("increment")
        case nil: break
        }
        object["sound"] = sound.map(JSONValue.string)
        object["category"] = category.map(JSONValue.string)
        object["thread_id"] = threadID.map(JSONValue.string)
        object["image"] = image.map(JSONValue.string)
        object["deep_link"] = deepLink.map(JSONValue.string)
        if !data.isEmpty { object["data"] = .object(data) }
        if contentAvailable { object["content_available"] = .bool(true) }
        if mutableContent { object["mutable_content"] = .bool(true) }
        object["interruption_level"] = interruptionLevel.map { .string($0.rawValue) }
        object["priority"] = .string(priority.rawValue)
        object["collapse_id"] = collapseID.map(JSONValue.string)
        object["ttl"] = ttl.map { .number(JSONNumber($0)) }
        if !overrides.isEmpty { object["overrides"] = .object(overrides) }
        if !localizations.isEmpty { object["localizations"] = .object(localizations.mapValues(\.json)) }
        return .object(object)
    }
}

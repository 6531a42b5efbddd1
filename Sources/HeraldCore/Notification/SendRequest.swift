import Foundation

/// What a sender asks for, before the engine stamps and stores it: the engine's one input. The
/// native route decodes it from `POST /v1/notifications` (``init(parsing:idempotencyKeyHeader:)``);
/// a dialect builds it directly from its own request.
public struct SendRequest: Sendable, Equatable {
    /// When the notification stops being worth sending.
    public enum Expiration: Sendable, Equatable {
        /// At this instant (`expiration_time`).
        case at(Date)
        /// This many seconds after the push time, or after acceptance without one (`expiration_interval`).
        case after(seconds: Int)
    }

    /// Who it goes to; a `where` query is already parsed.
    public var target: NotificationTarget
    /// What it says, with provider overrides.
    public var payload: NotificationPayload
    /// What sent it, matched against `enabled_sources` preferences.
    public var source: String?
    /// What kind of event it is, matched against `enabled_categories` preferences.
    public var category: String?
    /// When to send; nil sends now.
    public var pushTime: PushTime?
    public var expiration: Expiration?
    public var respectPreferences: Bool
    /// A repeat with the same key within the idempotency window returns the first notification.
    public var idempotencyKey: String?
    /// Resolve the audience and validate the payload, store and send nothing.
    public var dryRun: Bool
    /// Accept a request whose expiration has already passed, or falls before its push time, as
    /// LeanCloud's push API does: it is stored and expires unsent rather than being refused.
    public var acceptsExpired = false
    /// A payload larger than a device's cloud route carries is not refused: it waits for the
    /// device's direct channel, until it expires (a UnifiedPush message to a connected device takes
    /// the channel's 4,096 bytes). Only a dialect sets it.
    public var waitsForChannel = false
    /// The dialect that built it (its settings key: `home_assistant`, `unifiedpush`…), the `dialect`
    /// label of `herald_notifications_accepted_total`; nil for the native API.
    public var dialect: String?
    /// The target's installations as the caller has just read them (a dialect that looked its device
    /// up by token): when the notification is handed to this node's workers, they send to these
    /// without reading them again. Only used for an `installationIDs` target naming exactly these, of
    /// services it admits, without preferences; the caller passes valid installations only. Only a
    /// dialect sets it.
    public var knownAddresses: [InstallationAddress]?
    /// The Live Activity the notification starts, updates or ends (its revision is the store's).
    public var liveActivity: LiveActivityPush?
    /// The template its words come from (the API's `template`); the route resolves its revision
    /// before the engine accepts it.
    public var template: TemplateUse?
    /// Send it with a replacement key, so it can be changed or removed on the devices later.
    public var updatable = false
    /// A later revision of an updatable notification (the engine's, never a caller's): nil makes a
    /// new updatable notification revision 1 of itself.
    public var revision: NotificationRevision?

    /// Creates a send request.
    public init(
        target: NotificationTarget, payload: NotificationPayload, source: String? = nil, category: String? = nil,
        pushTime: PushTime? = nil, expiration: Expiration? = nil, respectPreferences: Bool = true,
        idempotencyKey: String? = nil, dryRun: Bool = false
    ) {
        self.target = target
        self.payload = payload
        self.source = source
        self.category = category
        self.pushTime = pushTime
        self.expiration = expiration
        self.respectPreferences = respectPreferences
        self.idempotencyKey = idempotencyKey
        self.dryRun = dryRun
    }

    /// The members of a native send body.
    public static let fields: Set<String> = [
        "target", "payload", "overrides", "source", "category", "push_time", "expiration_time", "expiration_interval",
        "respect_preferences", "dry_run", "idempotency_key", "template", "updatable",
    ]
    /// Sources and categories are at most this many characters.
    public static let maxLabelLength = 256
    /// Idempotency keys are at most this many characters.
    public static let maxIdempotencyKeyLength = 255
    /// The longest `expiration_interval`: a year, in seconds.
    public static let maxExpirationInterval = 31_536_000

    /// Decodes a native send body (`POST /v1/notifications`) with the `Idempotency-Key` header.
    /// Checks that need the clock (a push time within a year, an expiration after it) are the
    /// engine's, when it accepts the request.
    /// - Throws: `HeraldError` naming the field at fault.
    public init(parsing body: JSONValue, idempotencyKeyHeader headerKey: String? = nil) throws(HeraldError) {
        let reader = try JSONObjectReader(body)
        try reader.rejectUnknown(allowed: Self.fields)
        guard let targetValue = reader.members["target"], targetValue != .null else { throw .missingField("target") }
        let target = try NotificationTarget(parsing: targetValue)
        let template = try reader.members["template"].map { (value) throws(HeraldError) in
            try TemplateUse(parsing: value)
        }
        var payload: NotificationPayload
        if let payloadValue = reader.members["payload"], payloadValue != .null {
            payload = try NotificationPayload(parsing: payloadValue, requiringContent: template == nil)
        } else if template != nil {
            payload = NotificationPayload()
        } else {
            throw .missingField("payload")
        }
        if template != nil {
            // The template's words are the notification's: the payload carries the rest.
            for field in ["title", "subtitle", "body", "localizations"] where Self.payload(reader, has: field) {
                throw .invalidValue(
                    "payload.\(field)", code: "template_conflict",
                    "A send with a template takes its words from the template: leave out payload.\(field).")
            }
        }
        if let overrides = try reader.object("overrides") {
            guard payload.overrides.isEmpty else {
                throw .invalidValue(
                    "overrides", code: "duplicate_overrides",
                    "Give overrides at the top level or in the payload, not both.")
            }
            payload.overrides = try NotificationPayload(parsing: .object(["overrides": .object(overrides.members)]))
                .overrides
        }
        self.init(
            target: target, payload: payload, source: try reader.string("source", maxLength: Self.maxLabelLength),
            category: try reader.string("category", maxLength: Self.maxLabelLength),
            respectPreferences: try reader.bool("respect_preferences") ?? true,
            dryRun: try reader.bool("dry_run") ?? false)
        if let text = try reader.string("push_time") { pushTime = try PushTime(parsing: text, field: "push_time") }
        if reader.contains("expiration_time"), reader.contains("expiration_interval") {
            throw .invalidValue(
                "expiration_interval", code: "conflicting_expiration",
                "Give expiration_time or expiration_interval, not both.")
        }
        if let text = try reader.string("expiration_time") {
            guard case .instant(let date) = try PushTime(parsing: text, field: "expiration_time") else {
                throw .invalidValue(
                    "expiration_time", code: "invalid_expiration", "expiration_time needs a time zone offset.")
            }
            expiration = .at(date)
        }
        if let seconds = try reader.integer("expiration_interval", in: 1...Self.maxExpirationInterval) {
            expiration = .after(seconds: seconds)
        }
        idempotencyKey = try Self.idempotencyKey(reader, header: headerKey)
        self.template = template
        updatable = try reader.bool("updatable") ?? false
    }

    private static func payload(_ reader: JSONObjectReader, has field: String) -> Bool {
        guard case .object(let members)? = reader.members["payload"], let value = members[field] else { return false }
        return value != .null
    }

    /// A body's `idempotency_key` and the `Idempotency-Key` header, which must agree when both are given.
    /// - Throws: `HeraldError` naming the field at fault.
    public static func idempotencyKey(_ reader: JSONObjectReader, header: String?) throws(HeraldError) -> String? {
        let key = try reader.string("idempotency_key", maxLength: maxIdempotencyKeyLength)
        guard let header else { return key }
        guard !header.isEmpty, header.count <= maxIdempotencyKeyLength else {
            throw .invalidValue(
                "Idempotency-Key", code: "invalid_idempotency_key",
                "Idempotency-Key is 1 to \(maxIdempotencyKeyLength) characters.")
        }
        if let key, key != header {
            throw .invalidValue(
                "idempotency_key", code: "conflicting_idempotency_key",
                "The Idempotency-Key header and the body's idempotency_key differ.")
        }
        return header
    }
}

import Foundation

/// What the user of one installation chose to receive: which sources and categories, when to keep
/// quiet, whether to play sounds, and until when the installation is muted.
///
/// The dispatcher asks `decide(source:category:interruptionLevel:installationTimeZone:now:)` before
/// each delivery. The default value lets everything through.
///
/// JSON members (all optional; absent or null means the default):
/// - `enabled_sources` (array of strings or null): the sources delivered; null delivers every source.
/// - `enabled_categories` (array of strings or null): the categories delivered; null delivers all.
/// - `quiet_hours` (object or null): `{"start": "22:00", "end": "07:00", "timezone": "Europe/Paris",
///   "enabled": true}` (`enabled` defaults to true; false keeps the times without holding anything back).
/// - `quiet_hours_mode` (`"skip"` or `"defer"`, default `"skip"`): what quiet hours do to a notification.
/// - `sound_enabled` (boolean, default true).
/// - `muted_until` (RFC 3339 date-time with an offset, or null).
public struct Preferences: Sendable, Equatable {
    /// The sources whose notifications are delivered; nil delivers every source. Empty delivers none.
    public var enabledSources: [String]?
    /// The categories whose notifications are delivered; nil delivers every category. Empty delivers none.
    public var enabledCategories: [String]?
    /// A daily window in which notifications are held back; nil for none.
    public var quietHours: QuietHours?
    /// Whether a notification that falls in quiet hours is dropped or delivered when they end.
    public var quietHoursMode: QuietHoursMode
    /// Whether notifications play a sound.
    public var soundEnabled: Bool
    /// Until when the installation receives nothing (but critical alerts); nil when not muted.
    public var mutedUntil: Date?

    /// At most this many names in `enabled_sources` and in `enabled_categories`.
    public static let maxListCount = 100
    /// Source and category names are 1 to this many characters long.
    public static let maxNameLength = 100

    /// The members a preferences object may carry.
    public static let fields: Set<String> = [
        "enabled_sources", "enabled_categories", "quiet_hours", "quiet_hours_mode", "sound_enabled", "muted_until",
    ]

    /// Creates preferences; the defaults deliver everything, with sound, and no quiet hours.
    public init(
        enabledSources: [String]? = nil, enabledCategories: [String]? = nil, quietHours: QuietHours? = nil,
        quietHoursMode: QuietHoursMode = .skip, soundEnabled: Bool = true, mutedUntil: Date? = nil
    ) {
        self.enabledSources = enabledSources
        self.enabledCategories = enabledCategories
        self.quietHours = quietHours
        self.quietHoursMode = quietHoursMode
        self.soundEnabled = soundEnabled
        self.mutedUntil = mutedUntil
    }

    /// Parses and validates a preferences object; `field` is its dotted path in the request (empty when
    /// it is the whole body), used to name members in errors. Duplicate names in a list are dropped.
    /// - Throws: `HeraldError` naming the first member at fault: `unknown_field`, `invalid_type`,
    ///   `missing_field`, `invalid_length` (a name not 1 to 100 characters), `too_many_items` (a list
    ///   over 100 names), `invalid_value` (quiet-hours mode), `invalid_time` (not `HH:mm`),
    ///   `invalid_timezone`, `invalid_quiet_hours` (start equals end), `invalid_timestamp` (muted_until).
    public init(parsing value: JSONValue, field: String = "") throws(HeraldError) {
        let body = try JSONObjectReader(value, path: field)
        try body.rejectUnknown(allowed: Self.fields)
        enabledSources = try Self.readNames(body, "enabled_sources")
        enabledCategories = try Self.readNames(body, "enabled_categories")
        quietHours = try body.object("quiet_hours").map { (object) throws(HeraldError) in
            try QuietHours(parsing: object)
        }
        quietHoursMode = try body.enumeration("quiet_hours_mode", as: QuietHoursMode.self) ?? .skip
        soundEnabled = try body.bool("sound_enabled") ?? true
        mutedUntil = try body.string("muted_until").map { (text) throws(HeraldError) in
            guard case .instant(let date)? = PushTime.parse(text) else {
                throw .invalidValue(
                    body.name("muted_until"), code: "invalid_timestamp",
                    "Field '\(body.name("muted_until"))' must be an RFC 3339 date-time with an offset, "
                        + "like 2026-12-24T09:00:00Z.")
            }
            return date
        }
    }

    /// The preferences as a JSON object with every member present (null where nil) that
    /// `init(parsing:field:)` reads back to an equal value; `muted_until` is written in UTC.
    public var json: JSONValue {
        func names(_ list: [String]?) -> JSONValue {
            guard let list else { return .null }
            return .array(list.map(JSONValue.string))
        }
        return .object([
            "enabled_sources": names(enabledSources),
            "enabled_categories": names(enabledCategories),
            "quiet_hours": quietHours?.json ?? .null,
            "quiet_hours_mode": .string(quietHoursMode.rawValue),
            "sound_enabled": .bool(soundEnabled),
            "muted_until": mutedUntil.map { JSONValue.string(PushTime.instant($0).rfc3339) } ?? .null,
        ])
    }

    /// The preferences as a store keeps them: ``json`` serialized.
    public var storedText: String { String(decoding: json.serialized(), as: UTF8.self) }

    /// Reads preferences a store kept (``storedText``, or any body validated on its way in).
    /// - Throws: `HeraldError` when the stored text is not a valid preferences object.
    public init(stored text: String) throws {
        try self.init(parsing: try JSONValue.parse(Array(text.utf8)))
    }

    private static func readNames(_ body: JSONObjectReader, _ key: String) throws(HeraldError) -> [String]? {
        guard let list = try body.strings(key) else { return nil }
        // Counted as sent, repeats included: the schema's `maxItems` (/openapi.yaml) bounds the array itself.
        guard list.count <= maxListCount else {
            throw .invalidValue(
                body.name(key), code: "too_many_items",
                "Field '\(body.name(key))' may list at most \(maxListCount) names.")
        }
        var seen = Set<String>()
        var names: [String] = []
        for (index, name) in list.enumerated() {
            guard (1...maxNameLength).contains(name.count) else {
                let field = "\(body.name(key))[\(index)]"
                throw .invalidValue(
                    field, code: "invalid_length", "Field '\(field)' must be 1 to \(maxNameLength) characters long.")
            }
            if seen.insert(name).inserted { names.append(name) }
        }
        return names
    }
}

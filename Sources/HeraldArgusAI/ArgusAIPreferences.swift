import Foundation
import HeraldAPI
import HeraldCore

/// The document's preference fields over native ``Preferences``: `enabled_cameras` are the enabled
/// sources, `enabled_object_types` the enabled categories, `quiet_hours_enabled`/`_start`/`_end` the
/// quiet hours (switched off, their times are kept: `enabled: false`), `sound_enabled` itself, and
/// `timezone` the device's own time zone (the installation's), which quiet hours are read in. A
/// device that never set the times has 22:00 to 07:00 (Herald's choice, from the document's
/// examples). Everything is validated by the native rules; their errors are renamed to the
/// document's fields.
package enum ArgusAIPreferences {
    /// The members a `PUT /api/v1/push/mobile/preferences` body changes (with `device_id`).
    package static let fields: Set<String> = [
        "enabled_cameras", "enabled_object_types", "quiet_hours_enabled", "quiet_hours_start", "quiet_hours_end",
        "timezone", "sound_enabled",
    ]

    /// Native field names and the document's, for errors.
    private static let fieldNames: [(native: String, argus: String)] = [
        ("enabled_sources", "enabled_cameras"), ("enabled_categories", "enabled_object_types"),
        ("quiet_hours.start", "quiet_hours_start"), ("quiet_hours.end", "quiet_hours_end"),
        ("quiet_hours", "quiet_hours_end"),
    ]

    /// The quiet hours of a device that never set them: the document's example times.
    package static let defaultQuietHours = (start: "22:00", end: "07:00")

    /// `current` with the members present in `body` applied (absent members keep their value; a null
    /// list means every camera or type; quiet hours keep their times, stored or the defaults, when only
    /// switched on or off).
    /// - Throws: `HeraldError` naming the document's field at fault.
    package static func apply(_ body: JSONObjectReader, over current: Preferences) throws(HeraldError) -> Preferences {
        guard case .object(var native) = current.json else { return current }
        if body.contains("enabled_cameras") {
            native["enabled_sources"] = try body.strings("enabled_cameras").map(names) ?? .null
        }
        if body.contains("enabled_object_types") {
            native["enabled_categories"] = try body.strings("enabled_object_types").map(names) ?? .null
        }
        if body.contains("sound_enabled") {
            native["sound_enabled"] = try body.bool("sound_enabled").map(JSONValue.bool)
        }
        let stored = current.quietHours
        let start = try body.string("quiet_hours_start") ?? stored?.start.text
        let end = try body.string("quiet_hours_end") ?? stored?.end.text
        let enabled = try body.bool("quiet_hours_enabled") ?? (stored?.enabled ?? false)
        if start != nil || end != nil || enabled {
            // Off, the times are kept (as given, else as stored); on, the defaults fill what was never set.
            native["quiet_hours"] = .object([
                "start": .string(start ?? defaultQuietHours.start), "end": .string(end ?? defaultQuietHours.end),
                "timezone": stored?.timezone.map(JSONValue.string) ?? .null, "enabled": .bool(enabled),
            ])
        }
        do throws(HeraldError) {
            return try Preferences(parsing: .object(native))
        } catch {
            throw renamed(error)
        }
    }

    /// The preferences as the document answers them; `timezone` is the quiet hours' own zone, else
    /// the device's, else UTC.
    package static func json(_ preferences: Preferences, of installation: Installation) -> JSONValue {
        func names(_ list: [String]?) -> JSONValue { list.map { .array($0.map(JSONValue.string)) } ?? .null }
        let quietHours = preferences.quietHours
        return .object([
            "id": .string(installation.id),
            "token_id": .string(installation.id),
            "enabled_cameras": names(preferences.enabledSources),
            "enabled_object_types": names(preferences.enabledCategories),
            "quiet_hours_enabled": .bool(quietHours?.enabled ?? false),
            "quiet_hours_start": .string(quietHours?.start.text ?? defaultQuietHours.start),
            "quiet_hours_end": .string(quietHours?.end.text ?? defaultQuietHours.end),
            "timezone": .string(quietHours?.timezone ?? installation.timezone ?? "UTC"),
            "sound_enabled": .bool(preferences.soundEnabled),
        ])
    }

    private static func names(_ list: [String]) -> JSONValue { .array(list.map(JSONValue.string)) }

    /// A native preferences error with the document's field name in its field and message.
    private static func renamed(_ error: HeraldError) -> HeraldError {
        guard let field = error.field,
            let names = fieldNames.first(where: { field == $0.native || field.hasPrefix($0.native + "[") })
        else { return error }
        let renamedField = names.argus + field.dropFirst(names.native.count)
        return HeraldError(
            kind: error.kind, code: error.code,
            message: error.message.replacingOccurrences(of: "'\(field)'", with: "'\(renamedField)'"),
            field: renamedField)
    }
}

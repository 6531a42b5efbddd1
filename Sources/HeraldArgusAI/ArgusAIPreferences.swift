import Foundation
import HeraldAPI
import HeraldCore

/// The document's preference fields over native ``Preferences``: `enabled_cameras` are the enabled
/// sources, `enabled_object_types` the enabled categories, `quiet_hours_enabled`/`_start`/`_end` the
/// quiet hours (none while disabled), `sound_enabled` itself, and `timezone` the device's own time
/// zone (the installation's), which quiet hours are read in. Everything is validated by the native
/// rules; their errors are renamed to the document's fields.
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

    /// `current` with the members present in `body` applied (absent members keep their value; a null
    /// list means every camera or type).
    /// - Throws: `HeraldError` naming the document's field at fault; quiet hours enabled without a
    ///   start or end are `missing_field`.
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
        let start = try body.string("quiet_hours_start") ?? current.quietHours?.start.text
        let end = try body.string("quiet_hours_end") ?? current.quietHours?.end.text
        if try body.bool("quiet_hours_enabled") ?? (current.quietHours != nil) {
            native["quiet_hours"] = .object([
                "start": start.map(JSONValue.string) ?? .null, "end": end.map(JSONValue.string) ?? .null,
                "timezone": current.quietHours?.timezone.map(JSONValue.string) ?? .null,
            ])
        } else {
            native["quiet_hours"] = .null
            // Times sent with quiet hours off are still checked, though nothing keeps them.
            for (key, text) in [("quiet_hours_start", start), ("quiet_hours_end", end)] {
                if let text, body.contains(key), Preferences.TimeOfDay(text) == nil {
                    throw .invalidValue(
                        key, code: "invalid_time",
                        "Field '\(key)' must be a time of day as HH:mm on a 24-hour clock, like 22:00.")
                }
            }
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
            "quiet_hours_enabled": .bool(quietHours != nil),
            "quiet_hours_start": quietHours.map { .string($0.start.text) } ?? .null,
            "quiet_hours_end": quietHours.map { .string($0.end.text) } ?? .null,
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

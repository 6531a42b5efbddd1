import Configuration
import Foundation
import HeraldCore

/// Reading a declared ``Setting``: the lookup of its key (with `app` in place of `<id>`), the
/// parsing of environment strings, and the checks its ``SettingType`` names. Each throws
/// `HeraldError` `invalid_configuration` naming the key for a value that is present but malformed:
/// it never falls back to the default.
extension ConfigReader {
    /// A public base URL setting (a dialect's own address, that URLs it hands out start with): an
    /// absolute http(s) URL with a host and no query or fragment; nil when not set.
    /// - Parameter example: A URL of the right shape, for the error's message.
    package func publicBaseURL(_ setting: Setting<String?>, app: String, example: String) throws -> String? {
        guard let text = try value(setting, app: app) else { return nil }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host?.isEmpty == false, url.query == nil, url.fragment == nil
        else {
            throw HeraldError.invalidConfiguration(
                setting.key(app: app), "must be an absolute http(s) URL without query, like \(example)")
        }
        return text
    }

    /// An integer setting, or its default.
    package func value(_ setting: Setting<Int>, app: String? = nil) throws -> Int {
        try integer(setting, app: app) ?? setting.defaultValue
    }

    /// An integer setting; nil when not set.
    package func value(_ setting: Setting<Int?>, app: String? = nil) throws -> Int? {
        try integer(setting, app: app)
    }

    /// A boolean setting, or its default.
    package func value(_ setting: Setting<Bool>, app: String? = nil) throws -> Bool {
        let key = setting.key(app: app)
        if let flag = bool(forKey: ConfigKey(key)) { return flag }
        guard let text = string(forKey: ConfigKey(key)) else { return setting.defaultValue }
        // Environment variables arrive as strings.
        switch text.lowercased() {
        case "true", "1", "yes": return true
        case "false", "0", "no": return false
        default: throw HeraldError.invalidConfiguration(key, "must be true or false")
        }
    }

    /// A text setting, or its default; a required one that is not set is an error.
    package func value(_ setting: Setting<String>, app: String? = nil) throws -> String {
        guard let text = try string(setting, app: app) else {
            guard setting.isRequired else { return setting.defaultValue }
            throw HeraldError.invalidConfiguration(setting.key(app: app), Self.requirement(setting))
        }
        return text
    }

    /// An optional text setting; nil when not set.
    package func value(_ setting: Setting<String?>, app: String? = nil) throws -> String? {
        try string(setting, app: app)
    }

    /// A list setting; empty when not set.
    package func value(_ setting: Setting<[String]>, app: String? = nil) -> [String] {
        stringArray(forKey: ConfigKey(setting.key(app: app)), isSecret: setting.isSecret, default: [])
    }

    /// A setting that is one of a set of values, or its default.
    package func value<Choice: RawRepresentable & Sendable>(
        _ setting: Setting<Choice>, app: String? = nil
    ) throws -> Choice
    where Choice.RawValue == String {
        let key = setting.key(app: app)
        guard let text = try string(setting, app: app) else { return setting.defaultValue }
        guard let value = Choice(rawValue: text) else {
            throw HeraldError.invalidConfiguration(key, Self.requirement(setting))
        }
        return value
    }

    /// Whether the setting is set at all, whatever its value.
    package func contains(_ setting: some DeclaredSetting, app: String? = nil) -> Bool {
        let key = ConfigKey(setting.key(app: app))
        return string(forKey: key) != nil || int(forKey: key) != nil
    }

    private func integer(_ setting: some DeclaredSetting, app: String?) throws -> Int? {
        let key = setting.key(app: app)
        let number: Int
        if let value = int(forKey: ConfigKey(key)) {
            number = value
        } else if let text = string(forKey: ConfigKey(key)) {
            // Environment variables arrive as strings.
            guard let value = Int(text) else { throw HeraldError.invalidConfiguration(key, "must be an integer") }
            number = value
        } else {
            return nil
        }
        if case .integer(let range?, _) = setting.type, !range.contains(number) {
            throw HeraldError.invalidConfiguration(key, Self.requirement(setting))
        }
        return number
    }

    /// The setting's text when set, checked against its choices and minimum length.
    private func string(_ setting: some DeclaredSetting, app: String?) throws -> String? {
        let key = setting.key(app: app)
        guard let text = string(forKey: ConfigKey(key), isSecret: setting.isSecret) else { return nil }
        switch setting.type {
        case .choice(let values) where !values.contains(text):
            throw HeraldError.invalidConfiguration(key, Self.requirement(setting))
        case .string(let minimumLength) where text.count < minimumLength:
            throw HeraldError.invalidConfiguration(key, Self.requirement(setting))
        default: return text
        }
    }

    /// What a value that fails its setting's checks is told it must be.
    private static func requirement<S: DeclaredSetting>(_ setting: S) -> String {
        let required = (setting as? Setting<String>)?.isRequired == true
        switch setting.type {
        case .integer(let range?, _):
            return range.upperBound == .max
                ? "must be at least \(range.lowerBound)" : "must be \(range.lowerBound) to \(range.upperBound)"
        case .choice(let values):
            return values.count == 2
                ? "must be \(values[0]) or \(values[1])" : "must be one of " + values.joined(separator: ", ")
        case .string(let minimumLength) where minimumLength > 0:
            return (required ? "is required and " : "") + "must be at least \(minimumLength) characters"
        default:
            return required ? "is required" : "is malformed"
        }
    }
}

extension HeraldError {
    /// A configuration key whose value Herald cannot use: `invalid_configuration`, naming the key.
    package static func invalidConfiguration(_ key: String, _ problem: String) -> HeraldError {
        HeraldError(
            kind: .badRequest, code: "invalid_configuration", message: "Configuration key '\(key)' \(problem).",
            field: key)
    }
}

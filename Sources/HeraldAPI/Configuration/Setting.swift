/// What a setting holds: how the reference shows its type, and what reading it checks.
///
/// Reading checks integers (and their range), booleans, choices and minimum lengths; a format the
/// type only names (a URL, a path, an ARN) is checked by the code that reads the setting.
public enum SettingType: Sendable, Equatable {
    /// An integer within `range` (nil: any); `unit` names what it counts (`seconds`).
    case integer(range: ClosedRange<Int>?, unit: String?)
    /// `true` or `false` (`1`/`0`/`yes`/`no` as environment strings).
    case boolean
    /// Text of at least `minimumLength` characters.
    case string(minimumLength: Int)
    /// One of `values`.
    case choice([String])
    /// A file path.
    case path
    /// A URL of one of `schemes`.
    case url(schemes: [String])
    /// A list of strings (comma-separated in the environment).
    case stringArray
    /// A list of file paths (comma-separated in the environment).
    case pathArray
    /// Text of a format that `text` describes (`base64, 32 bytes`, `12 digits`).
    case other(String)

    /// Any text.
    public static var text: SettingType { .string(minimumLength: 0) }

    /// The type as the reference's table shows it.
    public var referenceText: String {
        switch self {
        case .integer(let range, let unit):
            var text = "int"
            if let range {
                text += range.upperBound == .max ? " ≥ \(range.lowerBound)" : " \(range.lowerBound)–\(range.upperBound)"
            }
            if let unit { text += ", \(unit)" }
            return text
        case .boolean: return "bool"
        case .string(let minimumLength): return minimumLength > 0 ? "string ≥ \(minimumLength) chars" : "string"
        case .choice(let values):
            let quoted = values.map { "`\($0)`" }
            return values.count == 2 ? "\(quoted[0]) or \(quoted[1])" : "one of " + quoted.joined(separator: ", ")
        case .path: return "path"
        case .url(let schemes):
            return schemes == ["http", "https"] ? "http(s) URL" : "\(schemes.joined(separator: "/")) URL"
        case .stringArray: return "string array"
        case .pathArray: return "path array"
        case .other(let text): return text
        }
    }
}

/// A setting as the reference describes it, whatever the type of its value: what
/// ``SettingsCatalog`` lists.
public protocol DeclaredSetting: Sendable {
    /// The dotted key; per-app keys hold `<id>` where the app id goes (`app.<id>.apns.key_id`).
    var key: String { get }
    /// What the value is.
    var type: SettingType { get }
    /// Whether the value is a secret: never logged, and a file holding it must be private.
    var isSecret: Bool { get }
    /// The default as the reference shows it (Markdown): a value, `none`, `required`, or how it is derived.
    var defaultText: String { get }
    /// What the setting does (Markdown, a sentence or a few).
    var summary: String { get }
}

extension DeclaredSetting {
    /// The key's components, `<id>` among them for a per-app key.
    public var components: [String] { key.split(separator: ".").map(String.init) }

    /// Whether the setting is per app (its key holds `<id>`).
    public var isPerApp: Bool { components.contains(Setting<Int>.appPlaceholder) }

    /// The key of app `app`'s setting (the key itself for a setting not per app).
    public func key(app: String?) -> String {
        components.map { $0 == Setting<Int>.appPlaceholder ? (app ?? $0) : $0 }.joined(separator: ".")
    }

    /// Whether `components` (an absolute key that was read) is this setting, for some app id (and
    /// some name, for a setting of a named item such as `app.<id>.webhook.<name>.url`).
    public func matches(_ components: [String]) -> Bool {
        let pattern = self.components
        guard pattern.count == components.count else { return false }
        return zip(pattern, components).allSatisfy { ($0.hasPrefix("<") && $0.hasSuffix(">")) || $0 == $1 }
    }
}

/// One configuration setting, declared once: its key, type, default and meaning. Herald reads its
/// configuration through these declarations (`try reader.value(Settings.port)`, see
/// `ConfigReader.value(_:app:)`), and `herald config reference` writes `docs/configuration.md`
/// from them (``SettingsCatalog``).
public struct Setting<Value: Sendable>: DeclaredSetting {
    /// The key component standing for an app id.
    public static var appPlaceholder: String { "<id>" }

    public let key: String
    public let type: SettingType
    public let isSecret: Bool
    /// Whether reading fails when the setting is not set.
    public let isRequired: Bool
    /// The value when the setting is not set.
    public let defaultValue: Value
    public let defaultText: String
    public let summary: String

    private init(
        key: String, type: SettingType, isSecret: Bool = false, isRequired: Bool = false, defaultValue: Value,
        defaultText: String, summary: String
    ) {
        self.key = key
        self.type = type
        self.isSecret = isSecret
        self.isRequired = isRequired
        self.defaultValue = defaultValue
        self.defaultText = defaultText
        self.summary = summary
    }
}

extension Setting {
    /// The same setting for one named item of an app (a configured webhook endpoint): `placeholder`, a key
    /// component such as `<name>`, replaced by `name`. The reference documents the placeholder's form.
    package func named(_ name: String, placeholder: String = "<name>") -> Setting {
        Setting(
            key: components.map { $0 == placeholder ? name : $0 }.joined(separator: "."), type: type,
            isSecret: isSecret, isRequired: isRequired, defaultValue: defaultValue, defaultText: defaultText,
            summary: summary)
    }
}

extension Setting where Value == Int {
    /// An integer setting within `range` (nil: any), `defaultValue` when not set; `defaultText`
    /// replaces the default's rendering (`` `0` (no limit) ``).
    public init(
        _ key: String, _ range: ClosedRange<Int>?, unit: String? = nil, default defaultValue: Int,
        defaultText: String? = nil, _ summary: String
    ) {
        self.init(
            key: key, type: .integer(range: range, unit: unit), defaultValue: defaultValue,
            defaultText: defaultText ?? "`\(defaultValue)`", summary: summary)
    }
}

extension Setting where Value == Int? {
    /// An integer setting within `range` that is nil when not set (the reading code then keeps a
    /// default of its own, which `defaultText` describes).
    public init(_ key: String, _ range: ClosedRange<Int>?, unit: String? = nil, defaultText: String, _ summary: String)
    {
        self.init(
            key: key, type: .integer(range: range, unit: unit), defaultValue: nil, defaultText: defaultText,
            summary: summary)
    }
}

extension Setting where Value == Bool {
    /// A boolean setting, `defaultValue` when not set.
    public init(_ key: String, default defaultValue: Bool, _ summary: String) {
        self.init(
            key: key, type: .boolean, defaultValue: defaultValue, defaultText: "`\(defaultValue)`", summary: summary)
    }
}

extension Setting where Value == String {
    /// A text setting, `defaultValue` when not set.
    public init(
        _ key: String, _ type: SettingType, default defaultValue: String,
        defaultText: String? = nil, _ summary: String
    ) {
        self.init(
            key: key, type: type, defaultValue: defaultValue, defaultText: defaultText ?? "`\(defaultValue)`",
            summary: summary)
    }

    /// A text setting that must be set.
    public static func required(
        _ key: String, _ type: SettingType, secret: Bool = false,
        defaultText: String = "required", _ summary: String
    ) -> Self {
        Self(
            key: key, type: type, isSecret: secret, isRequired: true, defaultValue: "", defaultText: defaultText,
            summary: summary)
    }
}

extension Setting where Value == String? {
    /// An optional text setting: nil when not set; `defaultText` says what that means (`none`).
    public init(
        _ key: String, _ type: SettingType, secret: Bool = false,
        defaultText: String = "none", _ summary: String
    ) {
        self.init(
            key: key, type: type, isSecret: secret, defaultValue: nil, defaultText: defaultText, summary: summary)
    }
}

extension Setting where Value == [String] {
    /// A list setting, empty when not set; a `secret` one is never printed.
    public init(
        _ key: String, _ type: SettingType, secret: Bool = false, defaultText: String = "empty", _ summary: String
    ) {
        self.init(key: key, type: type, isSecret: secret, defaultValue: [], defaultText: defaultText, summary: summary)
    }
}

extension Setting where Value: RawRepresentable, Value.RawValue == String {
    /// A setting that is one of `choices`, `defaultValue` when not set.
    public init(_ key: String, choices: [Value], default defaultValue: Value, _ summary: String) {
        self.init(
            key: key, type: .choice(choices.map(\.rawValue)), defaultValue: defaultValue,
            defaultText: "`\(defaultValue.rawValue)`", summary: summary)
    }
}

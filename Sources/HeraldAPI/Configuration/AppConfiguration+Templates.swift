import Configuration
import Foundation
import HeraldCore

/// A template kept in the configuration (`app.<id>.templates`), for set-ups kept in files: `herald
/// serve` writes it to the store at start and on reload as the template's next revision when it
/// changed, and the API can read it but not change it (docs/content.md, "Templates").
public struct ConfiguredTemplate: Sendable, Equatable {
    public var appID: String
    public var name: String
    public var content: TemplateContent

    /// Creates a configured template.
    public init(appID: String, name: String, content: TemplateContent) {
        self.appID = appID
        self.name = name
        self.content = content
    }

    /// The configured templates of app `appID`: each name of `app.<id>.templates` with its
    /// `app.<id>.template.<name>.*`.
    /// - Throws: `invalid_configuration` naming the key at fault.
    public static func read(appID: String, reader: ConfigReader) throws -> [ConfiguredTemplate] {
        typealias Settings = AppConfiguration.TemplateSettings
        var templates: [ConfiguredTemplate] = []
        for name in reader.value(Settings.names, app: appID) {
            guard NotificationTemplate.isName(name), !templates.contains(where: { $0.name == name }) else {
                throw HeraldError.invalidConfiguration(
                    Settings.names.key(app: appID), "'\(name)' is not a unique name of letters, digits, ., - and _")
            }
            func setting<Value>(_ setting: Setting<Value>) -> Setting<Value> { setting.named(name) }
            var definition: [String: JSONValue] = [
                "strict": .bool(try reader.value(setting(Settings.strict), app: appID))
            ]
            for (key, text) in [
                ("description", Settings.description), ("title", Settings.title), ("subtitle", Settings.subtitle),
                ("body", Settings.body),
            ] {
                definition[key] = try reader.value(setting(text), app: appID).map(JSONValue.string)
            }
            for (key, json) in [("data", Settings.data), ("localizations", Settings.localizations)] {
                guard let text = try reader.value(setting(json), app: appID) else { continue }
                do {
                    definition[key] = try JSONValue.parse(Array(text.utf8))
                } catch {
                    throw HeraldError.invalidConfiguration(
                        setting(json).key(app: appID), "is not a JSON object: \(error.message)")
                }
            }
            do {
                let content = try TemplateContent(parsing: .object(definition))
                templates.append(ConfiguredTemplate(appID: appID, name: name, content: content))
            } catch {
                let key = error.field.map { "app.\(appID).template.\(name).\($0)" } ?? Settings.names.key(app: appID)
                throw HeraldError.invalidConfiguration(key, error.message)
            }
        }
        return templates
    }
}

extension AppConfiguration {
    /// The settings of configured templates (docs/content.md, "Templates").
    public enum TemplateSettings {
        public static let names = Setting<[String]>(
            "app.<id>.templates", .stringArray, defaultText: "none",
            """
            Templates kept in the configuration, by name (letters, digits, `.`, `-`, `_`): each is set by the \
            `app.<id>.template.<name>.*` settings below. Herald writes them to its store at start and on reload \
            (a changed one as its next revision); one the API made with the same name is replaced, and the API may \
            read them but not change or delete them.
            """)
        public static let title = Setting<String?>(
            "app.<id>.template.<name>.title", .text, "The title's Mustache source.")
        public static let subtitle = Setting<String?>(
            "app.<id>.template.<name>.subtitle", .text, "The subtitle's Mustache source.")
        public static let body = Setting<String?>(
            "app.<id>.template.<name>.body", .text, "The body's Mustache source.")
        public static let data = Setting<String?>(
            "app.<id>.template.<name>.data", .text,
            "A JSON object of the notification's data values, each a Mustache source: `{\"order\": \"{{order.id}}\"}`.")
        public static let localizations = Setting<String?>(
            "app.<id>.template.<name>.localizations", .text,
            """
            A JSON object of the words in other languages by BCP 47 tag, each with `title`, `subtitle` or `body` \
            sources: `{\"de\": {\"title\": \"Bestellung {{order.id}}\"}}`.
            """)
        public static let strict = Setting<Bool>(
            "app.<id>.template.<name>.strict", default: false,
            "A variable it names without a value fails the send (or that recipient's delivery) instead of rendering empty."
        )
        public static let description = Setting<String?>(
            "app.<id>.template.<name>.description", .text, "What the template is for (shown in the API).")

        /// Every setting above, in the reference's order.
        public static let all: [any DeclaredSetting] = [
            names, title, subtitle, body, data, localizations, strict, description,
        ]
    }
}

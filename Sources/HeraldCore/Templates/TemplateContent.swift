import Foundation

/// What a template says (docs/content.md, "Templates"): Mustache sources for the title, subtitle,
/// body and data values, in the default language and in others by BCP 47 tag, and whether a
/// variable it names may be missing (`strict` false: it renders empty) or fails the send.
public struct TemplateContent: Sendable, Equatable {
    public var description: String?
    /// A variable missing for the whole send fails it at intake; one missing from a recipient's
    /// profile fails that delivery (`template_variable_missing`).
    public var strict: Bool
    public var title: String?
    public var subtitle: String?
    public var body: String?
    /// Values of the notification's `data` (each a template), over the send's own.
    public var data: [String: String]
    /// The words in other languages: each source given replaces the default's, as a send's
    /// localizations do (``LocalizedText``).
    public var localizations: [String: LocalizedText]

    /// Creates template content.
    public init(
        description: String? = nil, strict: Bool = false, title: String? = nil, subtitle: String? = nil,
        body: String? = nil, data: [String: String] = [:], localizations: [String: LocalizedText] = [:]
    ) {
        self.description = description
        self.strict = strict
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.data = data
        self.localizations = localizations
    }

    /// The most values a template's `data` has.
    public static let maxDataValues = 50

    static let fields: Set<String> = ["description", "strict", "title", "subtitle", "body", "data", "localizations"]

    /// Reads a template's definition (`PUT /v1/templates/{name}`, a stored one, the configuration's)
    /// and checks that each source is Mustache.
    /// - Throws: `HeraldError` naming the field at fault: `invalid_template` for a source Mustache
    ///   cannot parse, `empty_template` for one with no title, subtitle, body or data.
    public init(parsing value: JSONValue, field: String = "") throws(HeraldError) {
        let reader = try JSONObjectReader(value, path: field)
        try reader.rejectUnknown(allowed: Self.fields)
        self.init(
            description: try reader.string("description", maxLength: 1000), strict: try reader.bool("strict") ?? false,
            title: try reader.string("title", maxLength: 1000),
            subtitle: try reader.string("subtitle", maxLength: 1000),
            body: try reader.string("body", maxLength: 4000))
        if let data = try reader.object("data") {
            guard data.members.count <= Self.maxDataValues else {
                throw .invalidValue(data.path, "At most \(Self.maxDataValues) data values per template.")
            }
            for key in data.members.keys {
                guard let source = try data.string(key, maxLength: 4000, minLength: 0) else {
                    throw .invalidType(data.name(key), expected: "a string")
                }
                self.data[key] = source
            }
        }
        if let localizations = try reader.object("localizations") {
            self.localizations = try LocalizedText.parse(localizations)
        }
        guard title != nil || subtitle != nil || body != nil || !data.isEmpty else {
            throw .invalidValue(
                field.isEmpty ? "title" : field, code: "empty_template",
                "A template needs a title, subtitle, body or data."
            )
        }
        _ = try CompiledTemplate(self, field: field)
    }

    /// The definition as the API writes it and the stores keep it.
    public var json: JSONValue {
        var object: [String: JSONValue] = ["strict": .bool(strict)]
        object["description"] = description.map(JSONValue.string)
        object["title"] = title.map(JSONValue.string)
        object["subtitle"] = subtitle.map(JSONValue.string)
        object["body"] = body.map(JSONValue.string)
        if !data.isEmpty { object["data"] = .object(data.mapValues(JSONValue.string)) }
        if !localizations.isEmpty { object["localizations"] = .object(localizations.mapValues(\.json)) }
        return .object(object)
    }
}

/// A named template of an app, at one revision: each change (the API's, the configuration's) makes
/// the next revision, which the store assigns.
public struct NotificationTemplate: Sendable, Equatable {
    public var appID: String
    public var name: String
    public var revision: Int
    public var content: TemplateContent
    /// Kept in the configuration (`app.<id>.template.<name>.*`): the API reads it but does not change it.
    public var configured: Bool
    public var createdAt: Date
    public var updatedAt: Date

    /// Creates a template record.
    public init(
        appID: String, name: String, revision: Int = 1, content: TemplateContent, configured: Bool = false,
        createdAt: Date, updatedAt: Date
    ) {
        self.appID = appID
        self.name = name
        self.revision = revision
        self.content = content
        self.configured = configured
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// The longest template name.
    public static let maxNameLength = 64

    /// Whether `name` may name a template: 1 to 64 letters, digits, `-`, `_` and `.`.
    public static func isName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= maxNameLength
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".") }
    }
}

/// The store of each app's templates (docs/content.md, "Templates").
public protocol TemplateStore: Sendable {
    /// An app's templates, by name.
    func templates(appID: String) async throws -> [NotificationTemplate]

    /// One template of an app, at its latest revision.
    func template(appID: String, name: String) async throws -> NotificationTemplate?

    /// Stores `template` as the next revision of its name (1 for a new one; the creation time of a
    /// replaced one is kept) and returns what was stored.
    func saveTemplate(_ template: NotificationTemplate) async throws -> NotificationTemplate

    /// Deletes a template; false when there was none. A send accepted with it keeps its revision.
    func deleteTemplate(appID: String, name: String) async throws -> Bool
}

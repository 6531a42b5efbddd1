/// A send's template (`template` of `POST /v1/notifications`): its name and variables, and, once
/// the send is accepted, the revision it was accepted with, kept whole in the notification so a
/// scheduled send or a retry renders what was accepted whatever becomes of the template.
public struct TemplateUse: Sendable, Equatable {
    public var name: String
    public var variables: [String: JSONValue]
    /// The revision resolved at intake (nil until then).
    public var revision: Int?
    public var content: TemplateContent?

    /// Creates a reference to a template.
    public init(
        name: String, variables: [String: JSONValue] = [:], revision: Int? = nil, content: TemplateContent? = nil
    ) {
        self.name = name
        self.variables = variables
        self.revision = revision
        self.content = content
    }

    /// Reads a send's `template` object.
    /// - Throws: `HeraldError` naming the field at fault.
    public init(parsing value: JSONValue, field: String = "template") throws(HeraldError) {
        let reader = try JSONObjectReader(value, path: field)
        try reader.rejectUnknown(allowed: ["name", "variables"])
        guard let name = try reader.string("name", maxLength: NotificationTemplate.maxNameLength) else {
            throw .missingField(reader.name("name"))
        }
        guard NotificationTemplate.isName(name) else {
            throw .invalidValue(reader.name("name"), "A template name is letters, digits, '-', '_' and '.'.")
        }
        self.init(name: name, variables: try reader.object("variables")?.members ?? [:])
    }

    /// Reads the `template` of a stored notification's spec.
    /// - Throws: `HeraldError` when it is unreadable.
    init(stored value: JSONValue) throws(HeraldError) {
        let reader = try JSONObjectReader(value, path: "template")
        guard let name = try reader.string("name") else { throw .internal("Stored notification is unreadable.") }
        self.init(
            name: name, variables: try reader.object("variables")?.members ?? [:],
            revision: try reader.integer("revision", in: 0...Int.max),
            content: try reader.members["content"].map { (value) throws(HeraldError) in
                try TemplateContent(stored: value)
            })
    }

    /// The reference as stores keep it and the API shows it.
    public var json: JSONValue {
        var object: [String: JSONValue] = ["name": .string(name)]
        if !variables.isEmpty { object["variables"] = .object(variables) }
        object["revision"] = revision.map { .number(JSONNumber($0)) }
        object["content"] = content?.json
        return .object(object)
    }

    /// The template parsed, with its revision's content.
    /// - Throws: `internal` when the send was not resolved (its content is unknown).
    public func compiled() throws(HeraldError) -> CompiledTemplate {
        guard let content else { throw .internal("Template \(name) was not resolved.") }
        return try CompiledTemplate(content)
    }
}

extension TemplateContent {
    /// Reads stored content, which was checked when it was stored.
    /// - Throws: `HeraldError` when it is unreadable.
    public init(stored value: JSONValue) throws(HeraldError) {
        let reader = try JSONObjectReader(value)
        self.init(
            description: try reader.string("description"), strict: try reader.bool("strict") ?? false,
            title: try reader.string("title"), subtitle: try reader.string("subtitle"), body: try reader.string("body"))
        for (key, value) in try reader.object("data")?.members ?? [:] {
            if case .string(let source) = value { data[key] = source }
        }
        if let localizations = try reader.object("localizations") {
            self.localizations = try LocalizedText.parse(localizations)
        }
    }
}

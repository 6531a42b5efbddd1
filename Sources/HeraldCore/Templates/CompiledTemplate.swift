import Foundation
import Mustache

/// A template's sources parsed by Mustache (the `swift-mustache` package), ready to render per
/// language and recipient. Push text is plain text: every source is rendered with Mustache's `TEXT`
/// content type, so `{{name}}` and `{{{name}}}` both give the value as it is, never HTML-escaped.
public struct CompiledTemplate: Sendable {
    struct Words: Sendable {
        var title: MustacheTemplate?
        var subtitle: MustacheTemplate?
        var body: MustacheTemplate?
    }

    let content: TemplateContent
    let words: Words
    let localized: [String: Words]
    let data: [(key: String, template: MustacheTemplate)]

    /// Parses every source of `content`.
    /// - Throws: `invalid_template` naming the source Mustache cannot parse, with its line and column.
    public init(_ content: TemplateContent, field: String = "") throws(HeraldError) {
        func path(_ key: String) -> String { field.isEmpty ? key : "\(field).\(key)" }
        self.content = content
        words = Words(
            title: try Self.parse(content.title, field: path("title")),
            subtitle: try Self.parse(content.subtitle, field: path("subtitle")),
            body: try Self.parse(content.body, field: path("body")))
        var localized: [String: Words] = [:]
        for (tag, text) in content.localizations {
            let base = path("localizations.\(tag)")
            localized[tag] = Words(
                title: try Self.parse(text.title, field: "\(base).title"),
                subtitle: try Self.parse(text.subtitle, field: "\(base).subtitle"),
                body: try Self.parse(text.body, field: "\(base).body"))
        }
        self.localized = localized
        var data: [(key: String, template: MustacheTemplate)] = []
        for key in content.data.keys.sorted() {
            if let template = try Self.parse(content.data[key], field: path("data.\(key)")) {
                data.append((key, template))
            }
        }
        self.data = data
    }

    /// The pragma every source starts with: values are plain text, not HTML.
    static let plainText = "{{% CONTENT_TYPE: TEXT}}"

    private static func parse(_ source: String?, field: String) throws(HeraldError) -> MustacheTemplate? {
        guard let source else { return nil }
        do {
            return try MustacheTemplate(string: plainText + source)
        } catch let error as MustacheTemplate.ParserError {
            throw .invalidValue(
                field, code: "invalid_template",
                "Not a Mustache template (\(error.error), line \(error.context.lineNumber), column \(error.context.columnNumber)): \(error.context.line)"
            )
        } catch {
            throw .invalidValue(field, code: "invalid_template", "Not a Mustache template: \(error)")
        }
    }

    /// The language keys a recipient's locale is matched against (``LocaleMatcher``).
    public var localizationKeys: Dictionary<String, LocalizedText>.Keys { content.localizations.keys }

    /// Renders the words of localization `key` (nil: the default) with `variables`, the
    /// notification's `data` and the recipient's profile: nil renders at intake, before recipients
    /// are known, where every `recipient.…` value is empty and none counts as missing.
    public func render(
        key: String?, variables: [String: JSONValue], data: [String: JSONValue], recipient: TemplateRecipient?
    ) -> TemplateRendering {
        let recorder = TemplateRecorder()
        var root = variables
        root["data"] = .object(data)
        let scope = TemplateScope(members: root, path: "", recorder: recorder, recipient: recipient)
        let local = key.flatMap { localized[$0] }
        func field(_ pick: (Words) -> MustacheTemplate?) -> String? {
            (local.flatMap(pick) ?? pick(words))?.render(scope)
        }
        var rendering = TemplateRendering(
            title: field(\.title), subtitle: field(\.subtitle), body: field(\.body), data: [:], missing: [],
            usesRecipient: false)
        for (key, template) in self.data { rendering.data[key] = template.render(scope) }
        rendering.missing = recorder.missing
        rendering.usesRecipient = recorder.usesRecipient
        return rendering
    }
}

/// What a template rendered for one language and recipient.
public struct TemplateRendering: Sendable, Hashable {
    public var title: String?
    public var subtitle: String?
    public var body: String?
    public var data: [String: String]
    /// The variables a `{{…}}` named that had no value, by path (`order.id`,
    /// `recipient.attributes.first_name`), in the order met, each once.
    public var missing: [String]
    /// Whether a source named `recipient`: each recipient is then rendered on its own.
    public var usesRecipient: Bool

    /// `payload` with the rendered words, and the rendered data values over its data.
    public func applied(to payload: NotificationPayload) -> NotificationPayload {
        var payload = payload
        payload.localizations = [:]
        payload.title = title
        payload.subtitle = subtitle
        payload.body = body
        for (key, value) in data { payload.data[key] = .string(value) }
        return payload
    }
}

/// The recipient's profile a template may name as `recipient`: never its token or keys.
public struct TemplateRecipient: Sendable, Hashable {
    public var installationID: String?
    public var userID: String?
    public var locale: String?
    public var timezone: String?
    public var attributes: [String: JSONValue]

    /// The profile of an installation.
    public init(_ installation: Installation) {
        self.init(
            installationID: installation.id, userID: installation.userID, locale: installation.locale,
            timezone: installation.timezone, attributes: installation.attributes)
    }

    /// Creates a profile (a preview's sample recipient).
    public init(
        installationID: String? = nil, userID: String? = nil, locale: String? = nil, timezone: String? = nil,
        attributes: [String: JSONValue] = [:]
    ) {
        self.installationID = installationID
        self.userID = userID
        self.locale = locale
        self.timezone = timezone
        self.attributes = attributes
    }

    /// The profile as templates see it.
    var members: [String: JSONValue] {
        var members: [String: JSONValue] = ["attributes": .object(attributes)]
        members["installation_id"] = installationID.map(JSONValue.string)
        members["user_id"] = userID.map(JSONValue.string)
        members["locale"] = locale.map(JSONValue.string)
        members["time_zone"] = timezone.map(JSONValue.string)
        return members
    }
}

/// What one rendering met: the variables it missed and whether it named the recipient.
final class TemplateRecorder {
    private(set) var missing: [String] = []
    var usesRecipient = false

    func miss(_ path: String) {
        if !missing.contains(path) { missing.append(path) }
    }
}

/// A JSON object as Mustache sees it. A name it lacks is a ``TemplateMissing``, not nil, so a
/// `{{…}}` that names it is recorded (Mustache renders nil silently); in return a name missing in
/// a section's value does not fall back to outer values (docs/content.md says to use full paths).
struct TemplateScope: MustacheParent {
    let members: [String: JSONValue]
    let path: String
    let recorder: TemplateRecorder
    /// At the root only: the recipient (`.some(nil)` at intake, when it is not known yet).
    var recipient: TemplateRecipient?? = .none

    init(members: [String: JSONValue], path: String, recorder: TemplateRecorder) {
        self.members = members
        self.path = path
        self.recorder = recorder
    }

    init(members: [String: JSONValue], path: String, recorder: TemplateRecorder, recipient: TemplateRecipient?) {
        self.init(members: members, path: path, recorder: recorder)
        self.recipient = .some(recipient)
    }

    func child(named name: String) -> Any? {
        let childPath = path.isEmpty ? name : "\(path).\(name)"
        if case .some(let recipient) = recipient, name == "recipient" {
            recorder.usesRecipient = true
            guard let recipient else { return TemplateDeferred() }
            return TemplateScope(members: recipient.members, path: childPath, recorder: recorder)
        }
        guard let value = members[name] else { return TemplateMissing(path: childPath, recorder: recorder) }
        return Self.wrap(value, path: childPath, recorder: recorder)
    }

    static func wrap(_ value: JSONValue, path: String, recorder: TemplateRecorder) -> Any {
        switch value {
        case .string(let text): return text
        case .bool(let flag): return flag
        case .null: return TemplateNull()
        case .array(let items):
            return items.enumerated().map { wrap($1, path: "\(path).\($0)", recorder: recorder) }
        case .object(let members): return TemplateScope(members: members, path: path, recorder: recorder)
        case .number: return value.serialized().asString
        }
    }
}

/// A variable without a value: renders empty and is recorded; a section over it is skipped.
struct TemplateMissing: MustacheParent, MustacheCustomRenderable {
    let path: String
    let recorder: TemplateRecorder

    var renderText: String {
        recorder.miss(path)
        return ""
    }
    var isNull: Bool { true }
    func child(named name: String) -> Any? { TemplateMissing(path: "\(path).\(name)", recorder: recorder) }
}

/// A recipient's value at intake, before recipients are known: empty, never missing.
struct TemplateDeferred: MustacheParent, MustacheCustomRenderable {
    var renderText: String { "" }
    var isNull: Bool { true }
    func child(named name: String) -> Any? { self }
}

/// JSON `null`: present, renders empty, false in a section.
struct TemplateNull: MustacheCustomRenderable {
    var renderText: String { "" }
    var isNull: Bool { true }
}

extension [UInt8] {
    fileprivate var asString: String { String(decoding: self, as: UTF8.self) }
}

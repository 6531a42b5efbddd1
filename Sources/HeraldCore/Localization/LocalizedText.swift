/// A notification's words in one language (`payload.localizations.<tag>`): each field given replaces
/// the default's; a field left out falls back to it (docs/content.md).
public struct LocalizedText: Sendable, Equatable {
    public var title: String?
    public var subtitle: String?
    public var body: String?

    /// Creates a localization.
    public init(title: String? = nil, subtitle: String? = nil, body: String? = nil) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
    }

    /// The most localizations a payload carries.
    public static let maxCount = 100

    /// Reads the `localizations` object of a payload.
    /// - Throws: `HeraldError` naming the member at fault: a tag that is not a language tag, an
    ///   empty localization, a text too long, too many.
    static func parse(_ object: JSONObjectReader) throws(HeraldError) -> [String: LocalizedText] {
        guard object.members.count <= maxCount else {
            throw .invalidValue(
                object.path, code: "too_many_localizations", "At most \(maxCount) localizations per notification.")
        }
        var localizations: [String: LocalizedText] = [:]
        for tag in object.members.keys.sorted() {
            let field = object.name(tag)
            guard Self.isLanguageTag(tag), LocaleMatcher.subtags(tag) != nil else {
                throw .invalidValue(
                    field, code: "invalid_locale", "'\(tag)' is not a language tag (like de, pt-BR or zh-Hant).")
            }
            guard let entry = try object.object(tag) else { throw .invalidType(field, expected: "an object") }
            try entry.rejectUnknown(allowed: ["title", "subtitle", "body"])
            let text = LocalizedText(
                title: try entry.string("title", maxLength: 1000),
                subtitle: try entry.string("subtitle", maxLength: 1000),
                body: try entry.string("body", maxLength: 4000))
            guard text.title != nil || text.subtitle != nil || text.body != nil else {
                throw .invalidValue(
                    field, code: "empty_localization", "A localization needs a title, subtitle or body.")
            }
            localizations[tag] = text
        }
        return localizations
    }

    /// BCP 47's shape: a 2–3 letter language, then subtags of 1–8 letters or digits.
    static func isLanguageTag(_ tag: String) -> Bool {
        let parts = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = parts.first, (2...3).contains(first.count), first.allSatisfy(\.isASCIILetterOrDigit),
            first.allSatisfy({ !$0.isNumber }), tag.count <= 35
        else { return false }
        return parts.dropFirst().allSatisfy { (1...8).contains($0.count) && $0.allSatisfy(\.isASCIILetterOrDigit) }
    }

    /// The localization as the API writes it.
    var json: JSONValue {
        var object: [String: JSONValue] = [:]
        object["title"] = title.map(JSONValue.string)
        object["subtitle"] = subtitle.map(JSONValue.string)
        object["body"] = body.map(JSONValue.string)
        return .object(object)
    }
}

extension Character {
    /// An ASCII letter or digit.
    fileprivate var isASCIILetterOrDigit: Bool { isASCII && (isLetter || isNumber) }
}

extension NotificationPayload {
    /// The payload a device whose locale chose `key` gets: that localization's words over the
    /// default's, without the other localizations (nil: the default words).
    public func localized(_ key: String?) -> NotificationPayload {
        var payload = self
        payload.localizations = [:]
        guard let key, let text = localizations[key] else { return payload }
        payload.title = text.title ?? title
        payload.subtitle = text.subtitle ?? subtitle
        payload.body = text.body ?? body
        return payload
    }
}

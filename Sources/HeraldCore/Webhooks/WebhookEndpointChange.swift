import Foundation

/// The body of `POST /v1/webhooks` (every member it names) or `PATCH /v1/webhooks/{id}` (only the members
/// present change), parsed and checked; the URL's network checks are the deliverer's policy's, run by the route.
public struct WebhookEndpointChange: Sendable, Equatable {
    /// The members a body may have.
    public static let fields: Set<String> = ["id", "url", "events", "description", "enabled"]
    public static let maxURLLength = 2_048
    public static let maxDescriptionLength = 500
    public static let maxIDLength = 64

    public var id: String?
    public var url: String?
    public var events: [WebhookEventType]?
    /// `.some(nil)`: cleared.
    public var description: String??
    public var enabled: Bool?

    /// Parses a body; `creating` requires `url` and `events` and allows `id`.
    /// - Throws: `HeraldError` naming the field: `unknown_field`, `missing_field`, `invalid_type`,
    ///   `invalid_length`, `invalid_value` (an unknown event type, an id with other characters than
    ///   letters, digits, `-` and `_`).
    public init(parsing value: JSONValue, creating: Bool) throws(HeraldError) {
        let body = try JSONObjectReader(value)
        try body.rejectUnknown(allowed: creating ? Self.fields : Self.fields.subtracting(["id"]))
        if creating {
            id = try body.string("id", maxLength: Self.maxIDLength)
            if let id, !id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) {
                throw .invalidValue("id", "Field 'id' may hold only letters, digits, '-' and '_'.")
            }
            guard body.contains("url") else { throw .missingField("url") }
            guard body.contains("events") else { throw .missingField("events") }
        }
        url = try body.string("url", maxLength: Self.maxURLLength)
        if let names = try body.strings("events") {
            events = try Self.events(names)
        } else if body.contains("events") {
            throw .invalidType("events", expected: "an array of strings")
        }
        if body.contains("description") {
            description = .some(try body.string("description", maxLength: Self.maxDescriptionLength, minLength: 0))
        }
        enabled = try body.bool("enabled")
    }

    /// Event type names: each a subscribable type, or `*` for all of them; at least one.
    public static func events(_ names: [String], field: String = "events") throws(HeraldError) -> [WebhookEventType] {
        guard !names.isEmpty else { throw .invalidValue(field, "Field '\(field)' must name at least one event type.") }
        var types: Set<WebhookEventType> = []
        for (index, name) in names.enumerated() {
            if name == "*" {
                types.formUnion(WebhookEventType.subscribable)
            } else if let type = WebhookEventType(rawValue: name), type != .webhookTest {
                types.insert(type)
            } else {
                let allowed = WebhookEventType.subscribable.map(\.rawValue).joined(separator: ", ")
                throw .invalidValue("\(field)[\(index)]", "Event type '\(name)' is not one of: \(allowed), or *.")
            }
        }
        return types.sorted()
    }
}

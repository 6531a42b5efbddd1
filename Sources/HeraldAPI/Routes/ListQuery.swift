import HeraldCore
import Hummingbird

/// The query string of a route, checked against the route's declared ``QueryParameter``s (the
/// ones `/openapi.yaml` documents): filters, `limit` and the opaque `cursor` returned as
/// `next_cursor` by the previous page.
package struct ListQuery {
    /// The page size when `limit` is absent.
    package static let defaultLimit = 100

    private let parameters: [String: String]

    /// Reads and checks the parameters, refusing undeclared and repeated ones.
    /// - Throws: `HeraldError` `unknown_field`, `invalid_value`, `invalid_length` or the
    ///   declaration's code, naming the parameter.
    package init(_ query: Parameters, declared: [QueryParameter]) throws(HeraldError) {
        var parameters: [String: String] = [:]
        for (key, value) in query {
            let key = String(key)
            guard let declaration = declared.first(where: { $0.name == key }) else { throw .unknownField(key) }
            guard parameters.updateValue(String(value), forKey: key) == nil else {
                throw .invalidValue(key, "Query parameter '\(key)' is given more than once.")
            }
            try declaration.check(String(value))
        }
        self.parameters = parameters
    }

    /// A checked text parameter.
    package func string(_ key: String) -> String? { parameters[key] }

    /// A checked choice parameter as its enumeration.
    package func enumeration<Value: RawRepresentable>(_ key: String, as type: Value.Type) -> Value?
    where Value.RawValue == String {
        parameters[key].flatMap(Value.init(rawValue:))
    }

    /// A checked boolean parameter.
    package func bool(_ key: String) -> Bool? { parameters[key].map { $0 == "true" } }

    /// The page asked for.
    /// - Throws: `HeraldError` `invalid_limit` or `invalid_cursor`.
    package func page() throws(HeraldError) -> PageRequest {
        var limit = Self.defaultLimit
        if let raw = parameters["limit"] {
            guard let value = Int(raw), (1...PageRequest.maxLimit).contains(value) else {
                throw .invalidValue(
                    "limit", code: "invalid_limit", "limit must be an integer from 1 to \(PageRequest.maxLimit).")
            }
            limit = value
        }
        var after: String?
        if let cursor = parameters["cursor"] {
            guard let bytes = Base64URL.decode(cursor), let id = String(validating: bytes, as: UTF8.self),
                id.hasPrefix(Self.cursorPrefix)
            else {
                throw .invalidValue("cursor", code: "invalid_cursor", "cursor is not one returned by this list.")
            }
            after = String(id.dropFirst(Self.cursorPrefix.count))
        }
        return PageRequest(after: after, limit: limit)
    }

    private static let cursorPrefix = "after:"

    /// The opaque cursor for the page after the record with this id.
    package static func cursor(after id: String) -> String { Base64URL.encode(Array((cursorPrefix + id).utf8)) }

    /// A list response body.
    package static func page(_ items: [JSONValue], next: String?) -> JSONValue {
        .object(["data": .array(items), "next_cursor": next.map(JSONValue.string) ?? .null])
    }
}

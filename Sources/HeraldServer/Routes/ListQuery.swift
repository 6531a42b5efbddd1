import HeraldCore
import Hummingbird

/// The query string of a list route: filters, `limit` (1 to 1000, default 100) and the opaque
/// `cursor` returned as `next_cursor` by the previous page.
struct ListQuery {
    private let parameters: [String: String]

    /// Reads the parameters, refusing unknown and repeated ones.
    /// - Throws: `HeraldError` `unknown_field` / `invalid_value` naming the parameter.
    init(_ query: Parameters, allowed: Set<String>) throws(HeraldError) {
        var parameters: [String: String] = [:]
        for (key, value) in query {
            let key = String(key)
            guard allowed.contains(key) || key == "limit" || key == "cursor" else { throw .unknownField(key) }
            guard parameters.updateValue(String(value), forKey: key) == nil else {
                throw .invalidValue(key, "Query parameter '\(key)' is given more than once.")
            }
        }
        self.parameters = parameters
    }

    func string(_ key: String, maxLength: Int) throws(HeraldError) -> String? {
        guard let value = parameters[key] else { return nil }
        guard !value.isEmpty, value.count <= maxLength else {
            throw .invalidValue(
                key, code: "invalid_length", "Query parameter '\(key)' must be 1 to \(maxLength) characters.")
        }
        return value
    }

    func enumeration<Value: RawRepresentable & CaseIterable>(
        _ key: String, as type: Value.Type
    ) throws(HeraldError)
        -> Value? where Value.RawValue == String
    {
        guard let raw = parameters[key] else { return nil }
        guard let value = Value(rawValue: raw) else {
            let allowed = Value.allCases.map(\.rawValue).joined(separator: ", ")
            throw .invalidValue(key, "Query parameter '\(key)' must be one of: \(allowed).")
        }
        return value
    }

    func bool(_ key: String) throws(HeraldError) -> Bool? {
        switch parameters[key] {
        case nil: return nil
        case "true": return true
        case "false": return false
        default: throw .invalidValue(key, "Query parameter '\(key)' must be true or false.")
        }
    }

    /// The page asked for.
    func page() throws(HeraldError) -> PageRequest {
        var limit = 100
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
    static func cursor(after id: String) -> String { Base64URL.encode(Array((cursorPrefix + id).utf8)) }

    /// A list response body.
    static func page(_ items: [JSONValue], next: String?) -> JSONValue {
        .object(["data": .array(items), "next_cursor": next.map(JSONValue.string) ?? .null])
    }
}

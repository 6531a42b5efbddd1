import HeraldCore
import OpenAPIKit

/// A query parameter of a route: what `/openapi.yaml` documents and what ``ListQuery`` checks, from
/// one declaration.
package struct QueryParameter: Sendable {
    /// The values a parameter takes.
    package enum Kind: Sendable {
        /// 1 to `maxLength` characters, matching `pattern` (a whole-value regular expression) when
        /// given; a value that does not match is refused with `code`.
        case text(maxLength: Int, pattern: String?, code: String)
        /// One of these values.
        case choice([String])
        /// `true` or `false`.
        case boolean
        /// A page size, 1 to ``PageRequest/maxLimit``, default ``ListQuery/defaultLimit``.
        case limit
        /// The opaque `next_cursor` of the previous page.
        case cursor
    }

    package var name: String
    package var kind: Kind
    package var description: String?

    package init(name: String, kind: Kind, description: String? = nil) {
        self.name = name
        self.kind = kind
        self.description = description
    }

    /// A text parameter.
    package static func text(
        _ name: String, maxLength: Int, pattern: String? = nil, code: String = "invalid_value",
        description: String? = nil
    ) -> Self {
        QueryParameter(
            name: name, kind: .text(maxLength: maxLength, pattern: pattern, code: code), description: description)
    }

    /// A parameter taking the raw values of an enumeration.
    package static func choice<Value: RawRepresentable & CaseIterable>(
        _ name: String, _ type: Value.Type, description: String? = nil
    ) -> Self where Value.RawValue == String {
        QueryParameter(name: name, kind: .choice(Value.allCases.map(\.rawValue)), description: description)
    }

    /// A boolean parameter.
    package static func boolean(_ name: String, description: String? = nil) -> Self {
        QueryParameter(name: name, kind: .boolean, description: description)
    }

    /// `limit`: the page size.
    package static let limit = QueryParameter(name: "limit", kind: .limit, description: "Page size.")
    /// `cursor`: where the page starts.
    package static let cursor = QueryParameter(
        name: "cursor", kind: .cursor, description: "The next_cursor of the previous page.")

    /// The parameter's schema.
    package var schema: JSONSchema {
        switch kind {
        case .text(let maxLength, let pattern, _):
            .string(minLength: 1, maxLength: maxLength, pattern: pattern.map { "^(?:\($0))$" })
        case .choice(let values): .string(allowedValues: values.map { AnyCodable($0) })
        case .boolean: .boolean
        case .limit:
            .integer(
                maximum: (PageRequest.maxLimit, exclusive: false), minimum: (1, exclusive: false),
                defaultValue: AnyCodable(ListQuery.defaultLimit))
        case .cursor: .string(minLength: 1, pattern: "^[A-Za-z0-9_-]+$")
        }
    }

    /// The parameter as OpenAPI describes it.
    package var openAPI: OpenAPI.Parameter {
        .query(name: name, required: false, schema: schema, description: description)
    }

    /// Checks a value of the parameter (a cursor's content is checked when the page is read).
    /// - Throws: `HeraldError` naming the parameter.
    package func check(_ value: String) throws(HeraldError) {
        switch kind {
        case .text(let maxLength, let pattern, let code):
            guard !value.isEmpty, value.count <= maxLength else {
                throw .invalidValue(
                    name, code: "invalid_length", "Query parameter '\(name)' must be 1 to \(maxLength) characters.")
            }
            if let pattern, (try? Regex(pattern).wholeMatch(in: value)) == nil {
                throw .invalidValue(name, code: code, "Query parameter '\(name)' is not valid.")
            }
        case .choice(let values):
            guard values.contains(value) else {
                throw .invalidValue(
                    name, "Query parameter '\(name)' must be one of: \(values.joined(separator: ", ")).")
            }
        case .boolean:
            guard value == "true" || value == "false" else {
                throw .invalidValue(name, "Query parameter '\(name)' must be true or false.")
            }
        case .limit:
            guard let limit = Int(value), (1...PageRequest.maxLimit).contains(limit) else {
                throw .invalidValue(
                    name, code: "invalid_limit", "limit must be an integer from 1 to \(PageRequest.maxLimit).")
            }
        case .cursor:
            guard !value.isEmpty else {
                throw .invalidValue(name, code: "invalid_cursor", "cursor is not one returned by this list.")
            }
        }
    }
}

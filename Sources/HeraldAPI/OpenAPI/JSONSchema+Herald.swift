import OpenAPIKit

extension JSONSchema {
    /// A reference to a named schema (``APISchemas`` or a dialect's ``Dialect/schemas``); the
    /// document's validation (`OperationsTests`) fails on a name that none declares.
    package static func ref(_ name: String, description: String? = nil) -> JSONSchema {
        .reference(.component(named: name), description: description)
    }

    /// An object whose members are optional but those named in `requiring`; `closed` refuses
    /// members not listed (`additionalProperties: false`). An optional member may also be `null`,
    /// which Herald reads as absent (and a `PATCH` as "clear").
    package static func object(
        requiring required: Set<String> = [], closed: Bool = false, nullable: Bool = false,
        description: String? = nil, _ members: KeyValuePairs<String, JSONSchema>
    ) -> JSONSchema {
        object(
            requiring: required, closed: closed, nullable: nullable, description: description,
            members: members.map { ($0.key, $0.value) })
    }

    /// ``object(requiring:closed:nullable:description:_:)`` with members built in code (shared by
    /// several bodies).
    package static func object(
        requiring required: Set<String> = [], closed: Bool = false, nullable: Bool = false,
        description: String? = nil, members: [(String, JSONSchema)]
    ) -> JSONSchema {
        var properties: OrderedDictionary<String, JSONSchema> = [:]
        for (name, schema) in members {
            if required.contains(name) {
                properties[name] = schema
            } else if schema.isReference {
                properties[name] = .any(of: [schema, .null()], core: .init(required: false))
            } else {
                properties[name] = schema.optionalSchemaObject().nullableSchemaObject()
            }
        }
        precondition(required.isSubset(of: properties.keys), "required members must be listed")
        return .object(
            nullable: nullable, description: description, properties: properties,
            additionalProperties: closed ? .a(false) : nil)
    }

    /// A string taking the raw values of an enumeration.
    package static func choice<Value: RawRepresentable & CaseIterable>(
        _ type: Value.Type, nullable: Bool = false, description: String? = nil
    ) -> JSONSchema where Value.RawValue == String {
        .string(
            nullable: nullable, description: description, allowedValues: type.allCases.map { AnyCodable($0.rawValue) })
    }

    /// A string of these values.
    package static func choice(_ values: String..., description: String? = nil) -> JSONSchema {
        .string(description: description, allowedValues: values.map { AnyCodable($0) })
    }

    /// An RFC 3339 date-time string, or null when `nullable`.
    package static func dateTime(nullable: Bool = false, description: String? = nil) -> JSONSchema {
        .string(format: .dateTime, nullable: nullable, description: description)
    }

    /// A string that may be null.
    package static func nullableString(maxLength: Int? = nil, description: String? = nil) -> JSONSchema {
        .string(
            nullable: true, description: description, minLength: maxLength == nil ? nil : 1, maxLength: maxLength)
    }

    /// An array of strings, each 1 to `maxLength` characters.
    package static func strings(
        minItems: Int? = nil, maxItems: Int? = nil, maxLength: Int? = nil, pattern: String? = nil,
        nullable: Bool = false, description: String? = nil
    ) -> JSONSchema {
        .array(
            nullable: nullable, description: description, minItems: minItems, maxItems: maxItems,
            items: .string(minLength: maxLength == nil ? nil : 1, maxLength: maxLength, pattern: pattern))
    }

    /// Any JSON object.
    package static func anyObject(description: String? = nil) -> JSONSchema {
        .object(description: description)
    }
}

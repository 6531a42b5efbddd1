/// Reads the members of one JSON object field by field, turning every shape problem into a
/// `HeraldError` that names the field (with its dotted path for nested objects).
public struct JSONObjectReader: Sendable {
    /// The object's members.
    public let members: [String: JSONValue]
    /// The dotted path of the object itself, empty for the request body.
    public let path: String

    /// Wraps a value that must be an object.
    /// - Throws: `HeraldError.invalidType` when the value is not an object.
    public init(_ value: JSONValue, path: String = "") throws(HeraldError) {
        guard case .object(let members) = value else {
            throw path.isEmpty
                ? HeraldError(
                    kind: .badRequest, code: "invalid_body", message: "The request body must be a JSON object.")
                : .invalidType(path, expected: "an object")
        }
        self.members = members
        self.path = path
    }

    /// The full name of a member, for error messages.
    public func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// Whether the member is present (null counts as present).
    public func contains(_ key: String) -> Bool { members[key] != nil }

    /// Whether the member is present and explicitly null.
    public func isNull(_ key: String) -> Bool { members[key] == .null }

    /// Rejects any member outside `allowed`.
    /// - Throws: `HeraldError.unknownField` naming the first unknown member (in sorted order).
    public func rejectUnknown(allowed: Set<String>) throws(HeraldError) {
        if let unknown = members.keys.filter({ !allowed.contains($0) }).sorted().first {
            throw .unknownField(name(unknown))
        }
    }

    /// A string member; nil when absent or null.
    public func string(_ key: String) throws(HeraldError) -> String? {
        switch members[key] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        default: throw .invalidType(name(key), expected: "a string")
        }
    }

    /// A string member that must be present.
    public func requiredString(_ key: String) throws(HeraldError) -> String {
        guard let value = try string(key) else { throw .missingField(name(key)) }
        return value
    }

    /// A string member of bounded length (in characters); nil when absent or null.
    public func string(_ key: String, maxLength: Int, minLength: Int = 1) throws(HeraldError) -> String? {
        guard let value = try string(key) else { return nil }
        guard value.count >= minLength, value.count <= maxLength else {
            throw .invalidValue(
                name(key), code: "invalid_length",
                "Field '\(name(key))' must be \(minLength) to \(maxLength) characters long.")
        }
        return value
    }

    /// An integer member; nil when absent or null.
    public func integer(_ key: String, in range: ClosedRange<Int>) throws(HeraldError) -> Int? {
        switch members[key] {
        case nil, .null?: return nil
        case .number(let value)?:
            guard let integer = value.integerValue, integer >= range.lowerBound, integer <= range.upperBound else {
                throw .invalidValue(
                    name(key),
                    "Field '\(name(key))' must be an integer from \(range.lowerBound) to \(range.upperBound).")
            }
            return Int(integer)
        default: throw .invalidType(name(key), expected: "an integer")
        }
    }

    /// A number member, as a double; nil when absent or null.
    public func number(_ key: String) throws(HeraldError) -> Double? {
        switch members[key] {
        case nil, .null?: return nil
        case .number(let value)?: return value.doubleValue
        default: throw .invalidType(name(key), expected: "a number")
        }
    }

    /// A boolean member; nil when absent or null.
    public func bool(_ key: String) throws(HeraldError) -> Bool? {
        switch members[key] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        default: throw .invalidType(name(key), expected: "a boolean")
        }
    }

    /// An array-of-strings member; nil when absent or null.
    public func strings(_ key: String) throws(HeraldError) -> [String]? {
        switch members[key] {
        case nil, .null?: return nil
        case .array(let items)?:
            var result: [String] = []
            result.reserveCapacity(items.count)
            for (index, item) in items.enumerated() {
                guard case .string(let value) = item else {
                    throw .invalidType("\(name(key))[\(index)]", expected: "a string")
                }
                result.append(value)
            }
            return result
        default: throw .invalidType(name(key), expected: "an array of strings")
        }
    }

    /// A nested object member; nil when absent or null.
    public func object(_ key: String) throws(HeraldError) -> JSONObjectReader? {
        switch members[key] {
        case nil, .null?: return nil
        case let value?: return try JSONObjectReader(value, path: name(key))
        }
    }

    /// A raw-value enum member; nil when absent or null.
    public func enumeration<Value: RawRepresentable & CaseIterable>(
        _ key: String, as type: Value.Type
    ) throws(HeraldError) -> Value? where Value.RawValue == String {
        guard let raw = try string(key) else { return nil }
        guard let value = Value(rawValue: raw) else {
            let allowed = Value.allCases.map(\.rawValue).joined(separator: ", ")
            throw .invalidValue(name(key), "Field '\(name(key))' must be one of: \(allowed).")
        }
        return value
    }
}

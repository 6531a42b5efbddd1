/// A JSON value of any shape, used where Herald keeps free-form JSON (installation attributes,
/// payload data) and where request bodies are checked field by field before they are decoded.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number: integers exactly (see ``JSONNumber``).
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// A short name of the value's type, used in error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// The object's members, or nil when the value is not an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// Parses JSON text (RFC 8259, strictly: see ``JSONText``).
    /// - Throws: `HeraldError.invalidJSON`, naming what is wrong and where, when the bytes are not
    ///   one JSON value.
    public static func parse(_ bytes: some Collection<UInt8>) throws(HeraldError) -> JSONValue {
        let parsed: Result<JSONValue, HeraldError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(HeraldError) in try JSONText.parse(buffer) }
        }
        if let parsed { return try parsed.get() }
        return try Array(bytes).withUnsafeBufferPointer { buffer throws(HeraldError) in try JSONText.parse(buffer) }
    }

    /// Serializes the value as compact JSON with sorted keys (stable bytes for storage and size checks).
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        JSONText.write(self, to: &out)
        return out
    }
}

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(JSONNumber.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

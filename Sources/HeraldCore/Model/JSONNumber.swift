/// A JSON number, exact for every integer an `Int64` holds (badges, the ids apps put in custom
/// data, which a `Double` rounds above 2^53) and a `Double` otherwise.
///
/// Numbers are equal when their values are: `1` and `1.0` are one number (an integral `Double`
/// within `Int64`'s range is kept as the integer), so equality and hashing follow the value.
public struct JSONNumber: Sendable, Hashable, Comparable, CustomStringConvertible {
    private enum Storage: Sendable, Hashable {
        case integer(Int64)
        case double(Double)
    }

    private let storage: Storage

    /// An integer, exactly.
    public init(_ value: Int64) { storage = .integer(value) }

    /// An integer, exactly.
    public init(_ value: Int) { storage = .integer(Int64(value)) }

    /// A floating-point value; an integral one within `Int64`'s range is kept as that integer.
    public init(_ value: Double) {
        // -2^63 and 2^63 bound Int64; 2^63 itself is not an Int64.
        if value.rounded(.towardZero) == value, value >= -9.223_372_036_854_775_808e18,
            value < 9.223_372_036_854_775_808e18
        {
            storage = .integer(Int64(value))
        } else {
            storage = .double(value)
        }
    }

    /// The value as an integer when it is one.
    public var integerValue: Int64? {
        if case .integer(let value) = storage { return value }
        return nil
    }

    /// The value as a `Double` (rounded for integers beyond 2^53).
    public var doubleValue: Double {
        switch storage {
        case .integer(let value): Double(value)
        case .double(let value): value
        }
    }

    /// The number as JSON writes it.
    public var description: String {
        switch storage {
        case .integer(let value): String(value)
        case .double(let value): String(value)
        }
    }

    public static func < (lhs: JSONNumber, rhs: JSONNumber) -> Bool {
        switch (lhs.storage, rhs.storage) {
        case (.integer(let left), .integer(let right)): left < right
        default: lhs.doubleValue < rhs.doubleValue
        }
    }
}

extension JSONNumber: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral {
    public init(integerLiteral value: Int64) { self.init(value) }
    public init(floatLiteral value: Double) { self.init(value) }
}

extension JSONNumber: Codable {
    /// Reads an integer exactly when the JSON number is one, else a `Double`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Int64.self) {
            self.init(value)
        } else {
            self.init(try container.decode(Double.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch storage {
        case .integer(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        }
    }
}

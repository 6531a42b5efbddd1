import Foundation

extension InstallationQuery {
    /// Whether the installation is selected by the query, evaluated in memory with the semantics
    /// documented on ``InstallationQuery`` (the stores' compiled queries agree with it).
    public func matches(_ installation: Installation) -> Bool {
        switch self {
        case .and(let queries): queries.allSatisfy { $0.matches(installation) }
        case .or(let queries): queries.contains { $0.matches(installation) }
        case .condition(let field, let op): op.matches(FieldContent(field, of: installation))
        }
    }
}

extension InstallationQuery {
    /// Whether a record of a dialect's own table (LeanCloud's `_User`) matches: attribute paths
    /// read its saved JSON fields, the `id`, `created_at` and `updated_at` columns the record's
    /// own, and every other column reads as a missing field. The stores' record queries (the
    /// LeanCloud dialect's `LeanCloudUserStore.leanCloudUserIDs(appID:matching:limit:)`) agree with it.
    public func matches(record: QueryRecord) -> Bool {
        switch self {
        case .and(let queries): queries.allSatisfy { $0.matches(record: record) }
        case .or(let queries): queries.contains { $0.matches(record: record) }
        case .condition(let field, let op): op.matches(FieldContent(field, record: record))
        }
    }
}

/// What one field of one installation holds, as operators read it.
private struct FieldContent {
    /// One value the field holds: an element of an array, or the scalar itself.
    enum Element {
        case string(String)
        case number(JSONNumber)
        case bool(Bool)
        case date(Date)
        /// A null, array or object inside an array: no operator matches it.
        case other
    }

    /// The field is present and not null.
    var isPresent: Bool
    /// The scalar, or an array's elements; empty for a missing field, a null or an object.
    var elements: [Element]
    /// The point, when the field is a GeoPoint object.
    var point: GeoPoint?

    static let missing = FieldContent(isPresent: false, elements: [])

    init(isPresent: Bool, elements: [Element], point: GeoPoint? = nil) {
        self.isPresent = isPresent
        self.elements = elements
        self.point = point
    }

    init(_ field: QueryField, of installation: Installation) {
        switch field {
        case .column(let column): self = Self.column(column, of: installation)
        case .attribute(let path):
            var value: JSONValue? = .object(installation.attributes)
            for key in path { value = value?.objectValue?[key] }
            self = Self.json(value)
        }
    }

    init(_ field: QueryField, record: QueryRecord) {
        switch field {
        case .column(.id): self = FieldContent(isPresent: true, elements: [.string(record.id)])
        case .column(.createdAt): self = FieldContent(isPresent: true, elements: [.date(record.createdAt)])
        case .column(.updatedAt): self = FieldContent(isPresent: true, elements: [.date(record.updatedAt)])
        case .column: self = .missing
        case .attribute(let path):
            var value: JSONValue? = .object(record.fields)
            for key in path { value = value?.objectValue?[key] }
            self = Self.json(value)
        }
    }

    private static func column(_ column: QueryField.Column, of installation: Installation) -> FieldContent {
        func string(_ value: String?) -> FieldContent {
            value.map { FieldContent(isPresent: true, elements: [.string($0)]) } ?? .missing
        }
        func date(_ value: Date?) -> FieldContent {
            value.map { FieldContent(isPresent: true, elements: [.date($0)]) } ?? .missing
        }
        switch column {
        case .id: return string(installation.id)
        case .userID: return string(installation.userID)
        case .deviceID: return string(installation.deviceID)
        case .platform: return string(installation.platform.rawValue)
        case .service: return string(installation.service.rawValue)
        case .environment: return string(installation.environment.rawValue)
        case .channels: return FieldContent(isPresent: true, elements: installation.channels.map(Element.string))
        case .locale: return string(installation.locale)
        case .timezone: return string(installation.timezone)
        case .badge: return FieldContent(isPresent: true, elements: [.number(JSONNumber(installation.badge))])
        case .appVersion: return string(installation.appVersion)
        case .osVersion: return string(installation.osVersion)
        case .deviceModel: return string(installation.deviceModel)
        case .bundleID: return string(installation.bundleID)
        case .valid: return FieldContent(isPresent: true, elements: [.bool(installation.valid)])
        case .createdAt: return date(installation.createdAt)
        case .updatedAt: return date(installation.updatedAt)
        case .lastSeenAt: return date(installation.lastSeenAt)
        case .lastDeliveredAt: return date(installation.lastDeliveredAt)
        }
    }

    private static func json(_ value: JSONValue?) -> FieldContent {
        switch value {
        case nil, .null?: .missing
        case let object? where GeoPoint(json: object) != nil:
            FieldContent(isPresent: true, elements: [], point: GeoPoint(json: object))
        case .object?: FieldContent(isPresent: true, elements: [])
        case .array(let items)?: FieldContent(isPresent: true, elements: items.map(element))
        case let scalar?: FieldContent(isPresent: true, elements: [element(scalar)])
        }
    }

    private static func element(_ value: JSONValue) -> Element {
        switch value {
        case .string(let string): .string(string)
        case .number(let number): .number(number)
        case .bool(let bool): .bool(bool)
        case .null, .array, .object: .other
        }
    }
}

extension QueryOperator {
    fileprivate func matches(_ content: FieldContent) -> Bool {
        switch self {
        case .equal(let value): return Self.equal(content, value)
        case .notEqual(let value): return !Self.equal(content, value)
        case .in(let values): return values.contains { Self.equal(content, $0) }
        case .notIn(let values): return !values.contains { Self.equal(content, $0) }
        case .all(let values): return values.allSatisfy { Self.equal(content, $0) }
        case .exists(let exists): return content.isPresent == exists
        case .compare(let comparison, let value):
            return content.elements.contains { element in
                guard let order = Self.order(element, value) else { return false }
                switch comparison {
                case .lessThan: return order < 0
                case .lessThanOrEqual: return order <= 0
                case .greaterThan: return order > 0
                case .greaterThanOrEqual: return order >= 0
                }
            }
        case .regex(let pattern, let caseInsensitive):
            return content.elements.contains { element in
                guard case .string(let text) = element else { return false }
                return QueryRegex.matches(pattern, caseInsensitive: caseInsensitive, in: text)
            }
        case .nearSphere(let center, let maxDistance):
            guard let point = content.point else { return false }
            return maxDistance.map { point.distance(to: center) <= $0 } ?? true
        case .withinBox(let southwest, let northeast):
            return content.point?.isWithin(southwest: southwest, northeast: northeast) ?? false
        }
    }

    private static func equal(_ content: FieldContent, _ value: QueryValue) -> Bool {
        if value == .null { return !content.isPresent }
        return content.elements.contains { element in
            if case .bool(let bool) = element, case .bool(let expected) = value { return bool == expected }
            return order(element, value) == 0
        }
    }

    /// How an element orders against a value of the same type (negative, zero, positive), or nil
    /// when their types differ. Strings order by UTF-8 bytes, as SQLite's BINARY collation does
    /// (Swift's own `<` and `==` follow Unicode canonical equivalence instead).
    private static func order(_ element: FieldContent.Element, _ value: QueryValue) -> Int? {
        switch (element, value) {
        case (.number(let lhs), .number(let rhs)): return lhs < rhs ? -1 : (lhs == rhs ? 0 : 1)
        case (.date(let lhs), .date(let rhs)):
            // Compared as seconds since 1970, the representation stores keep.
            let left = lhs.timeIntervalSince1970
            let right = rhs.timeIntervalSince1970
            return left < right ? -1 : (left == right ? 0 : 1)
        case (.string(let lhs), .string(let rhs)):
            if lhs.utf8.elementsEqual(rhs.utf8) { return 0 }
            return lhs.utf8.lexicographicallyPrecedes(rhs.utf8) ? -1 : 1
        default: return nil
        }
    }
}

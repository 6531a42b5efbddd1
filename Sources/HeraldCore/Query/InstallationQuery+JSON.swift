import Foundation

extension InstallationQuery {
    /// The query as a native `where` object (column names, `attributes.<key>` paths, Parse Date
    /// objects) that ``init(parsing:field:)`` reads back to a query selecting the same
    /// installations: how a query parsed with a dialect's resolver is stored.
    public var json: JSONValue {
        switch self {
        case .and(let queries):
            // Conditions on distinct operators of a field merge into one object, as a `where` writes them.
            var object: [String: [String: JSONValue]] = [:]
            var rest: [JSONValue] = []
            for query in queries {
                if case .condition(let field, let op) = query, object[field.name]?[op.key] == nil,
                    !(op.key == "$regex" && object[field.name]?["$options"] != nil)
                {
                    object[field.name, default: [:]].merge(op.members) { first, _ in first }
                } else {
                    rest.append(query.json)
                }
            }
            var members = object.mapValues(JSONValue.object)
            if !rest.isEmpty { members["$and"] = .array(rest) }
            return .object(members)
        // `$or` needs an item; an empty disjunction selects nothing, as `id $in []` does.
        case .or(let queries) where queries.isEmpty:
            return .object(["id": .object(["$in": .array([])])])
        case .or(let queries): return .object(["$or": .array(queries.map(\.json))])
        case .condition(let field, let op): return .object([field.name: .object(op.members)])
        }
    }
}

extension QueryOperator {
    /// The operator's key in a `where` object.
    fileprivate var key: String {
        switch self {
        case .equal: "$eq"
        case .notEqual: "$ne"
        case .in: "$in"
        case .notIn: "$nin"
        case .all: "$all"
        case .exists: "$exists"
        case .compare(let comparison, _): comparison.rawValue
        case .regex: "$regex"
        case .nearSphere: "$nearSphere"
        case .withinBox: "$within"
        }
    }

    /// The operator's members in a field's object of operators.
    fileprivate var members: [String: JSONValue] {
        switch self {
        case .equal(let value), .notEqual(let value), .compare(_, let value): [key: value.json]
        case .in(let values), .notIn(let values), .all(let values): [key: .array(values.map(\.json))]
        case .exists(let exists): [key: .bool(exists)]
        case .regex(let pattern, let caseInsensitive):
            caseInsensitive ? [key: .string(pattern), "$options": .string("i")] : [key: .string(pattern)]
        case .nearSphere(let center, let maxDistance):
            maxDistance.map { [key: center.json, "$maxDistanceInRadians": .number(JSONNumber($0))] } ?? [
                key: center.json
            ]
        case .withinBox(let southwest, let northeast):
            [key: .object(["$box": .array([southwest.json, northeast.json])])]
        }
    }
}

extension QueryValue {
    /// The value as a query writes it; an instant as a Parse Date object with milliseconds.
    public var json: JSONValue {
        switch self {
        case .null: .null
        case .bool(let bool): .bool(bool)
        case .number(let number): .number(number)
        case .string(let string): .string(string)
        case .date(let date):
            .object([
                "__type": .string("Date"),
                "iso": .string(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))),
            ])
        }
    }
}

import Foundation
import HeraldCore

/// A `where` over LeanCloud objects as the API renders them (`_Notification`): each top-level
/// key compared with a value or `$eq $ne $in $nin $exists $lt $lte $gt $gte`; `$and` / `$or`
/// combine. Dates compare as their ISO 8601 strings (`{"__type": "Date", "iso": …}` reads as its
/// `iso`), which order as instants in LeanCloud's one format.
struct LeanCloudObjectQuery {
    private let clauses: [Clause]

    private indirect enum Clause {
        case field(String, String, JSONValue)
        case and([LeanCloudObjectQuery])
        case or([LeanCloudObjectQuery])
    }

    static let operators: Set<String> = ["$eq", "$ne", "$in", "$nin", "$exists", "$lt", "$lte", "$gt", "$gte"]

    /// Reads a where object.
    /// - Throws: `LeanCloudFailure` 102 for an operator or shape it does not take.
    init(parsing value: JSONValue, depth: Int = 1) throws(LeanCloudFailure) {
        guard depth <= InstallationQuery.maxDepth else { throw .invalidQuery("The where object nests too deep.") }
        guard case .object(let members) = value else { throw .invalidQuery("where must be an object.") }
        var clauses: [Clause] = []
        for (key, member) in members {
            if key == "$and" || key == "$or" {
                guard case .array(let items) = member, !items.isEmpty else {
                    throw .invalidQuery("\(key) takes a non-empty array of where objects.")
                }
                var queries: [LeanCloudObjectQuery] = []
                for item in items { queries.append(try LeanCloudObjectQuery(parsing: item, depth: depth + 1)) }
                clauses.append(key == "$and" ? .and(queries) : .or(queries))
            } else if case .object(let ops) = member, ops["__type"] == nil {
                for (op, operand) in ops {
                    guard Self.operators.contains(op) else { throw .invalidQuery("Unsupported operator \(op).") }
                    clauses.append(.field(key, op, operand))
                }
            } else {
                clauses.append(.field(key, "$eq", member))
            }
        }
        self.clauses = clauses
    }

    /// Whether the rendered object matches.
    func matches(_ object: [String: JSONValue]) -> Bool {
        clauses.allSatisfy { clause in
            switch clause {
            case .and(let queries): queries.allSatisfy { $0.matches(object) }
            case .or(let queries): queries.contains { $0.matches(object) }
            case .field(let key, let op, let operand): Self.test(object[key], op, operand)
            }
        }
    }

    private static func test(_ value: JSONValue?, _ op: String, _ operand: JSONValue) -> Bool {
        let field = value.map(comparable)
        switch op {
        case "$eq": return field == comparable(operand)
        case "$ne": return field != comparable(operand)
        case "$in", "$nin":
            guard case .array(let items) = operand else { return false }
            let found = items.contains { field == comparable($0) }
            return op == "$in" ? found : !found
        case "$exists": return (value != nil && value != .null) == (operand == .bool(true))
        default:
            guard let order = compare(field, comparable(operand)) else { return false }
            switch op {
            case "$lt": return order < 0
            case "$lte": return order <= 0
            case "$gt": return order > 0
            default: return order >= 0
            }
        }
    }

    /// A Date object as its ISO string, anything else as is.
    private static func comparable(_ value: JSONValue) -> JSONValue {
        if case .object(let members) = value, members["__type"] == .string("Date"), let iso = members["iso"] {
            return iso
        }
        return value
    }

    private static func compare(_ lhs: JSONValue?, _ rhs: JSONValue) -> Int? {
        switch (lhs, rhs) {
        case (.number(let a)?, .number(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.string(let a)?, .string(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        default: return nil
        }
    }
}

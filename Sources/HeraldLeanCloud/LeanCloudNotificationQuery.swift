import Foundation
import HeraldAPI
import HeraldCore

/// A `where` and an `order` over `_Notification` as the API renders its records
/// (``LeanCloudNotification``), translated to Herald's ``NotificationQuery`` for the store: each
/// top-level field compared with a value or `$eq $ne $in $nin $exists $lt $lte $gt $gte`; `$and` /
/// `$or` combine. `objectId`, `status` (LeanCloud's names: `in queue` is queued or sending),
/// `devices`, `successes`, `errors`, and the times `createdAt`, `updatedAt`, `push_time`,
/// `expiration_time` (Date objects or ISO 8601 strings, compared as instants) read the stored
/// notification; any other name is a field no record has.
package enum LeanCloudNotificationQuery {
    package static let operators: Set<String> = ["$eq", "$ne", "$in", "$nin", "$exists", "$lt", "$lte", "$gt", "$gte"]

    /// The rendered fields the store holds.
    package static let fields: [String: NotificationQuery.Field] = [
        "objectId": .id, "status": .status, "devices": .targeted, "successes": .sent, "errors": .failedOrInvalid,
        "createdAt": .createdAt, "updatedAt": .changedAt, "push_time": .notBefore, "expiration_time": .expiresAt,
    ]

    /// Rendered fields that are objects built from the notification's request: not queried.
    package static let unqueryable: Set<String> = ["data", "where"]

    /// The stored statuses a rendered status stands for (``LeanCloudNotification/status(_:)`` backwards:
    /// `in queue` is scheduled, queued or sending; an error message its one status).
    package static let statuses: [String: [NotificationStatus]] = Dictionary(
        grouping: NotificationStatus.allCases, by: { LeanCloudNotification.status($0) })

    /// Reads a where object.
    /// - Throws: `LeanCloudFailure` 102 for an operator, field or shape it does not take.
    package static func query(parsing value: JSONValue, depth: Int = 1) throws(LeanCloudFailure) -> NotificationQuery {
        guard depth <= InstallationQuery.maxDepth else { throw .invalidQuery("The where object nests too deep.") }
        guard case .object(let members) = value else { throw .invalidQuery("where must be an object.") }
        var clauses: [NotificationQuery] = []
        for (key, member) in members.sorted(by: { $0.key < $1.key }) {
            if key == "$and" || key == "$or" {
                guard case .array(let items) = member, !items.isEmpty,
                    items.count <= InstallationQuery.maxArrayValues
                else {
                    throw .invalidQuery(
                        "\(key) takes a non-empty array of at most \(InstallationQuery.maxArrayValues) where objects.")
                }
                var queries: [NotificationQuery] = []
                for item in items { queries.append(try query(parsing: item, depth: depth + 1)) }
                clauses.append(key == "$and" ? .and(queries) : .or(queries))
            } else if case .object(let ops) = member, ops["__type"] == nil {
                for (op, operand) in ops.sorted(by: { $0.key < $1.key }) {
                    guard operators.contains(op) else { throw .invalidQuery("Unsupported operator \(op).") }
                    clauses.append(try condition(key, op, operand))
                }
            } else {
                clauses.append(try condition(key, "$eq", member))
            }
        }
        return clauses.count == 1 ? clauses[0] : .and(clauses)
    }

    /// An `order` parameter (`-` descending): the keys of stored fields; the others are the same
    /// for every record (missing, or objects, which tie) and leave the order as it is.
    package static func order(_ text: String?) -> [QueryOrder<NotificationQuery.Field>] {
        guard let text else { return [] }
        return text.split(separator: ",").compactMap { key in
            let descending = key.hasPrefix("-")
            return fields[String(descending ? key.dropFirst() : key)].map { QueryOrder($0, descending: descending) }
        }
    }

    private static func condition(
        _ key: String, _ op: String, _ operand: JSONValue
    ) throws(LeanCloudFailure) -> NotificationQuery {
        if unqueryable.contains(key) { throw .invalidQuery("'\(key)' cannot be queried.") }
        guard let field = fields[key] else { return missing(op, operand) }
        func values() throws(LeanCloudFailure) -> [QueryValue] {
            guard case .array(let items) = operand, items.count <= InstallationQuery.maxArrayValues else {
                throw .invalidQuery(
                    "\(key).\(op) takes an array of at most \(InstallationQuery.maxArrayValues) values.")
            }
            var values: [QueryValue] = []
            for item in items { values += try value(item, of: field, key) }
            return values
        }
        let query: (QueryOperator) -> NotificationQuery = { .condition(field: field, op: $0) }
        switch op {
        case "$eq": return query(.in(try value(operand, of: field, key)))
        case "$ne": return query(.notIn(try value(operand, of: field, key)))
        case "$in": return query(.in(try values()))
        case "$nin": return query(.notIn(try values()))
        case "$exists":
            guard case .bool(let exists) = operand else { throw .invalidQuery("\(key).$exists takes true or false.") }
            return query(.exists(exists))
        default:
            guard field != .status, let comparison = QueryOperator.Comparison(rawValue: op) else {
                throw .invalidQuery("\(key) takes $eq, $ne, $in, $nin or $exists.")
            }
            let compared = try value(operand, of: field, key)
            guard let first = compared.first, compared.count == 1, first != .null else {
                throw .invalidQuery("\(key).\(op) takes a value.")
            }
            return query(.compare(comparison, first))
        }
    }

    /// The stored values a rendered value stands for: a status's stored statuses, a time's instant.
    private static func value(
        _ json: JSONValue, of field: NotificationQuery.Field, _ key: String
    ) throws(LeanCloudFailure) -> [QueryValue] {
        switch json {
        case .null: return [.null]
        case .bool(let bool): return [.bool(bool)]
        case .number(let number): return [.number(number)]
        case .string(let text) where field == .status:
            return (statuses[text] ?? []).map { .string($0.rawValue) }
        case .string(let text) where field.kind == .date:
            guard let date = LeanCloudDate.parse(text) else {
                throw .invalidQuery("\(key) compares with a Date object or an ISO 8601 date.")
            }
            return [.date(date)]
        case .string(let text): return [.string(text)]
        case .object(let members) where members["__type"] == .string("Date"):
            guard field.kind == .date, case .string(let text)? = members["iso"], let date = LeanCloudDate.parse(text)
            else { throw .invalidQuery("\(key) does not compare with this Date object.") }
            return [.date(date)]
        case .object, .array: throw .invalidQuery("\(key) compares with a value, not an object or array.")
        }
    }

    /// A condition on a field no record has: it holds for all of them or for none.
    private static func missing(_ op: String, _ operand: JSONValue) -> NotificationQuery {
        let holds: Bool =
            switch (op, operand) {
            case ("$eq", .null), ("$exists", .bool(false)): true
            case ("$ne", let value): value != .null
            case ("$in", .array(let items)): items.contains(.null)
            case ("$nin", .array(let items)): !items.contains(.null)
            default: false
            }
        return holds ? .and([]) : .or([])
    }
}

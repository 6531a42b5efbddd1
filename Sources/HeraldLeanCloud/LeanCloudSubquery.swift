import Foundation
import HeraldAPI
import HeraldCore

/// `$inQuery` / `$notInQuery` on a pointer field (`{"owner": {"$inQuery": {"where": {…},
/// "className": "_User"}}}`, or the push guide's bare form with the where object itself): the
/// sub-query runs over the `_User` class first, and the condition becomes the pointer's
/// `objectId` `$in` (or `$nin`) the users it found — at most ``maxMatches``, LeanCloud's sub-query
/// limit — so the engine sees an ordinary installation query. The sub-query is Herald's query
/// language over the `_User` records (``QueryRecord``), which the store runs as its own query.
package enum LeanCloudSubquery {
    /// A sub-query yields at most this many objects (LeanCloud's limit).
    package static let maxMatches = 1000

    /// The built-in fields of a `_User` record, by LeanCloud name.
    package static let recordColumns: [String: QueryField.Column] = [
        "objectId": .id, "createdAt": .createdAt, "updatedAt": .updatedAt,
    ]

    /// The where object with every `$inQuery` / `$notInQuery` replaced.
    /// - Parameter users: the ids of the `_User` objects a parsed sub-query matches.
    /// - Throws: `LeanCloudFailure` 102 for a sub-query that does not parse or names another class.
    package static func resolved(
        _ value: JSONValue, users: (InstallationQuery) async throws -> [String]
    ) async throws -> JSONValue {
        try await LeanCloudQuery.rewritten(value) { key, member in
            guard case .object(let operators) = member,
                let op = ["$inQuery", "$notInQuery"].first(where: { operators[$0] != nil })
            else { return nil }
            guard operators.count == 1, let subquery = operators[op] else {
                throw LeanCloudFailure.invalidQuery("\(key).\(op) stands alone in its field's object.")
            }
            let ids = try await users(try parse(subquery, path: "where.\(key).\(op)")).prefix(maxMatches)
            // Chunks within the query language's list limit: any chunk for $in, every one for $nin.
            let chunks = stride(from: 0, to: ids.count, by: InstallationQuery.maxArrayValues).map { start in
                Array(ids.dropFirst(start).prefix(InstallationQuery.maxArrayValues)).map(JSONValue.string)
            }
            let field = key + ".objectId"
            let inQuery = op == "$inQuery"
            let conditions = (chunks.isEmpty ? [[]] : chunks).map { chunk in
                JSONValue.object([field: .object([inQuery ? "$in" : "$nin": .array(chunk)])])
            }
            return [conditions.count == 1 ? conditions[0] : .object([inQuery ? "$or" : "$and": .array(conditions)])]
        }
    }

    /// The sub-query over `_User`: its fields are the users' saved fields, `objectId`, `createdAt`
    /// and `updatedAt` the record's own.
    private static func parse(_ subquery: JSONValue, path: String) throws(LeanCloudFailure) -> InstallationQuery {
        var whereObject = subquery
        if case .object(let wrapper) = subquery, case .object? = wrapper["where"] {
            if let className = wrapper["className"], className != .string(LeanCloudUserObject.className) {
                throw .invalidQuery("\(path) queries the _User class only.")
            }
            whereObject = wrapper["where"] ?? .object([:])
        }
        do throws(HeraldError) {
            return try InstallationQuery(parsing: whereObject, field: path) { name, fieldPath throws(HeraldError) in
                if let column = recordColumns[name] { return .column(column) }
                return try QueryField(parsing: "attributes." + name, path: fieldPath)
            }
        } catch { throw .invalidQuery(error.message) }
    }
}

/// `_User` objects as the REST API shows them.
package enum LeanCloudUserObject {
    package static let className = "_User"

    /// A new objectId: 24 lowercase hex characters, as LeanCloud's.
    package static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<12).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// The user as LeanCloud answers it.
    package static func json(_ user: LeanCloudUser) -> JSONValue {
        var object = user.fields
        object["objectId"] = .string(user.id)
        object["createdAt"] = .string(LeanCloudDate.string(user.createdAt))
        object["updatedAt"] = .string(LeanCloudDate.string(user.updatedAt))
        return .object(object)
    }

    /// The saved fields of a body: built-in names are not fields; `{"__op": "Delete"}` removes one.
    package static func fields(
        _ body: [String: JSONValue], over current: [String: JSONValue]
    ) throws(LeanCloudFailure)
        -> [String: JSONValue]
    {
        var fields = current
        for (key, value) in body where !["objectId", "createdAt", "updatedAt", "ACL"].contains(key) {
            guard key.first?.isLetter == true, key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }),
                key.count <= 128
            else { throw .invalidKeyName(key) }
            if case .object(let op) = value, op["__op"] == .string("Delete") {
                fields.removeValue(forKey: key)
            } else if case .object(let op) = value, op["__op"] != nil {
                throw .invalidType("\(key): only the Delete operation applies to _User fields here.")
            } else {
                fields[key] = value
            }
        }
        return fields
    }
}

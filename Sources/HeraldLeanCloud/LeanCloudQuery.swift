import Foundation
import HeraldAPI
import HeraldCore

/// LeanCloud's `_Installation` field names in queries, resolved to Herald's installation fields.
package enum LeanCloudQuery {
    /// The built-in fields a query can read, by LeanCloud name.
    package static let columns: [String: QueryField.Column] = [
        "objectId": .id, "deviceType": .platform, "installationId": .deviceID, "timeZone": .timezone,
        "channels": .channels, "badge": .badge, "apnsTopic": .bundleID, "appVersion": .appVersion,
        "valid": .valid, "createdAt": .createdAt, "updatedAt": .updatedAt,
        // Written by ``tokensResolved(_:lookup:)`` only: no LeanCloud field has a ':'.
        serviceField: .service,
    ]
    package static let serviceField = "herald:service"

    /// The token fields and the service whose installations hold them.
    package static let tokenFields: [String: PushService] = ["deviceToken": .apns, "registrationId": .fcm]

    /// The field a LeanCloud name reads: a built-in column, or a custom field (an attribute, at
    /// the top level as LeanCloud keeps them; `a.b` reads a nested key).
    /// - Throws: `HeraldError` `invalid_query` for built-in fields that cannot be queried and for
    ///   names no attribute can have.
    package static func resolve(_ name: String, path: String) throws(HeraldError) -> QueryField {
        if let column = columns[name] { return .column(column) }
        if LeanCloudInstallation.builtIn.contains(name) {
            throw .invalidValue(path, code: "invalid_query", "'\(name)' cannot be queried.")
        }
        return try QueryField(parsing: "attributes." + name, path: path)
    }

    /// An `order` parameter (`a,-b`: `-` descending) as keys over the fields it names, resolved
    /// as ``resolve(_:path:)`` resolves a where's.
    /// - Throws: `LeanCloudFailure` 102 for a field that cannot be sorted on (the encrypted tokens)
    ///   or named.
    package static func order(_ text: String?) throws(LeanCloudFailure) -> [QueryOrder<QueryField>] {
        guard let text else { return [] }
        var order: [QueryOrder<QueryField>] = []
        for key in text.split(separator: ",") {
            let descending = key.hasPrefix("-")
            let name = String(descending ? key.dropFirst() : key)
            do throws(HeraldError) {
                order.append(QueryOrder(try resolve(name, path: "order"), descending: descending))
            } catch { throw .invalidQuery("order: \(error.message)") }
        }
        return order
    }

    /// The where object with its token conditions replaced: tokens are kept encrypted, so
    /// `deviceToken` / `registrationId` equal to (or `$in`) tokens becomes `objectId $in` the
    /// installations holding them (looked up by `lookup`), and `$exists` becomes a condition on
    /// the installation's service.
    /// - Throws: `LeanCloudFailure` 102 for another operator on a token field.
    package static func tokensResolved(
        _ value: JSONValue, lookup: (PushService, String) async throws -> String?
    ) async throws -> JSONValue {
        try await rewritten(value) { key, member in
            guard let service = tokenFields[key] else { return nil }
            // Each token condition is its own clause, ANDed with the object's others.
            var clauses: [JSONValue] = []
            var condition: [String: JSONValue] = [:]
            switch member {
            case .string(let token): condition["$in"] = try await ids([.string(token)], service, lookup)
            case .object(let operators):
                for (op, operand) in operators {
                    switch (op, operand) {
                    case ("$eq", _): condition["$in"] = try await ids([operand], service, lookup)
                    case ("$in", .array(let tokens)): condition["$in"] = try await ids(tokens, service, lookup)
                    case ("$exists", .bool(let exists)):
                        clauses.append(
                            .object([serviceField: .object([exists ? "$eq" : "$ne": .string(service.rawValue)])]))
                    default:
                        throw LeanCloudFailure.invalidQuery(
                            "\(key) takes a value, $eq, $in or $exists (tokens are kept encrypted).")
                    }
                }
            default: throw LeanCloudFailure.invalidQuery("\(key) must be a string.")
            }
            if !condition.isEmpty { clauses.append(.object(["objectId": .object(condition)])) }
            return clauses
        }
    }

    /// A where object with some fields' conditions replaced, inside `$and` / `$or` too: `rewrite`
    /// answers the clauses that stand for a field's condition (ANDed with the object's others), or
    /// nil to keep it as it is.
    package static func rewritten(
        _ value: JSONValue, rewrite: (String, JSONValue) async throws -> [JSONValue]?
    ) async throws -> JSONValue {
        guard case .object(let members) = value else { return value }
        var result: [String: JSONValue] = [:]
        var clauses: [JSONValue] = []
        for (key, member) in members {
            if key == "$and" || key == "$or", case .array(let items) = member {
                var resolved: [JSONValue] = []
                for item in items { resolved.append(try await rewritten(item, rewrite: rewrite)) }
                result[key] = .array(resolved)
            } else if let replacement = try await rewrite(key, member) {
                clauses += replacement
            } else {
                result[key] = member
            }
        }
        if !clauses.isEmpty {
            if case .array(let items)? = result["$and"] { clauses = items + clauses }
            result["$and"] = .array(clauses)
        }
        return .object(result)
    }

    /// The ids of the installations holding `tokens` (none for a token no installation holds).
    private static func ids(
        _ tokens: [JSONValue], _ service: PushService, _ lookup: (PushService, String) async throws -> String?
    ) async throws -> JSONValue {
        guard tokens.count <= InstallationQuery.maxArrayValues else {
            throw LeanCloudFailure.invalidQuery("At most \(InstallationQuery.maxArrayValues) tokens.")
        }
        var ids: [JSONValue] = []
        for token in tokens {
            guard case .string(let text) = token else { throw LeanCloudFailure.invalidQuery("Tokens are strings.") }
            let normalized = service == .apns ? text.lowercased() : text
            if let id = try await lookup(service, normalized) { ids.append(.string(id)) }
        }
        return .array(ids)
    }
}

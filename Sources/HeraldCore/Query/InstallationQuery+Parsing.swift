import Foundation

extension InstallationQuery {
    /// Parses a `where` object of the LeanCloud/Parse query language.
    ///
    /// Keys of one object are ANDed, as are several operators on one field; a plain value means
    /// `$eq`; `$and` and `$or` take non-empty arrays of query objects. Dates are RFC 3339 strings
    /// or Parse's `{"__type": "Date", "iso": "…"}`. `{}` matches every installation.
    /// - Parameter field: the name of `value` in the request, the prefix of every error's field.
    /// - Throws: `HeraldError` naming the exact field at fault (as in `target.where.$or[1].badge.$gt`),
    ///   with code `unknown_operator` for a `$` operator Herald does not know, `invalid_regex` for
    ///   a pattern that does not compile, `query_too_complex` past ``maxDepth``, ``maxArrayValues``
    ///   or ``maxConditions``, and `invalid_query` for any other problem of shape or type.
    public init(parsing value: JSONValue, field: String = "target.where") throws(HeraldError) {
        try self.init(parsing: value, field: field, resolver: QueryField.init(parsing:path:))
    }

    /// Parses a `where` object whose field names are a dialect's own: `resolver` maps each name
    /// (as written, with its path for errors) to the field it reads, in place of the native names
    /// of ``QueryField/init(parsing:path:)``. Operators, values and limits are as above.
    /// - Throws: `HeraldError` as above, or what `resolver` throws for a name it refuses.
    public init(
        parsing value: JSONValue, field: String, resolver: @escaping QueryFieldResolver
    ) throws(HeraldError) {
        var parser = QueryParser(resolver: resolver)
        self = try parser.query(value, path: field, depth: 1)
    }
}

/// Maps a field name of a `where` object, and its path in the request (for errors), to the field
/// it reads.
public typealias QueryFieldResolver = (_ name: String, _ path: String) throws(HeraldError) -> QueryField

/// Reads query objects recursively, counting conditions against the limits.
private struct QueryParser {
    var conditions = 0
    let resolver: QueryFieldResolver

    mutating func query(_ value: JSONValue, path: String, depth: Int) throws(HeraldError) -> InstallationQuery {
        guard depth <= InstallationQuery.maxDepth else {
            throw tooComplex(path, "Query objects nest at most \(InstallationQuery.maxDepth) deep.")
        }
        guard case .object(let members) = value else {
            throw invalid(path, "Field '\(path)' must be a query object, not \(value.typeName).")
        }
        var clauses: [InstallationQuery] = []
        for (key, member) in members.sorted(by: { $0.key < $1.key }) {
            let memberPath = join(path, key)
            switch key {
            case "$and", "$or":
                try count(memberPath)
                guard case .array(let items) = member, !items.isEmpty else {
                    throw invalid(memberPath, "Field '\(memberPath)' must be a non-empty array of query objects.")
                }
                guard items.count <= InstallationQuery.maxArrayValues else {
                    throw tooComplex(
                        memberPath, "'\(key)' takes at most \(InstallationQuery.maxArrayValues) query objects.")
                }
                var queries: [InstallationQuery] = []
                for (index, item) in items.enumerated() {
                    queries.append(try query(item, path: "\(memberPath)[\(index)]", depth: depth + 1))
                }
                clauses.append(key == "$and" ? .and(queries) : .or(queries))
            case _ where key.hasPrefix("$"):
                throw unknownOperator(memberPath, key)
            default:
                let field = try resolver(key, memberPath)
                clauses += try conditions(on: field, member, path: memberPath)
            }
        }
        return clauses.count == 1 ? clauses[0] : .and(clauses)
    }

    /// The conditions of one field: a plain value (`$eq`) or an object of operators.
    private mutating func conditions(
        on field: QueryField, _ value: JSONValue, path: String
    ) throws(HeraldError) -> [InstallationQuery] {
        guard case .object(let operators) = value, operators["__type"] == nil else {
            try count(path)
            return [.condition(field: field, op: .equal(try operand(value, of: field, path: path, membership: true)))]
        }
        guard !operators.isEmpty else {
            throw invalid(path, "Field '\(path)' needs a value or at least one operator.")
        }
        if let key = operators.keys.sorted().first(where: { !$0.hasPrefix("$") }) {
            throw invalid(
                join(path, key),
                "Objects are not compared as values; name the nested attribute instead, as in 'attributes.a.b'.")
        }
        if operators["$options"] != nil, operators["$regex"] == nil {
            throw invalid(join(path, "$options"), "'$options' goes beside '$regex'.")
        }
        var result: [InstallationQuery] = []
        if operators["$nearSphere"] == nil,
            let key = operators.keys.sorted().first(where: { GeoQuery.distanceKeys[$0] != nil })
        {
            throw invalid(join(path, key), "'\(key)' goes beside '$nearSphere'.")
        }
        for (key, operand) in operators.sorted(by: { $0.key < $1.key })
        where key != "$options" && GeoQuery.distanceKeys[key] == nil {
            let operatorPath = join(path, key)
            try count(operatorPath)
            let op: QueryOperator
            switch key {
            case "$eq": op = .equal(try self.operand(operand, of: field, path: operatorPath, membership: true))
            case "$ne": op = .notEqual(try self.operand(operand, of: field, path: operatorPath, membership: true))
            case "$in": op = .in(try list(operand, of: field, path: operatorPath, allowsNull: true))
            case "$nin": op = .notIn(try list(operand, of: field, path: operatorPath, allowsNull: true))
            case "$all":
                let values = try list(operand, of: field, path: operatorPath, allowsNull: false)
                guard !values.isEmpty else {
                    throw invalid(operatorPath, "'$all' needs at least one value.")
                }
                op = .all(values)
            case "$exists":
                guard case .bool(let exists) = operand else {
                    throw invalid(operatorPath, "Field '\(operatorPath)' must be a boolean.")
                }
                op = .exists(exists)
            case "$regex":
                op = try regex(operand, options: operators["$options"], of: field, path: path)
            case "$nearSphere", "$within":
                op = try GeoQuery.parse(key, operand, operators: operators, field: field, path: path)
            case "$and", "$or":
                throw invalid(operatorPath, "'\(key)' combines query objects; it cannot apply to one field.")
            default:
                guard let comparison = QueryOperator.Comparison(rawValue: key) else {
                    throw unknownOperator(operatorPath, key)
                }
                op = .compare(comparison, try ordered(operand, of: field, path: operatorPath))
            }
            result.append(.condition(field: field, op: op))
        }
        return result
    }

    // MARK: Operands

    /// A value to test equality with. `membership` checks `platform`, `service` and
    /// `environment` values against the values Herald knows, to catch typos.
    private func operand(
        _ value: JSONValue, of field: QueryField, path: String, membership: Bool
    ) throws(HeraldError) -> QueryValue {
        if value == .null { return .null }
        guard case .column(let column) = field else {
            switch value {
            case .string(let string): return .string(string)
            case .number(let number): return .number(number)
            case .bool(let bool): return .bool(bool)
            default:
                throw invalid(
                    path, "Field '\(path)' must be a string, number, boolean or null, not \(value.typeName).")
            }
        }
        switch (column.kind, value) {
        case (.string, .string(let string)):
            if membership { try checkKnown(string, of: column, path: path) }
            return .string(string)
        case (.strings, .string(let string)): return .string(string)
        case (.integer, .number(let number)): return .number(number)
        case (.boolean, .bool(let bool)): return .bool(bool)
        case (.date, _): return .date(try date(value, path: path))
        case (.string, _), (.strings, _): throw invalid(path, "Field '\(path)' must be a string.")
        case (.integer, _): throw invalid(path, "Field '\(path)' must be a number.")
        case (.boolean, _): throw invalid(path, "Field '\(path)' must be a boolean.")
        }
    }

    private func list(
        _ value: JSONValue, of field: QueryField, path: String, allowsNull: Bool
    ) throws(HeraldError) -> [QueryValue] {
        guard case .array(let items) = value else {
            throw invalid(path, "Field '\(path)' must be an array.")
        }
        guard items.count <= InstallationQuery.maxArrayValues else {
            throw tooComplex(path, "An operator takes at most \(InstallationQuery.maxArrayValues) values.")
        }
        var values: [QueryValue] = []
        for (index, item) in items.enumerated() {
            let itemPath = "\(path)[\(index)]"
            if item == .null, !allowsNull { throw invalid(itemPath, "Field '\(itemPath)' cannot be null.") }
            values.append(try operand(item, of: field, path: itemPath, membership: true))
        }
        return values
    }

    /// A value to order with: a number, string or date, of the field's type.
    private func ordered(_ value: JSONValue, of field: QueryField, path: String) throws(HeraldError) -> QueryValue {
        if case .column(let column) = field, column.kind == .boolean {
            throw invalid(path, "Field '\(column.rawValue)' is a boolean; it cannot be ordered.")
        }
        let result = try operand(value, of: field, path: path, membership: false)
        switch result {
        case .number, .string, .date: return result
        case .null, .bool:
            throw invalid(path, "Field '\(path)' must be a number, string or date, not \(value.typeName).")
        }
    }

    private func regex(
        _ value: JSONValue, options: JSONValue?, of field: QueryField, path: String
    ) throws(HeraldError) -> QueryOperator {
        let patternPath = join(path, "$regex")
        if case .column(let column) = field, column.kind != .string, column.kind != .strings {
            throw invalid(patternPath, "'$regex' applies to string fields; '\(column.rawValue)' is not one.")
        }
        guard case .string(let pattern) = value else {
            throw invalid(patternPath, "Field '\(patternPath)' must be a string.")
        }
        guard pattern.utf8.count <= InstallationQuery.maxPatternLength else {
            throw tooComplex(patternPath, "A pattern is at most \(InstallationQuery.maxPatternLength) bytes.")
        }
        if let problem = QueryRegex.complexityProblem(pattern) {
            throw tooComplex(patternPath, problem)
        }
        var caseInsensitive = false
        if let options {
            let optionsPath = join(path, "$options")
            guard case .string(let flags) = options else {
                throw invalid(optionsPath, "Field '\(optionsPath)' must be a string.")
            }
            guard flags.allSatisfy({ $0 == "i" }) else {
                throw invalid(optionsPath, "Only the 'i' option (case-insensitive) is supported.")
            }
            caseInsensitive = !flags.isEmpty
        }
        do {
            _ = try QueryRegex.compile(pattern, caseInsensitive: caseInsensitive)
        } catch {
            throw .invalidValue(patternPath, code: "invalid_regex", "The pattern is not a valid regular expression.")
        }
        return .regex(pattern: pattern, caseInsensitive: caseInsensitive)
    }

    /// An RFC 3339 string, or Parse's `{"__type": "Date", "iso": "…"}`.
    private func date(_ value: JSONValue, path: String) throws(HeraldError) -> Date {
        switch value {
        case .string(let text):
            guard let date = Self.parseDate(text) else {
                throw invalid(path, "Field '\(path)' must be an RFC 3339 date, as in '2026-01-01T00:00:00Z'.")
            }
            return date
        case .object(let members) where members["__type"] == .string("Date"):
            if let extra = members.keys.sorted().first(where: { $0 != "__type" && $0 != "iso" }) {
                throw invalid(join(path, extra), "A Date object has only '__type' and 'iso'.")
            }
            let isoPath = join(path, "iso")
            guard case .string(let text) = members["iso"], let date = Self.parseDate(text) else {
                throw invalid(isoPath, "Field '\(isoPath)' must be an RFC 3339 date, as in '2026-01-01T00:00:00.000Z'.")
            }
            return date
        case .object(let members) where members["__type"] != nil:
            throw invalid(join(path, "__type"), "Only the 'Date' type is supported.")
        default:
            throw invalid(path, "Field '\(path)' must be a date: an RFC 3339 string or a Parse Date object.")
        }
    }

    static func parseDate(_ text: String) -> Date? {
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        return try? Date.ISO8601FormatStyle().parse(text)
    }

    private func checkKnown(_ value: String, of column: QueryField.Column, path: String) throws(HeraldError) {
        let allowed: [String]
        switch column {
        case .platform: allowed = Platform.allCases.map(\.rawValue)
        case .service: allowed = PushService.allCases.map(\.rawValue)
        case .environment: allowed = PushEnvironment.allCases.map(\.rawValue)
        default: return
        }
        guard allowed.contains(value) else {
            throw invalid(path, "Field '\(path)' must be one of: \(allowed.joined(separator: ", ")).")
        }
    }

    // MARK: Limits and errors

    private mutating func count(_ path: String) throws(HeraldError) {
        conditions += 1
        guard conditions <= InstallationQuery.maxConditions else {
            throw tooComplex(path, "A query has at most \(InstallationQuery.maxConditions) conditions.")
        }
    }

    private func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    private func invalid(_ path: String, _ message: String) -> HeraldError {
        .invalidValue(path, code: "invalid_query", message)
    }

    private func tooComplex(_ path: String, _ message: String) -> HeraldError {
        .invalidValue(path, code: "query_too_complex", message)
    }

    private func unknownOperator(_ path: String, _ key: String) -> HeraldError {
        .invalidValue(path, code: "unknown_operator", "Unknown query operator '\(key)'.")
    }
}

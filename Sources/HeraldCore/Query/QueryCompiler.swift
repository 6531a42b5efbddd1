import Foundation

/// Compiles installation and notification queries to one store's SQL: a boolean expression for a
/// `WHERE` clause, and `ORDER BY` terms. It does no I/O; it returns SQL text and the values to
/// bind. What differs between stores comes from `dialect`.
///
/// Every expression it returns is true or false, never NULL, so it can be negated safely, and it
/// selects exactly what ``InstallationQuery/matches(_:)`` accepts: types compare strictly (a
/// number never equals a string or a boolean), a missing field is null, a path never walks into an
/// array, and a field that holds an array matches when one of its elements does.
public struct QueryCompiler<Dialect: QueryDialect>: Sendable {
    public var dialect: Dialect

    public init(_ dialect: Dialect) {
        self.dialect = dialect
    }

    private var `true`: SQLFragment { SQLFragment(dialect.trueLiteral) }
    private var `false`: SQLFragment { SQLFragment(dialect.falseLiteral) }

    /// The installation query as a boolean expression over `table`'s columns.
    public func expression(_ query: InstallationQuery, over table: QueryTable) -> SQLFragment {
        switch query {
        case .and(let queries): .joined(queries.map { expression($0, over: table) }, by: "AND", empty: self.true)
        case .or(let queries): .joined(queries.map { expression($0, over: table) }, by: "OR", empty: self.false)
        case .condition(.column(.channels), let op) where table.hasChannels: channels(op)
        case .condition(.column(let column), let op):
            if let name = table.column(column) {
                condition(column: name, kind: column.kind, isNullable: column.isNullable, op)
            } else {
                // A column the table lacks is the field missing.
                condition(column: dialect.missingColumn(column.kind), kind: column.kind, isNullable: true, op)
            }
        case .condition(.attribute(let path), let op):
            attribute(QueryAttribute(column: table.attributes, keys: path), op)
        }
    }

    /// `ORDER BY` terms for `order`, then the id (see ``QueryOrder``), without the keywords.
    public func orderBy(_ order: [QueryOrder<QueryField>], over table: QueryTable) -> SQLFragment {
        var terms: [SQLFragment] = []
        for key in order {
            switch key.field {
            case .column(.channels): continue  // Arrays tie.
            case .column(let column):
                guard let name = table.column(column) else { continue }
                terms.append(SQLFragment(dialect.orderTerm(name, kind: column.kind, descending: key.descending)))
            case .attribute(let path):
                terms += dialect.orderTerms(
                    QueryAttribute(column: table.attributes, keys: path), descending: key.descending)
            }
        }
        terms.append(SQLFragment("id"))
        return .list(terms)
    }

    /// The notification query as a boolean expression over the `notifications` table.
    public func expression(_ query: NotificationQuery) -> SQLFragment {
        switch query {
        case .and(let queries): .joined(queries.map { expression($0) }, by: "AND", empty: self.true)
        case .or(let queries): .joined(queries.map { expression($0) }, by: "OR", empty: self.false)
        case .condition(let field, let op):
            condition(column: field.sqlExpression, kind: field.kind, isNullable: field.isNullable, op)
        }
    }

    /// `ORDER BY` terms for `order`, then the id, without the keywords.
    public func orderBy(_ order: [QueryOrder<NotificationQuery.Field>]) -> String {
        (order.map { dialect.orderTerm($0.field.sqlExpression, kind: $0.field.kind, descending: $0.descending) }
            + ["id"]).joined(separator: ", ")
    }

    /// Equality and membership built from a field's test for being one of some values; nil for
    /// the other operators.
    private func membership(_ op: QueryOperator, member: ([QueryValue]) -> SQLFragment) -> SQLFragment? {
        switch op {
        case .equal(let value): member([value])
        case .notEqual(let value): member([value]).negated
        case .in(let values): member(values)
        case .notIn(let values): member(values).negated
        case .all(let values): .joined(values.map { member([$0]) }, by: "AND", empty: self.true)
        case .exists, .compare, .regex, .nearSphere, .withinBox: nil
        }
    }

    private func comparison(
        _ subject: String, _ comparison: QueryOperator.Comparison, _ value: SQLFragment
    )
        -> SQLFragment
    {
        SQLFragment("\(subject) \(comparison.sqlOperator) ") + value
    }

    // MARK: Scalar columns

    /// A condition on a scalar column (or an expression) of one kind: a null column is the field
    /// missing, and a value of another type never equals it nor orders against it.
    func condition(
        column name: String, kind: QueryField.Column.Kind, isNullable: Bool, _ op: QueryOperator
    )
        -> SQLFragment
    {
        /// The value bound as the column holds it; nil when it is of another type (or null).
        func operand(_ value: QueryValue) -> SQLFragment? {
            switch (kind, value) {
            case (.string, .string), (.integer, .number), (.boolean, .bool), (.date, .date): dialect.bound(value)
            default: nil
            }
        }
        /// A comparison that would be NULL on a NULL column is false there instead.
        func guarded(_ comparison: SQLFragment) -> SQLFragment {
            isNullable ? SQLFragment("(\(name) IS NOT NULL AND ") + comparison + SQLFragment(")") : comparison
        }
        func member(of values: [QueryValue]) -> SQLFragment {
            var parts: [SQLFragment] = []
            let present = values.compactMap(operand)
            if !present.isEmpty {
                parts.append(guarded(SQLFragment("\(name) IN (") + .list(present) + SQLFragment(")")))
            }
            if values.contains(.null), isNullable { parts.append(SQLFragment("\(name) IS NULL")) }
            return .joined(parts, by: "OR", empty: self.false)
        }
        if let membership = membership(op, member: member) { return membership }
        switch op {
        case .equal, .notEqual, .in, .notIn, .all: return self.false
        case .exists(let exists):
            guard isNullable else { return exists ? self.true : self.false }
            return SQLFragment(exists ? "\(name) IS NOT NULL" : "\(name) IS NULL")
        case .compare(let op, let value):
            // Booleans have no order.
            guard kind != .boolean, let operand = operand(value) else { return self.false }
            return guarded(comparison(name + (kind == .string ? dialect.byteOrder : ""), op, operand))
        case .regex(let pattern, let caseInsensitive):
            guard kind == .string else { return self.false }
            return guarded(dialect.regex(name, pattern: pattern, caseInsensitive: caseInsensitive))
        case .nearSphere, .withinBox: return self.false
        }
    }

    // MARK: The channels array

    /// A test on the elements of the `channels` array (always present, never null, strings only).
    private func channels(_ op: QueryOperator) -> SQLFragment {
        func member(of values: [QueryValue]) -> SQLFragment {
            // Channel names are strings, so nothing else matches.
            let names: [String] = values.compactMap { if case .string(let name) = $0 { name } else { nil } }
            return names.isEmpty ? self.false : dialect.channelsContain(anyOf: names)
        }
        if let membership = membership(op, member: member) { return membership }
        switch op {
        case .equal, .notEqual, .in, .notIn, .all: return self.false
        case .exists(let exists): return exists ? self.true : self.false
        case .compare(let op, let value):
            guard case .string = value else { return self.false }
            return dialect.channelElement(where: comparison("value" + dialect.byteOrder, op, dialect.bound(value)))
        case .regex(let pattern, let caseInsensitive):
            return dialect.channelElement(
                where: dialect.regex("value", pattern: pattern, caseInsensitive: caseInsensitive))
        case .nearSphere, .withinBox: return self.false
        }
    }

    // MARK: Attribute paths

    /// A test on the value in a JSON object column at a path of validated keys.
    private func attribute(_ attribute: QueryAttribute, _ op: QueryOperator) -> SQLFragment {
        /// Present and not null; JSON null and a missing key both read as missing.
        let present = SQLFragment("COALESCE(") + dialect.type(of: attribute) + SQLFragment(", 'null') <> 'null'")
        /// Whether the field equals one of the values: null for a missing or null field, the
        /// dialect's test for the others (a date is never in a JSON value).
        func member(of values: [QueryValue]) -> SQLFragment {
            var parts: [SQLFragment] = []
            let jsonValues = values.filter { $0 != .null && !$0.isDate }
            if !jsonValues.isEmpty { parts.append(dialect.attribute(attribute, equalsAnyOf: jsonValues)) }
            if values.contains(.null) { parts.append(present.negated) }
            return .joined(parts, by: "OR", empty: self.false)
        }
        func element(_ predicate: SQLFragment) -> SQLFragment { dialect.element(of: attribute, where: predicate) }
        if let membership = membership(op, member: member) { return membership }
        switch op {
        case .equal, .notEqual, .in, .notIn, .all: return self.false
        case .exists(let exists): return exists ? present : present.negated
        case .compare(let op, let value):
            switch value {
            case .string:
                return element(
                    SQLFragment("\(dialect.elementIsText) AND ")
                        + comparison(dialect.elementText + dialect.byteOrder, op, dialect.bound(value)))
            case .number:
                return element(
                    SQLFragment("\(dialect.elementIsNumber) AND ")
                        + comparison(dialect.elementNumber, op, dialect.bound(value)))
            case .null, .bool, .date: return self.false
            }
        case .regex(let pattern, let caseInsensitive):
            return element(
                SQLFragment("\(dialect.elementIsText) AND ")
                    + dialect.regex(dialect.elementText, pattern: pattern, caseInsensitive: caseInsensitive))
        case .nearSphere(let center, let maxDistance):
            let point = dialect.geoPoint(attribute)
            guard let maxDistance else {
                return SQLFragment("(herald_geo_distance(") + point + SQLFragment(", 0, 0) IS NOT NULL)")
            }
            return SQLFragment("COALESCE(herald_geo_distance(") + point + SQLFragment(", ")
                + .bound(.double(center.latitude)) + SQLFragment(", ") + .bound(.double(center.longitude))
                + SQLFragment(") <= ") + .bound(.double(maxDistance)) + SQLFragment(", \(dialect.falseLiteral))")
        case .withinBox(let southwest, let northeast):
            let corners = [southwest.latitude, southwest.longitude, northeast.latitude, northeast.longitude]
            return SQLFragment("herald_geo_within(") + dialect.geoPoint(attribute) + SQLFragment(", ")
                + .list(corners.map { .bound(.double($0)) }) + SQLFragment(")")
        }
    }
}

extension QueryValue {
    fileprivate var isDate: Bool { if case .date = self { true } else { false } }
}

import Foundation
import HeraldCore

/// A LeanCloud CQL statement (`select * from _Installation where …`), translated to the `where`
/// object of the query language, which ``InstallationQuery`` then parses and checks like any
/// other (CQL is "converted to the REST API's where conditions", LeanCloud's guide says).
///
/// Supported: `select <* | count(*) | keys> from <class> [where …] [limit [skip,] n]
/// [order by …]`; conditions `= != <> < <= > >=`, `[not] in (…)`, `all (…)`, `is [not] exists`,
/// `like` (`%` any run, `_` one character, matched against the whole value) and `regexp`, `near
/// <point> [max <n> km|kilometers|miles|radians]`, `within <point> and <point>`, `and` (binding
/// tighter than `or`) and parentheses; values are strings (`'…'` or `"…"`), numbers, `true`,
/// `false`, `null`, `date('…')`, `pointer('Class', 'id')` (matched on the field's `objectId` and
/// `className`), `geopoint(latitude, longitude)` and `[latitude, longitude]` (LeanCloud's
/// `AVGeoPoint(latitude, longitude)` order). Not supported, with an error naming them:
/// sub-queries, `not like`, `not regexp`, `related … to`, `include`.
package struct CQLStatement: Sendable, Equatable {
    /// The class queried (`_Installation`).
    package var className: String
    /// The `where` object; `{}` without a `where` clause.
    package var whereObject: JSONValue
    /// `select count(*) …`.
    package var count: Bool
    /// The selected keys; nil for `*`.
    package var keys: [String]?
    package var skip: Int?
    package var limit: Int?
    /// `order by`, as the REST API's `order` parameter (`-score,name`).
    package var order: String?

    package init(
        className: String, whereObject: JSONValue, count: Bool, keys: [String]?, skip: Int?, limit: Int?,
        order: String?
    ) {
        self.className = className
        self.whereObject = whereObject
        self.count = count
        self.keys = keys
        self.skip = skip
        self.limit = limit
        self.order = order
    }

    /// CQL statements are at most this many bytes (LeanCloud's limit).
    package static let maxLength = 4096

    /// Parses a statement.
    /// - Throws: `HeraldError` `invalid_query` naming `field` and saying what is wrong where.
    package init(parsing text: String, field: String = "cql") throws(HeraldError) {
        guard text.utf8.count <= Self.maxLength else {
            throw .invalidValue(field, code: "invalid_query", "A CQL statement is at most \(Self.maxLength) bytes.")
        }
        var parser = try CQLParser(text, field: field)
        self = try parser.statement()
    }
}

/// One token of CQL.
private enum CQLToken: Equatable {
    case word(String)
    case string(String)
    case number(Double, String)
    case symbol(String)
}

/// A recursive-descent parser over CQL's tokens.
private struct CQLParser {
    package let field: String
    package var tokens: [CQLToken]
    package var position = 0

    package init(_ text: String, field: String) throws(HeraldError) {
        self.field = field
        tokens = []
        let characters = Array(text)
        var index = 0
        func fail(_ message: String) -> HeraldError {
            .invalidValue(field, code: "invalid_query", "CQL: \(message) at character \(index + 1).")
        }
        while index < characters.count {
            let character = characters[index]
            if character.isWhitespace {
                index += 1
            } else if character == "'" || character == "\"" {
                var value = ""
                index += 1
                while true {
                    guard index < characters.count else { throw fail("unterminated string") }
                    let next = characters[index]
                    if next == "\\", index + 1 < characters.count {
                        value.append(characters[index + 1])
                        index += 2
                    } else if next == character {
                        if index + 1 < characters.count, characters[index + 1] == character {
                            value.append(character)
                            index += 2
                        } else {
                            index += 1
                            break
                        }
                    } else {
                        value.append(next)
                        index += 1
                    }
                }
                tokens.append(.string(value))
            } else if character.isNumber
                || (character == "-" && index + 1 < characters.count && characters[index + 1].isNumber
                    && Self.startsValue(after: tokens.last))
            {
                var text = String(character)
                index += 1
                while index < characters.count, characters[index].isNumber || characters[index] == "." {
                    text.append(characters[index])
                    index += 1
                }
                guard let number = Double(text) else { throw fail("malformed number '\(text)'") }
                tokens.append(.number(number, text))
            } else if character.isLetter || character == "_" || character == "$" {
                var word = ""
                while index < characters.count,
                    characters[index].isLetter || characters[index].isNumber || "_.$".contains(characters[index])
                {
                    word.append(characters[index])
                    index += 1
                }
                tokens.append(.word(word))
            } else {
                let two = index + 1 < characters.count ? String(characters[index...index + 1]) : ""
                if ["!=", "<>", "<=", ">="].contains(two) {
                    tokens.append(.symbol(two))
                    index += 2
                } else if "=<>(),[]*+-".contains(character) {
                    tokens.append(.symbol(String(character)))
                    index += 1
                } else {
                    throw fail("unexpected '\(character)'")
                }
            }
        }
    }

    /// Whether a `-` after this token starts a negative number (not an `order by -field`).
    private static func startsValue(after token: CQLToken?) -> Bool {
        switch token {
        case .symbol(let symbol)?: symbol != ")" && symbol != "]"
        case .word(let word)?: ["max", "in", "all", "near", "within", "and", "or", "where"].contains(word.lowercased())
        default: true
        }
    }

    // MARK: Statement

    package mutating func statement() throws(HeraldError) -> CQLStatement {
        try expect(keyword: "select")
        var count = false
        var keys: [String]? = []
        repeat {
            if accept(keyword: "count") {
                try expect(symbol: "(")
                guard accept(symbol: "*") || accept(keyword: "objectId") else {
                    throw error("count(*) or count(objectId)")
                }
                try expect(symbol: ")")
                count = true
            } else if accept(symbol: "*") {
                keys = nil
            } else if accept(keyword: "include") {
                throw unsupported("'include'")
            } else {
                let key = try identifier()
                keys?.append(key)
            }
        } while accept(symbol: ",")
        try expect(keyword: "from")
        let className = try identifier()
        var whereObject: JSONValue = .object([:])
        if accept(keyword: "where") { whereObject = try disjunction() }
        var skip: Int?
        var limit: Int?
        if accept(keyword: "limit") {
            let first = try integer()
            if accept(symbol: ",") {
                skip = first
                limit = try integer()
            } else {
                limit = first
            }
        }
        var order: String?
        if accept(keyword: "order") {
            try expect(keyword: "by")
            order = try orderList()
        }
        guard position == tokens.count else { throw error("the end of the statement") }
        return CQLStatement(
            className: className, whereObject: whereObject, count: count, keys: count && keys == [] ? nil : keys,
            skip: skip, limit: limit, order: order)
    }

    private mutating func orderList() throws(HeraldError) -> String {
        var fields: [(sign: String?, name: String)] = []
        repeat {
            var sign: String?
            if accept(symbol: "-") { sign = "-" } else if accept(symbol: "+") { sign = "" }
            fields.append((sign, try identifier()))
        } while accept(symbol: ",")
        let descending = accept(keyword: "desc")
        if !descending { _ = accept(keyword: "asc") }
        return fields.map { ($0.sign ?? (descending ? "-" : "")) + $0.name }.joined(separator: ",")
    }

    // MARK: Conditions

    private mutating func disjunction() throws(HeraldError) -> JSONValue {
        var parts = [try conjunction()]
        while accept(keyword: "or") { parts.append(try conjunction()) }
        return parts.count == 1 ? parts[0] : .object(["$or": .array(parts)])
    }

    private mutating func conjunction() throws(HeraldError) -> JSONValue {
        var parts = [try primary()]
        while accept(keyword: "and") { parts.append(try primary()) }
        return parts.count == 1 ? parts[0] : .object(["$and": .array(parts)])
    }

    private mutating func primary() throws(HeraldError) -> JSONValue {
        if accept(symbol: "(") {
            let inner = try disjunction()
            try expect(symbol: ")")
            return inner
        }
        if accept(keyword: "related") { throw unsupported("'related … to'") }
        let name = try identifier()
        func on(_ value: JSONValue) -> JSONValue { .object([name: value]) }
        if accept(keyword: "is") {
            let negated = accept(keyword: "not")
            try expect(keyword: "exists")
            return on(.object(["$exists": .bool(!negated)]))
        }
        if accept(keyword: "not") {
            if accept(keyword: "in") { return on(.object(["$nin": try list()])) }
            if accept(keyword: "like") || accept(keyword: "regexp") { throw unsupported("'not like' and 'not regexp'") }
            throw error("'in' after 'not'")
        }
        if accept(keyword: "in") { return on(.object(["$in": try list()])) }
        if accept(keyword: "all") { return on(.object(["$all": try list()])) }
        if accept(keyword: "like") { return on(.object(["$regex": .string(Self.regex(like: try string()))])) }
        if accept(keyword: "regexp") { return on(.object(["$regex": .string(try string())])) }
        if accept(keyword: "near") {
            var near: [String: JSONValue] = ["$nearSphere": try point()]
            if accept(keyword: "max") {
                let distance = try number()
                let unit: String
                if accept(keyword: "km") || accept(keyword: "kilometers") {
                    unit = "$maxDistanceInKilometers"
                } else if accept(keyword: "miles") {
                    unit = "$maxDistanceInMiles"
                } else {
                    _ = accept(keyword: "radians")  // the default unit
                    unit = "$maxDistanceInRadians"
                }
                near[unit] = distance
            }
            return on(.object(near))
        }
        if accept(keyword: "within") {
            let southwest = try point()
            try expect(keyword: "and")
            return on(.object(["$within": .object(["$box": .array([southwest, try point()])])]))
        }
        let comparisons = ["=": nil, "!=": "$ne", "<>": "$ne", "<": "$lt", "<=": "$lte", ">": "$gt", ">=": "$gte"]
        guard case .symbol(let symbol)? = peek, let op = comparisons[symbol] else {
            throw error("a comparison, 'in', 'like', 'regexp', 'is', 'near' or 'within' after '\(name)'")
        }
        position += 1
        if accept(keyword: "select") || (peek == .symbol("(") && peekWord(at: position + 1) == "select") {
            throw unsupported("sub-queries")
        }
        let value = try self.value()
        if case .object(let members) = value, members["__type"] == .string("Pointer"),
            case .string(let objectID)? = members["objectId"], case .string(let className)? = members["className"]
        {
            let matches: JSONValue = .object([
                "\(name).objectId": .string(objectID), "\(name).className": .string(className),
            ])
            guard let op else { return matches }
            guard op == "$ne" else { throw error("'=' or '!=' with a pointer") }
            return .object([
                "$or": .array([
                    .object(["\(name).objectId": .object(["$ne": .string(objectID)])]),
                    .object(["\(name).className": .object(["$ne": .string(className)])]),
                ])
            ])
        }
        return on(op.map { .object([$0: value]) } ?? value)
    }

    /// A SQL `like` pattern as an anchored regular expression: `%` any run, `_` one character,
    /// the rest literal.
    package static func regex(like pattern: String) -> String {
        var regex = "^"
        var literal = ""
        func flush() {
            if !literal.isEmpty {
                regex += "\\Q" + literal.replacingOccurrences(of: "\\E", with: "\\E\\\\E\\Q") + "\\E"
            }
            literal = ""
        }
        for character in pattern {
            switch character {
            case "%":
                flush()
                regex += ".*"
            case "_":
                flush()
                regex += "."
            default: literal.append(character)
            }
        }
        flush()
        return regex + "$"
    }

    // MARK: Values

    private mutating func list() throws(HeraldError) -> JSONValue {
        try expect(symbol: "(")
        if accept(keyword: "select") { throw unsupported("sub-queries") }
        var values: [JSONValue] = []
        if !accept(symbol: ")") {
            repeat { values.append(try value()) } while accept(symbol: ",")
            try expect(symbol: ")")
        }
        return .array(values)
    }

    private mutating func value() throws(HeraldError) -> JSONValue {
        switch peek {
        case .string(let text)?:
            position += 1
            return .string(text)
        case .number(let number, let text)?:
            position += 1
            return .number(Self.number(number, text))
        case .symbol("[")?:
            return try point()
        case .word(let word)?:
            switch word.lowercased() {
            case "true", "false":
                position += 1
                return .bool(word.lowercased() == "true")
            case "null":
                position += 1
                return .null
            case "date":
                position += 1
                try expect(symbol: "(")
                let iso = try string()
                try expect(symbol: ")")
                return .object(["__type": .string("Date"), "iso": .string(iso)])
            case "current_timestamp":
                position += 1
                try expect(symbol: "(")
                try expect(symbol: ")")
                return .object([
                    "__type": .string("Date"),
                    "iso": .string(
                        Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))),
                ])
            case "pointer":
                position += 1
                try expect(symbol: "(")
                let className = try string()
                try expect(symbol: ",")
                let objectID = try string()
                try expect(symbol: ")")
                return .object([
                    "__type": .string("Pointer"), "className": .string(className), "objectId": .string(objectID),
                ])
            case "geopoint": return try point()
            default: throw error("a value")
            }
        default: throw error("a value")
        }
    }

    /// `geopoint(latitude, longitude)` or `[latitude, longitude]`.
    private mutating func point() throws(HeraldError) -> JSONValue {
        let close: String
        if accept(keyword: "geopoint") {
            try expect(symbol: "(")
            close = ")"
        } else {
            try expect(symbol: "[")
            close = "]"
        }
        let latitude = try number()
        try expect(symbol: ",")
        let longitude = try number()
        try expect(symbol: close)
        return .object(["__type": .string("GeoPoint"), "latitude": latitude, "longitude": longitude])
    }

    private mutating func number() throws(HeraldError) -> JSONValue {
        guard case .number(let number, let text)? = peek else { throw error("a number") }
        position += 1
        return .number(Self.number(number, text))
    }

    private static func number(_ number: Double, _ text: String) -> JSONNumber {
        if !text.contains("."), let integer = Int64(text) { return JSONNumber(integer) }
        return JSONNumber(number)
    }

    private mutating func integer() throws(HeraldError) -> Int {
        guard case .number(_, let text)? = peek, let value = Int(text), value >= 0 else {
            throw error("a whole number")
        }
        position += 1
        return value
    }

    private mutating func string() throws(HeraldError) -> String {
        guard case .string(let text)? = peek else { throw error("a quoted string") }
        position += 1
        return text
    }

    private mutating func identifier() throws(HeraldError) -> String {
        guard case .word(let word)? = peek else { throw error("a name") }
        position += 1
        return word
    }

    // MARK: Tokens

    private var peek: CQLToken? { position < tokens.count ? tokens[position] : nil }

    private func peekWord(at index: Int) -> String? {
        guard index < tokens.count, case .word(let word) = tokens[index] else { return nil }
        return word.lowercased()
    }

    private mutating func accept(keyword: String) -> Bool {
        guard case .word(let word)? = peek, word.lowercased() == keyword.lowercased() else { return false }
        position += 1
        return true
    }

    private mutating func accept(symbol: String) -> Bool {
        guard peek == .symbol(symbol) else { return false }
        position += 1
        return true
    }

    private mutating func expect(keyword: String) throws(HeraldError) {
        guard accept(keyword: keyword) else { throw error("'\(keyword)'") }
    }

    private mutating func expect(symbol: String) throws(HeraldError) {
        guard accept(symbol: symbol) else { throw error("'\(symbol)'") }
    }

    private func error(_ expected: String) -> HeraldError {
        let found: String =
            switch peek {
            case nil: "the end"
            case .word(let word)?: "'\(word)'"
            case .string(let text)?: "'\(text)'"
            case .number(_, let text)?: text
            case .symbol(let symbol)?: "'\(symbol)'"
            }
        return .invalidValue(
            field, code: "invalid_query", "CQL: expected \(expected), found \(found) (token \(position + 1)).")
    }

    private func unsupported(_ what: String) -> HeraldError {
        .invalidValue(field, code: "invalid_query", "CQL: \(what) are not supported here.")
    }
}

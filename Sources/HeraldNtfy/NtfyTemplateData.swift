import HeraldCore

/// A templated publish's JSON body as ntfy's Go templates read it: the "dot" of a `text/template`
/// executed over the body decoded into Go's `any` (docs/dialects/ntfy.md#templates). The built-in
/// templates Herald serves (``NtfyTemplate/builtIns``) are written against these reads, so that they
/// write what ntfy's own `github.yml`, `grafana.yml` and `alertmanager.yml` write, quirks included:
/// a key the body lacks prints `<no value>`, a number prints as Go's `%v` of a `float64`
/// (`1391`, `1.234567e+06`), `trunc` cuts bytes, not characters.
struct NtfyTemplateData: Sendable {
    /// The dot. Nil is Go's invalid value (a key the body lacks, or a body that is JSON `null`);
    /// `.null` is a JSON `null` inside the body (a nil `interface{}`, which a field read fails on).
    let dot: JSONValue?

    /// The dot of a template run over `body`.
    init(_ body: JSONValue) {
        dot = body == .null ? nil : body
    }

    /// The dot `range` or `first` moves to.
    private init(element: JSONValue?) {
        dot = element
    }

    /// The value of a field chain such as `.sender.login` (`.` is the dot itself). Each step reads a
    /// member of an object; after a member the body lacks, every later step is no value too.
    /// - Throws: ``NtfyTemplate/ExecutionError`` where Go's template fails: a step into a JSON
    ///   `null` ("nil pointer evaluating"), or into a string, number, boolean or array.
    func value(_ chain: String) throws(NtfyTemplate.ExecutionError) -> JSONValue? {
        var current = dot
        for name in chain.split(separator: ".").map(String.init) {
            switch current {
            case nil: return nil
            case .object(let members)?: current = members[name]
            case .null?:
                throw NtfyTemplate.ExecutionError(at: chain, "nil pointer evaluating interface {}.\(name)")
            case let other?:
                throw NtfyTemplate.ExecutionError(
                    at: chain, "can't evaluate field \(name) in type \(Self.goType(other))")
            }
        }
        return current
    }

    /// `{{ .chain }}`: the value as the template writes it.
    /// - Throws: ``NtfyTemplate/ExecutionError`` as ``value(_:)`` does.
    func text(_ chain: String) throws(NtfyTemplate.ExecutionError) -> String {
        Self.print(try value(chain))
    }

    /// `{{ if .chain }}`: Go's truth (false, 0, "", an empty array or object, null and no value are false).
    /// - Throws: ``NtfyTemplate/ExecutionError`` as ``value(_:)`` does.
    func isTrue(_ chain: String) throws(NtfyTemplate.ExecutionError) -> Bool {
        Self.isTrue(try value(chain))
    }

    /// `eq .chain "text"`: false for null or no value, as Go compares a nil interface.
    /// - Throws: ``NtfyTemplate/ExecutionError`` when the value is not a string ("incompatible
    ///   types for comparison"), or as ``value(_:)`` does.
    func equals(_ chain: String, _ text: String) throws(NtfyTemplate.ExecutionError) -> Bool {
        switch try value(chain) {
        case nil, .null?: return false
        case .string(let string)?: return string == text
        default:
            throw NtfyTemplate.ExecutionError(
                at: "eq \(chain) \"\(text)\"", "error calling eq: incompatible types for comparison")
        }
    }

    /// `{{ .chain | title }}`: ntfy's `title` (Go's `cases.Title` for English): each word's first
    /// letter upper-case, the rest lower-case.
    /// - Throws: ``NtfyTemplate/ExecutionError`` when the value is not a string, or as ``value(_:)`` does.
    func title(_ chain: String) throws(NtfyTemplate.ExecutionError) -> String {
        var out = ""
        var inWord = false
        for character in try string(chain, for: "title") {
            let isWordCharacter = character.isLetter || character.isNumber || character == "_" || character == "'"
            if isWordCharacter {
                out += inWord ? character.lowercased() : character.uppercased()
            } else {
                out.append(character)
            }
            inWord = isWordCharacter
        }
        return out
    }

    /// `{{ .chain | trunc count }}`: ntfy's `trunc`, the first `count` bytes of the string. A
    /// character cut in two leaves its bytes, which ntfy's JSON answer writes as one U+FFFD each.
    /// - Throws: ``NtfyTemplate/ExecutionError`` when the value is not a string, or as ``value(_:)`` does.
    func trunc(_ chain: String, _ count: Int) throws(NtfyTemplate.ExecutionError) -> String {
        let bytes = Array(try string(chain, for: "trunc").utf8)
        guard bytes.count > count else { return String(decoding: bytes, as: UTF8.self) }
        var end = count
        // Back up over the continuation bytes (10xxxxxx) of a character the cut splits.
        while end > 0, bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return String(decoding: bytes[..<end], as: UTF8.self) + String(repeating: "\u{FFFD}", count: count - end)
    }

    /// `{{ .chain | default "fallback" }}`: the value as written, or `fallback` when the value is
    /// empty (Go's truth).
    /// - Throws: ``NtfyTemplate/ExecutionError`` as ``value(_:)`` does.
    func `default`(_ chain: String, _ fallback: String) throws(NtfyTemplate.ExecutionError) -> String {
        let value = try value(chain)
        return Self.isTrue(value) ? Self.print(value) : fallback
    }

    /// `{{ range .chain }}`: each element as the dot; an object's members in the order of their
    /// keys; none for null or no value.
    /// - Throws: ``NtfyTemplate/ExecutionError`` for a string, number or boolean, or as ``value(_:)`` does.
    func range(_ chain: String) throws(NtfyTemplate.ExecutionError) -> [NtfyTemplateData] {
        switch try value(chain) {
        case nil, .null?: return []
        case .array(let items)?: return items.map { NtfyTemplateData(element: $0) }
        case .object(let members)?:
            return members.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
                .map { NtfyTemplateData(element: $0.value) }
        case let other?:
            throw NtfyTemplate.ExecutionError(at: "range \(chain)", "range can't iterate over \(Self.format(other))")
        }
    }

    /// `(first .chain)`: the first element as the dot (a nil one for an empty array, which a field
    /// read then fails on, as in Go).
    /// - Throws: ``NtfyTemplate/ExecutionError`` when the value is not an array, or as ``value(_:)`` does.
    func first(_ chain: String) throws(NtfyTemplate.ExecutionError) -> NtfyTemplateData {
        guard case .array(let items)? = try value(chain) else {
            throw NtfyTemplate.ExecutionError(at: "first \(chain)", "error calling first: not a list")
        }
        return NtfyTemplateData(element: items.first ?? .null)
    }

    /// `{{ fail "message" }}`, as Go's template reports it: where the call is (line and column of
    /// the template text), the call, and the message.
    static func fail(_ message: String, line: Int, column: Int) -> NtfyTemplate.ExecutionError {
        NtfyTemplate.ExecutionError(
            detail:
                "template: :\(line):\(column): executing \"\" at <fail \"\(message)\">: error calling fail: \(message)")
    }

    /// The string a function takes (Go converts nothing: a missing value or another type fails).
    private func string(_ chain: String, for function: String) throws(NtfyTemplate.ExecutionError) -> String {
        switch try value(chain) {
        case .string(let string)?: return string
        case nil, .null?:
            throw NtfyTemplate.ExecutionError(at: function, "invalid value; expected string")
        case let other?:
            throw NtfyTemplate.ExecutionError(
                at: function, "wrong type for value; expected string; got \(Self.goType(other))")
        }
    }

    /// Go's truth of a value.
    static func isTrue(_ value: JSONValue?) -> Bool {
        switch value {
        case nil, .null?: false
        case .bool(let flag)?: flag
        case .number(let number)?: number.doubleValue != 0
        case .string(let string)?: !string.isEmpty
        case .array(let items)?: !items.isEmpty
        case .object(let members)?: !members.isEmpty
        }
    }

    /// A value as `{{ … }}` writes it: `<no value>` for none (and for null, which Go's template
    /// turns into none before printing), else Go's `%v`.
    static func print(_ value: JSONValue?) -> String {
        switch value {
        case nil, .null?: "<no value>"
        case let value?: format(value)
        }
    }

    /// Go's `%v` of a decoded JSON value: `map[key:value …]` with sorted keys, `[a b]`, `<nil>`.
    static func format(_ value: JSONValue) -> String {
        switch value {
        case .null: "<nil>"
        case .bool(let flag): flag ? "true" : "false"
        case .number(let number): goFloat(number.doubleValue)
        case .string(let string): string
        case .array(let items): "[" + items.map(format).joined(separator: " ") + "]"
        case .object(let members):
            "map["
                + members.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
                .map { "\($0.key):\(format($0.value))" }.joined(separator: " ") + "]"
        }
    }

    /// Go's `%v` of a `float64` (`strconv`'s shortest `'g'`): plain digits while the decimal
    /// exponent is -4 to 5, else `d.ddde±dd`.
    static func goFloat(_ value: Double) -> String {
        guard value.isFinite else { return value.isNaN ? "NaN" : value < 0 ? "-Inf" : "+Inf" }
        guard value != 0 else { return value.sign == .minus ? "-0" : "0" }
        // Swift's description holds the shortest digits that read back as the value, as Go's do.
        var text = "\(value.magnitude)"
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            exponent = Int(text[text.index(after: e)...].replacing("+", with: "")) ?? 0
            text = String(text[..<e])
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        var digits = Array(parts[0] + (parts.count > 1 ? parts[1] : ""))
        var point = parts[0].count + exponent
        while digits.first == "0" {
            digits.removeFirst()
            point -= 1
        }
        while digits.last == "0" { digits.removeLast() }
        let sign = value < 0 ? "-" : ""
        let decimalExponent = point - 1
        if decimalExponent < -4 || decimalExponent >= 6 {
            let mantissa = digits.count > 1 ? "\(digits[0]).\(String(digits[1...]))" : String(digits)
            let magnitude = abs(decimalExponent)
            return sign + mantissa + (decimalExponent < 0 ? "e-" : "e+") + (magnitude < 10 ? "0" : "") + "\(magnitude)"
        }
        if point <= 0 { return sign + "0." + String(repeating: "0", count: -point) + String(digits) }
        if point >= digits.count { return sign + String(digits) + String(repeating: "0", count: point - digits.count) }
        return sign + String(digits[..<point]) + "." + String(digits[point...])
    }

    /// The Go type a decoded JSON value has, as Go's errors name it.
    private static func goType(_ value: JSONValue) -> String {
        switch value {
        case .null: "interface {}"
        case .bool: "bool"
        case .number: "float64"
        case .string: "string"
        case .array: "[]interface {}"
        case .object: "map[string]interface {}"
        }
    }
}

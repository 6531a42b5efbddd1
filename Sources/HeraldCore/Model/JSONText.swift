/// JSON text (RFC 8259) to and from ``JSONValue``, byte by byte.
///
/// Every request body is parsed into a `JSONValue` and every response, stored attribute set and
/// payload is written from one, so this is on the path of every call: going through `Codable`
/// (`JSONDecoder` trying each case in turn, `JSONEncoder`'s boxing) cost more than the rest of a
/// registration did. The reader is strict: one value, no trailing commas or comments, strings of
/// valid UTF-8 without raw control characters, surrogate escapes in pairs, finite numbers.
enum JSONText {
    /// Nesting deeper than this is refused: the reader recurses once per level.
    static let maximumDepth = 512

    // MARK: Writing

    static func write(_ value: JSONValue, to out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let flag): out.append(contentsOf: flag ? "true".utf8 : "false".utf8)
        case .number(let number): out.append(contentsOf: number.jsonText.utf8)
        case .string(let text): write(text, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                write(element, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            // Sorted, so the same members always give the same bytes. String order is Unicode
            // scalar order (byte order for the NFC text JSON carries), and fast for ASCII keys.
            for (position, member) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                write(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                write(member.value, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A string with `"`, `\` and control characters escaped; everything else as its UTF-8, copied
    /// in runs between the bytes that need an escape.
    static func write(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var runStart = 0
            for position in bytes.indices {
                let byte = bytes[position]
                if byte >= 0x20, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
                writeEscape(byte, to: &out)
                runStart = position + 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func writeEscape(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(byte)
        case 0x0A: out.append(UInt8(ascii: "n"))
        case 0x0D: out.append(UInt8(ascii: "r"))
        case 0x09: out.append(UInt8(ascii: "t"))
        case 0x08: out.append(UInt8(ascii: "b"))
        case 0x0C: out.append(UInt8(ascii: "f"))
        default:
            out.append(contentsOf: "u00".utf8)
            out.append(hexDigits[Int(byte >> 4)])
            out.append(hexDigits[Int(byte & 0x0F)])
        }
    }

    // MARK: Reading

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(HeraldError) -> JSONValue {
        var reader = Reader(bytes: bytes)
        // A UTF-8 byte order mark is tolerated, as JSON parsers commonly do (RFC 8259 §8.1).
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { reader.index = 3 }
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        if reader.index < bytes.count { throw reader.failure("unexpected text after the JSON value") }
        return value
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        func failure(_ what: String) -> HeraldError {
            .invalidJSON("\(what) at byte \(index)")
        }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x0A, 0x0D, 0x09: index += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) throws(HeraldError) -> JSONValue {
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end of the text") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object(depth: depth + 1)
            case UInt8(ascii: "["): return try array(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): return try literal("true", .bool(true))
            case UInt8(ascii: "f"): return try literal("false", .bool(false))
            case UInt8(ascii: "n"): return try literal("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
            default: throw failure("unexpected character")
            }
        }

        private mutating func literal(_ word: StaticString, _ value: JSONValue) throws(HeraldError) -> JSONValue {
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count,
                UnsafeBufferPointer(rebasing: bytes[index..<index + count]).elementsEqual(
                    UnsafeBufferPointer(start: word.utf8Start, count: count))
            else { throw failure("unexpected character") }
            index += count
            return value
        }

        private mutating func expect(_ byte: UInt8) -> Bool {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        private mutating func array(depth: Int) throws(HeraldError) -> JSONValue {
            guard depth <= JSONText.maximumDepth else { throw failure("too deeply nested") }
            index += 1
            var elements: [JSONValue] = []
            if expect(UInt8(ascii: "]")) { return .array(elements) }
            repeat {
                elements.append(try value(depth: depth))
            } while expect(UInt8(ascii: ","))
            guard expect(UInt8(ascii: "]")) else { throw failure("expected ',' or ']'") }
            return .array(elements)
        }

        private mutating func object(depth: Int) throws(HeraldError) -> JSONValue {
            guard depth <= JSONText.maximumDepth else { throw failure("too deeply nested") }
            index += 1
            var members: [String: JSONValue] = [:]
            if expect(UInt8(ascii: "}")) { return .object(members) }
            repeat {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                    throw failure("expected a member name in quotes")
                }
                let key = try string()
                guard expect(UInt8(ascii: ":")) else { throw failure("expected ':'") }
                // A repeated name keeps its last value.
                members[key] = try value(depth: depth)
            } while expect(UInt8(ascii: ","))
            guard expect(UInt8(ascii: "}")) else { throw failure("expected ',' or '}'") }
            return .object(members)
        }

        /// A string from its opening quote; `index` ends after the closing one.
        private mutating func string() throws(HeraldError) -> String {
            index += 1
            let start = index
            // The common case: no escapes, so the bytes between the quotes are the string.
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let text = try validated(UnsafeBufferPointer(rebasing: bytes[start..<index]))
                    index += 1
                    return text
                }
                if byte == UInt8(ascii: "\\") { break }
                if byte < 0x20 { throw failure("unescaped control character in a string") }
                index += 1
            }
            var decoded = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return try decoded.withUnsafeBufferPointer { buffer throws(HeraldError) in try validated(buffer) }
                case UInt8(ascii: "\\"):
                    try escape(into: &decoded)
                case 0..<0x20:
                    throw failure("unescaped control character in a string")
                default:
                    decoded.append(byte)
                    index += 1
                }
            }
            throw failure("unterminated string")
        }

        private func validated(_ utf8: UnsafeBufferPointer<UInt8>) throws(HeraldError) -> String {
            guard let text = String(validating: utf8, as: UTF8.self) else {
                throw failure("a string that is not valid UTF-8")
            }
            return text
        }

        /// One escape sequence from its backslash, appended as UTF-8.
        private mutating func escape(into decoded: inout [UInt8]) throws(HeraldError) {
            guard index + 1 < bytes.count else { throw failure("unterminated string") }
            let letter = bytes[index + 1]
            index += 2
            switch letter {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(letter)
            case UInt8(ascii: "b"): decoded.append(0x08)
            case UInt8(ascii: "f"): decoded.append(0x0C)
            case UInt8(ascii: "n"): decoded.append(0x0A)
            case UInt8(ascii: "r"): decoded.append(0x0D)
            case UInt8(ascii: "t"): decoded.append(0x09)
            case UInt8(ascii: "u"):
                var code = try hexQuad()
                if (0xD800...0xDBFF).contains(code) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                        bytes[index + 1] == UInt8(ascii: "u")
                    else { throw failure("a high surrogate escape without its low surrogate") }
                    index += 2
                    let low = try hexQuad()
                    guard (0xDC00...0xDFFF).contains(low) else {
                        throw failure("a high surrogate escape without its low surrogate")
                    }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(code) {
                    throw failure("a low surrogate escape without its high surrogate")
                }
                // Surrogates are excluded above, so the code is a scalar.
                guard let scalar = Unicode.Scalar(code) else { throw failure("an invalid \\u escape") }
                UTF8.encode(scalar) { decoded.append($0) }
            default:
                index -= 1
                throw failure("an invalid escape")
            }
        }

        private mutating func hexQuad() throws(HeraldError) -> UInt32 {
            guard bytes.count - index >= 4 else { throw failure("an incomplete \\u escape") }
            var code: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw failure("an invalid \\u escape")
                }
                code = code << 4 | UInt32(digit)
                index += 1
            }
            return code
        }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`: an integer exactly when it is
        /// one that fits `Int64`, else a finite `Double`.
        private mutating func number() throws(HeraldError) -> JSONNumber {
            let start = index
            let negative = bytes[index] == UInt8(ascii: "-")
            if negative { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("a number without digits") }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
                if index < bytes.count, isDigit(bytes[index]) { throw failure("a number with a leading zero") }
            } else {
                skipDigits()
            }
            var integral = true
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                integral = false
                index += 1
                guard index < bytes.count, isDigit(bytes[index]) else {
                    throw failure("a number without fraction digits")
                }
                skipDigits()
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                integral = false
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard index < bytes.count, isDigit(bytes[index]) else {
                    throw failure("a number without exponent digits")
                }
                skipDigits()
            }
            let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
            if integral, let exact = Self.integer(text, negative: negative) { return JSONNumber(exact) }
            guard let double = Double(String(decoding: text, as: UTF8.self)), double.isFinite else {
                throw failure("a number out of range")
            }
            return JSONNumber(double)
        }

        private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        private mutating func skipDigits() {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }

        /// The integer the digits spell, or nil when it overflows `Int64`.
        private static func integer(_ text: UnsafeBufferPointer<UInt8>, negative: Bool) -> Int64? {
            var value: Int64 = 0
            for byte in text where byte != UInt8(ascii: "-") {
                let digit = Int64(byte - UInt8(ascii: "0"))
                let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
                // Accumulated as a negative number: Int64.min has no positive counterpart.
                let (next, underflow) = shifted.subtractingReportingOverflow(digit)
                if overflow || underflow { return nil }
                value = next
            }
            if negative { return value }
            return value == .min ? nil : -value
        }
    }
}

extension JSONNumber {
    /// The number as JSON text: integers exactly, finite doubles in Swift's shortest round-trip
    /// form, and `null` for what JSON cannot write (an infinity or NaN made in code).
    var jsonText: String {
        if let integer = integerValue { return String(integer) }
        let double = doubleValue
        return double.isFinite ? String(double) : "null"
    }
}

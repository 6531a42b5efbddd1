import HeraldCore
import Testing

@Suite("JSON values")
struct JSONValueTests {
    @Test("Integers beyond 2^53 (custom data ids) survive parsing and serializing exactly")
    func largeIntegers() throws {
        let text = #"{"id":9007199254740993,"max":9223372036854775807,"min":-9223372036854775808}"#
        let value = try JSONValue.parse(Array(text.utf8))
        #expect(value.objectValue?["id"] == .number(JSONNumber(Int64(9_007_199_254_740_993))))
        #expect(String(decoding: value.serialized(), as: UTF8.self) == text)
        // A Double would have rounded the id to its neighbour.
        #expect(value.objectValue?["id"] != .number(JSONNumber(Double(9_007_199_254_740_993))))
    }

    @Test("Numbers are equal by value: 1 and 1.0 are one number; fractions and huge values stay Doubles")
    func numberEquality() throws {
        #expect(JSONNumber(1) == JSONNumber(1.0))
        #expect(Set([JSONNumber(2), JSONNumber(2.0)]).count == 1)
        let parsed = try JSONValue.parse(Array("[1.0, 1.5, 1e300, -0.25]".utf8))
        #expect(String(decoding: parsed.serialized(), as: UTF8.self) == "[1,1.5,1e+300,-0.25]")
        #expect(JSONNumber(1.5).integerValue == nil)
        #expect(JSONNumber(1.5) < JSONNumber(2))
        #expect(JSONNumber(Int64.max) > JSONNumber(Int64.max - 1))
    }

    @Test("The reader takes RFC 8259 JSON: whitespace, every literal, numbers, escapes and surrogate pairs")
    func readsJSON() throws {
        let value = try JSONValue.parse(
            Array(
                #" {"a" : [1, -0, 0.5e-3, 1E+2, true, false, null, {}, []], "s": "q\"b\\s\/\b\f\n\r\t\u00e9\ud83d\ude00é"}  "#
                    .utf8))
        #expect(
            value
                == .object([
                    "a": .array([
                        .number(1), .number(0), .number(0.0005), .number(100), .bool(true), .bool(false), .null,
                        .object([:]), .array([]),
                    ]),
                    "s": .string("q\"b\\s/\u{08}\u{0C}\n\r\té😀é"),
                ]))
        // A byte order mark is skipped; a repeated member keeps its last value.
        #expect(try JSONValue.parse([0xEF, 0xBB, 0xBF] + Array(#"{"k":1,"k":2}"#.utf8)) == .object(["k": .number(2)]))
        #expect(try JSONValue.parse(Array("-9223372036854775808".utf8)) == .number(JSONNumber(Int64.min)))
        // One past Int64's range is a Double.
        #expect(
            try JSONValue.parse(Array("9223372036854775808".utf8)) == .number(JSONNumber(9_223_372_036_854_775_808.0)))
        let deep = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(throws: Never.self) { try JSONValue.parse(Array(deep.utf8)) }
    }

    @Test(
        "The reader refuses what is not one JSON value, with invalid_json and where",
        arguments: [
            "", "  ", "{", "[1,]", #"{"a":1,}"#, "[1 2]", #"{"a" 1}"#, "{a:1}", "01", "-01", "1.", ".5", "-", "1e",
            "1e+",
            "+1", "tru", "nul", "falsey", "'a'", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\u12g4\"", "\"\\ud83d\"",
            "\"\\ude00\"", "\"\\ud83d\\u0041\"", "1 2", "NaN", "Infinity", "1e400", "[1]x", "\"tab\there\"",
            String(repeating: "[", count: 513) + String(repeating: "]", count: 513),
        ])
    func refusesInvalidJSON(_ text: String) {
        let error = #expect(throws: HeraldError.self) { try JSONValue.parse(Array(text.utf8)) }
        #expect(error?.code == "invalid_json")
        #expect(error?.message.contains("at byte") == true, "\(error?.message ?? "")")
    }

    @Test("Strings must be UTF-8 and hold no raw control characters")
    func refusesBadStrings() {
        for bytes: [UInt8] in [
            [0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0x01, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
        ] {
            #expect(throws: HeraldError.self, "\(bytes)") { try JSONValue.parse(bytes) }
        }
    }

    @Test("The writer escapes quotes, backslashes and control characters, sorts keys, and round-trips")
    func writesJSON() throws {
        let value = JSONValue.object([
            "b": .string("q\"\\/\u{08}\u{0C}\n\r\t\u{01}\u{1F}é😀"), "a": .array([.null, .bool(true), .number(-3)]),
            "B": .number(0.25), "é": .object([:]),
        ])
        let text = String(decoding: value.serialized(), as: UTF8.self)
        #expect(text == #"{"B":0.25,"a":[null,true,-3],"b":"q\"\\/\b\f\n\r\t\u0001\u001fé😀","é":{}}"#)
        #expect(try JSONValue.parse(value.serialized()) == value)
        #expect(String(decoding: JSONValue.number(JSONNumber(Double.infinity)).serialized(), as: UTF8.self) == "null")
    }
}

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
}

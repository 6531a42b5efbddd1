import Foundation
import HeraldCore
import Testing

@Suite("Installation query: dialect field resolvers and the native form")
struct InstallationQueryResolverTests {
    private func json(_ text: String) throws -> JSONValue { try JSONValue.parse(Array(text.utf8)) }

    /// A resolver in the style of a dialect: its own names for two columns, everything else an attribute.
    private let resolver: QueryFieldResolver = { (name, path) throws(HeraldError) -> QueryField in
        switch name {
        case "deviceType": return .column(.platform)
        case "updatedAt": return .column(.updatedAt)
        case "forbidden": throw .invalidValue(path, code: "invalid_query", "no")
        default: return .attribute(name.split(separator: ".").map(String.init))
        }
    }

    @Test("The resolver names the fields, in nested $or/$and too, and its refusal is the error")
    func resolves() throws {
        let query = try InstallationQuery(
            parsing: json(
                #"{"deviceType": "ios", "$or": [{"platform": "x"}, {"updatedAt": {"$lt": "2026-01-01T00:00:00Z"}}]}"#),
            field: "where", resolver: resolver)
        #expect(
            query
                == .and([
                    .or([
                        .condition(field: .attribute(["platform"]), op: .equal(.string("x"))),
                        .condition(
                            field: .column(.updatedAt),
                            op: .compare(.lessThan, .date(Date(timeIntervalSince1970: 1_767_225_600)))),
                    ]),
                    .condition(field: .column(.platform), op: .equal(.string("ios"))),
                ]))
        #expect(throws: HeraldError.self) {
            try InstallationQuery(parsing: json(#"{"$or": [{"forbidden": 1}]}"#), field: "where", resolver: resolver)
        }
        // The native parser still reads `platform` as the column.
        #expect(
            try InstallationQuery(parsing: json(#"{"platform": "ios"}"#))
                == .condition(field: .column(.platform), op: .equal(.string("ios"))))
    }

    @Test("The native form parses back to a query selecting the same installations")
    func nativeRoundTrip() throws {
        let sources = [
            #"{"deviceType": "ios", "vip": true, "badge": {"$gt": 2, "$lte": 9}}"#,
            #"{"$or": [{"name": {"$regex": "^a", "$options": "i"}}, {"tags": {"$all": ["a", "b"]}}]}"#,
            #"{"updatedAt": {"$lt": {"__type": "Date", "iso": "2013-06-29T11:33:53.323Z"}}, "x": {"$exists": false}}"#,
            #"{"deviceType": {"$in": ["ios", "android"], "$nin": ["web"], "$ne": "macos"}, "n": null}"#,
            #"{}"#,
        ]
        for source in sources {
            let parsed = try AudienceQuery(parsing: json(source), field: "where", resolver: resolver)
            let reparsed = try AudienceQuery(parsing: parsed.json)
            #expect(reparsed.query.json == parsed.json, "\(source)")
            #expect(Self.normalized(reparsed.query) == Self.normalized(parsed.query), "\(source)")
        }
    }

    /// The query with each conjunction flattened and sorted, so equal selections compare equal.
    private static func normalized(_ query: InstallationQuery) -> String {
        switch query {
        case .and(let queries):
            let parts = queries.flatMap { query -> [String] in
                if case .and(let inner) = query { return inner.map(normalized) }
                return [normalized(query)]
            }
            return "and(" + parts.sorted().joined(separator: ",") + ")"
        case .or(let queries): return "or(" + queries.map(normalized).joined(separator: ",") + ")"
        case .condition(let field, let op): return "\(field.name):\(op)"
        }
    }
}

import Foundation
import HeraldCore
import Testing

@Suite("Installation query")
struct InstallationQueryTests {
    private func parse(_ json: String) throws -> InstallationQuery {
        try InstallationQuery(parsing: JSONValue.parse(Array(json.utf8)))
    }

    private func condition(_ name: String, _ op: QueryOperator) -> InstallationQuery {
        let field: QueryField =
            if let column = QueryField.Column(rawValue: name) {
                .column(column)
            } else {
                .attribute(name.split(separator: ".").map(String.init).filter { $0 != "attributes" })
            }
        return .condition(field: field, op: op)
    }

    private static let newYear = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z

    // MARK: Parsing

    @Test("Every operator parses to its condition")
    func operators() throws {
        let cases: [(String, InstallationQuery)] = [
            (#"{"platform": "ios"}"#, condition("platform", .equal(.string("ios")))),
            (#"{"platform": {"$eq": "android"}}"#, condition("platform", .equal(.string("android")))),
            (#"{"user_id": null}"#, condition("user_id", .equal(.null))),
            (#"{"locale": {"$ne": "fr"}}"#, condition("locale", .notEqual(.string("fr")))),
            (#"{"badge": {"$in": [1, 2]}}"#, condition("badge", .in([.number(1), .number(2)]))),
            (#"{"user_id": {"$nin": ["a", null]}}"#, condition("user_id", .notIn([.string("a"), .null]))),
            (#"{"channels": {"$all": ["a", "b"]}}"#, condition("channels", .all([.string("a"), .string("b")]))),
            (#"{"device_id": {"$exists": false}}"#, condition("device_id", .exists(false))),
            (#"{"badge": {"$lt": 3}}"#, condition("badge", .compare(.lessThan, .number(3)))),
            (#"{"badge": {"$lte": 3}}"#, condition("badge", .compare(.lessThanOrEqual, .number(3)))),
            (#"{"app_version": {"$gt": "2.0"}}"#, condition("app_version", .compare(.greaterThan, .string("2.0")))),
            (#"{"badge": {"$gte": 0.5}}"#, condition("badge", .compare(.greaterThanOrEqual, .number(0.5)))),
            (#"{"valid": false}"#, condition("valid", .equal(.bool(false)))),
            (
                #"{"device_model": {"$regex": "^iPhone"}}"#,
                condition("device_model", .regex(pattern: "^iPhone", caseInsensitive: false))
            ),
            (
                #"{"device_model": {"$regex": "pixel", "$options": "i"}}"#,
                condition("device_model", .regex(pattern: "pixel", caseInsensitive: true))
            ),
            (#"{"channels": "news"}"#, condition("channels", .equal(.string("news")))),
        ]
        for (json, expected) in cases {
            let parsed = try parse(json)
            #expect(parsed == expected, "\(json)")
        }
    }

    @Test("Field names: columns, attribute paths, and bare names as attributes")
    func fieldNames() throws {
        #expect(
            try parse(#"{"attributes.vip": true}"#) == .condition(field: .attribute(["vip"]), op: .equal(.bool(true))))
        #expect(
            try parse(#"{"attributes.profile.level-2": 3}"#)
                == .condition(field: .attribute(["profile", "level-2"]), op: .equal(.number(3))))
        #expect(try parse(#"{"vip": true}"#) == .condition(field: .attribute(["vip"]), op: .equal(.bool(true))))
        #expect(
            try parse(#"{"profile.level": "gold"}"#)
                == .condition(field: .attribute(["profile", "level"]), op: .equal(.string("gold"))))
        #expect(QueryField.attribute(["a", "b"]).name == "attributes.a.b")
        #expect(QueryField.column(.lastSeenAt).name == "last_seen_at")
    }

    @Test("Keys and operators of one object are ANDed; $or nests in $and")
    func combinations() throws {
        #expect(try parse("{}") == .and([]))
        #expect(
            try parse(#"{"platform": "ios", "badge": {"$gt": 1, "$lt": 5}}"#)
                == .and([
                    condition("badge", .compare(.greaterThan, .number(1))),
                    condition("badge", .compare(.lessThan, .number(5))),
                    condition("platform", .equal(.string("ios"))),
                ]))
        let nested = try parse(
            #"""
            {"$and": [{"$or": [{"platform": "ios"}, {"channels": "beta"}]}, {"valid": true}],
             "locale": "fr"}
            """#)
        #expect(
            nested
                == .and([
                    .and([
                        .or([
                            condition("platform", .equal(.string("ios"))),
                            condition("channels", .equal(.string("beta"))),
                        ]),
                        condition("valid", .equal(.bool(true))),
                    ]),
                    condition("locale", .equal(.string("fr"))),
                ]))
        #expect(try parse(#"{"$or": [{}]}"#) == .or([.and([])]))
    }

    @Test("Dates: RFC 3339 strings and Parse Date objects")
    func dates() throws {
        let cases = [
            #"{"created_at": {"$gte": "2026-01-01T00:00:00Z"}}"#,
            #"{"created_at": {"$gte": "2026-01-01T00:00:00.000Z"}}"#,
            #"{"created_at": {"$gte": "2026-01-01T08:00:00+08:00"}}"#,
            #"{"created_at": {"$gte": {"__type": "Date", "iso": "2026-01-01T00:00:00.000Z"}}}"#,
        ]
        for json in cases {
            let parsed = try parse(json)
            #expect(parsed == condition("created_at", .compare(.greaterThanOrEqual, .date(Self.newYear))), "\(json)")
        }
        #expect(
            try parse(#"{"last_seen_at": {"__type": "Date", "iso": "2026-01-01T00:00:00.250Z"}}"#)
                == condition("last_seen_at", .equal(.date(Self.newYear.addingTimeInterval(0.25)))))
        #expect(try parse(#"{"last_delivered_at": null}"#) == condition("last_delivered_at", .equal(.null)))
    }

    @Test("Errors name the exact field and carry a stable code")
    func errors() throws {
        let cases: [(json: String, code: String, field: String)] = [
            ("[]", "invalid_query", "target.where"),
            (#"{"$nor": []}"#, "unknown_operator", "target.where.$nor"),
            (#"{"badge": {"$size": 1}}"#, "unknown_operator", "target.where.badge.$size"),
            (
                #"{"$or": [{"platform": "ios"}, {"badge": {"$gt": "x"}}]}"#, "invalid_query",
                "target.where.$or[1].badge.$gt"
            ),
            (#"{"$or": []}"#, "invalid_query", "target.where.$or"),
            (
                #"{"badge": {"$nearSphere": {"__type": "GeoPoint", "latitude": 1, "longitude": 2}}}"#, "invalid_query",
                "target.where.badge.$nearSphere"
            ),
            (
                #"{"at": {"$nearSphere": {"__type": "GeoPoint", "latitude": 91, "longitude": 2}}}"#, "invalid_query",
                "target.where.at.$nearSphere"
            ),
            (#"{"at": {"$maxDistanceInMiles": 3}}"#, "invalid_query", "target.where.at.$maxDistanceInMiles"),
            (
                #"{"at": {"$nearSphere": {"__type": "GeoPoint", "latitude": 1, "longitude": 2}, "$maxDistanceInMiles": -1}}"#,
                "invalid_query", "target.where.at.$maxDistanceInMiles"
            ),
            (
                #"{"at": {"$nearSphere": {"__type": "GeoPoint", "latitude": 1, "longitude": 2}, "$maxDistance": 1, "$maxDistanceInMiles": 1}}"#,
                "invalid_query", "target.where.at.$maxDistanceInMiles"
            ),
            (#"{"at": {"$within": {"$box": []}}}"#, "invalid_query", "target.where.at.$within"),
            (
                #"{"at": {"$within": {"$box": [{"__type": "GeoPoint", "latitude": 5, "longitude": 0}, {"__type": "GeoPoint", "latitude": 1, "longitude": 1}]}}}"#,
                "invalid_query", "target.where.at.$within.$box"
            ),
            (#"{"$and": {"a": 1}}"#, "invalid_query", "target.where.$and"),
            (#"{"$and": [{"a": 1}, 2]}"#, "invalid_query", "target.where.$and[1]"),
            (
                #"{"$and": [{"$or": [{"badge": {"$in": [1, "2"]}}]}]}"#, "invalid_query",
                "target.where.$and[0].$or[0].badge.$in[1]"
            ),
            (#"{"badge": "1"}"#, "invalid_query", "target.where.badge"),
            (#"{"valid": 1}"#, "invalid_query", "target.where.valid"),
            (#"{"valid": {"$gt": true}}"#, "invalid_query", "target.where.valid.$gt"),
            (#"{"user_id": 7}"#, "invalid_query", "target.where.user_id"),
            (#"{"channels": {"$in": ["a", 1]}}"#, "invalid_query", "target.where.channels.$in[1]"),
            (#"{"platform": "iphone"}"#, "invalid_query", "target.where.platform"),
            (#"{"service": {"$in": ["apns", "mpns"]}}"#, "invalid_query", "target.where.service.$in[1]"),
            (#"{"environment": {"$ne": "staging"}}"#, "invalid_query", "target.where.environment.$ne"),
            (#"{"created_at": {"$gt": "yesterday"}}"#, "invalid_query", "target.where.created_at.$gt"),
            (#"{"created_at": {"$gt": 1767225600}}"#, "invalid_query", "target.where.created_at.$gt"),
            (
                #"{"created_at": {"$gt": {"__type": "Date", "iso": "nope"}}}"#, "invalid_query",
                "target.where.created_at.$gt.iso"
            ),
            (
                #"{"created_at": {"__type": "Date", "iso": "2026-01-01T00:00:00Z", "x": 1}}"#, "invalid_query",
                "target.where.created_at.x"
            ),
            (
                #"{"created_at": {"__type": "Pointer", "objectId": "x"}}"#, "invalid_query",
                "target.where.created_at.__type"
            ),
            (#"{"vip": {"__type": "Date", "iso": "2026-01-01T00:00:00Z"}}"#, "invalid_query", "target.where.vip"),
            (#"{"attributes.a b": 1}"#, "invalid_query", "target.where.attributes.a b"),
            (#"{"attributes..x": 1}"#, "invalid_query", "target.where.attributes..x"),
            (#"{"attributes": {"vip": true}}"#, "invalid_query", "target.where.attributes"),
            (#"{"attributes.é": 1}"#, "invalid_query", "target.where.attributes.é"),
            (#"{"attributes.a'b": 1}"#, "invalid_query", "target.where.attributes.a'b"),
            (#"{"badge.count": 1}"#, "invalid_query", "target.where.badge.count"),
            (#"{"name": [1, 2]}"#, "invalid_query", "target.where.name"),
            (#"{"name": {}}"#, "invalid_query", "target.where.name"),
            (#"{"name": {"$gt": 1, "first": 2}}"#, "invalid_query", "target.where.name.first"),
            (#"{"name": {"$gt": null}}"#, "invalid_query", "target.where.name.$gt"),
            (#"{"name": {"$lt": true}}"#, "invalid_query", "target.where.name.$lt"),
            (#"{"name": {"$in": "a"}}"#, "invalid_query", "target.where.name.$in"),
            (#"{"name": {"$in": [[1]]}}"#, "invalid_query", "target.where.name.$in[0]"),
            (#"{"name": {"$exists": 1}}"#, "invalid_query", "target.where.name.$exists"),
            (#"{"name": {"$or": [{}]}}"#, "invalid_query", "target.where.name.$or"),
            (#"{"channels": {"$all": []}}"#, "invalid_query", "target.where.channels.$all"),
            (#"{"channels": {"$all": ["a", null]}}"#, "invalid_query", "target.where.channels.$all[1]"),
            (#"{"name": {"$regex": "("}}"#, "invalid_regex", "target.where.name.$regex"),
            (#"{"name": {"$regex": 1}}"#, "invalid_query", "target.where.name.$regex"),
            (#"{"name": {"$regex": "a", "$options": "im"}}"#, "invalid_query", "target.where.name.$options"),
            (#"{"name": {"$regex": "a", "$options": true}}"#, "invalid_query", "target.where.name.$options"),
            (#"{"name": {"$options": "i"}}"#, "invalid_query", "target.where.name.$options"),
            (#"{"badge": {"$regex": "1"}}"#, "invalid_query", "target.where.badge.$regex"),
            (#"{"created_at": {"$regex": "2026"}}"#, "invalid_query", "target.where.created_at.$regex"),
            (#"{"name": {"$regex": "(a+)+$"}}"#, "query_too_complex", "target.where.name.$regex"),
            (#"{"name": {"$regex": "(a|ab)*c"}}"#, "query_too_complex", "target.where.name.$regex"),
            (#"{"name": {"$regex": "(?:x*y){2,}"}}"#, "query_too_complex", "target.where.name.$regex"),
            (#"{"name": {"$regex": "(a)\\1"}}"#, "query_too_complex", "target.where.name.$regex"),
            (#"{"name": {"$regex": "a*b*c*d*e*"}}"#, "query_too_complex", "target.where.name.$regex"),
        ]
        for (json, code, field) in cases {
            let error = #expect(throws: HeraldError.self, "\(json)") { try parse(json) }
            #expect(error?.code == code, "\(json)")
            #expect(error?.field == field, "\(json)")
            #expect(error?.kind == .badRequest, "\(json)")
        }
    }

    @Test("$regex patterns that could backtrack without bound are refused; ordinary ones pass")
    func regexComplexity() {
        let refused = [
            "(a+)+$", "(a*)*", "(a|b)+", "(x+x+)+y", "(?:a+){2,}", "(?<n>a+)*", "(a)\\1", "\\k<n>",
            ".*.*.*.*.*", "a+b+c+d+e{2,}", "((a+))+",
        ]
        for pattern in refused {
            #expect(QueryRegex.complexityProblem(pattern) != nil, "\(pattern)")
        }
        let accepted = [
            "^iPhone", "pixel", "^.*a.*b.*c.*$", "(https?://)?example", "(?:ab)*", "[(+*]+x", "\\Q(a+)+\\E",
            "^[0-9a-f]{64}$", "(ab){2,3}", "(?i)iphone", "a\\+b\\(", "(?=a)b",
        ]
        for pattern in accepted {
            #expect(QueryRegex.complexityProblem(pattern) == nil, "\(pattern)")
        }
    }

    @Test("Errors use the caller's field prefix")
    func fieldPrefix() throws {
        let error = #expect(throws: HeraldError.self) {
            try InstallationQuery(parsing: .object(["badge": .string("x")]), field: "where")
        }
        #expect(error?.field == "where.badge")
    }

    @Test("Limits: depth, values per operator, conditions, pattern length")
    func limits() throws {
        func nested(_ depth: Int) -> String {
            (0..<(depth - 1)).reduce(#"{"badge": 1}"#) { inner, _ in #"{"$or": [\#(inner)]}"# }
        }
        _ = try parse(nested(InstallationQuery.maxDepth))
        let deep = #expect(throws: HeraldError.self) { try parse(nested(InstallationQuery.maxDepth + 1)) }
        #expect(deep?.code == "query_too_complex")
        #expect(deep?.field == "target.where" + String(repeating: ".$or[0]", count: InstallationQuery.maxDepth))

        let hundred = (0..<100).map(String.init).joined(separator: ", ")
        _ = try parse(#"{"badge": {"$in": [\#(hundred)]}}"#)
        let tooMany = #expect(throws: HeraldError.self) { try parse(#"{"badge": {"$nin": [\#(hundred), 100]}}"#) }
        #expect(tooMany?.code == "query_too_complex")
        #expect(tooMany?.field == "target.where.badge.$nin")

        func keys(_ count: Int) -> String {
            "{" + (0..<count).map { #""k\#($0)": \#($0)"# }.joined(separator: ", ") + "}"
        }
        _ = try parse(keys(InstallationQuery.maxConditions))
        let wide = #expect(throws: HeraldError.self) { try parse(keys(InstallationQuery.maxConditions + 1)) }
        #expect(wide?.code == "query_too_complex")
        // $or counts as a condition too, so 49 keys plus one $or of one condition is 51.
        let withOr = keys(49).dropLast() + #", "$or": [{"badge": 1}]}"#
        let orError = #expect(throws: HeraldError.self) { try parse(String(withOr)) }
        #expect(orError?.code == "query_too_complex")

        let pattern = String(repeating: "a", count: InstallationQuery.maxPatternLength + 1)
        let long = #expect(throws: HeraldError.self) { try parse(#"{"name": {"$regex": "\#(pattern)"}}"#) }
        #expect(long?.code == "query_too_complex")
        #expect(long?.field == "target.where.name.$regex")
    }

    @Test("containsRegex finds $regex anywhere in the tree")
    func containsRegex() throws {
        #expect(try parse(#"{"$or": [{"badge": 1}, {"name": {"$regex": "x"}}]}"#).containsRegex)
        #expect(try !parse(#"{"$or": [{"badge": 1}, {"name": "x"}]}"#).containsRegex)
    }

    // MARK: Evaluation

    private static func installation(
        _ id: String, user: String? = nil, platform: Platform = .ios, channels: [String] = [], locale: String? = nil,
        badge: Int = 0, model: String? = nil, valid: Bool = true, lastSeen: Date? = nil,
        attributes: [String: JSONValue] = [:]
    ) -> Installation {
        Installation(
            id: id, appID: "app", userID: user, platform: platform, service: platform == .android ? .fcm : .apns,
            environment: .production, token: .device(id), channels: channels, locale: locale, badge: badge,
            deviceModel: model, attributes: attributes, valid: valid, lastSeenAt: lastSeen, createdAt: newYear,
            updatedAt: newYear)
    }

    private static let sample: [Installation] = [
        installation(
            "a", user: "u1", channels: ["news", "sports"], locale: "fr", badge: 3, model: "iPhone15,2",
            lastSeen: newYear.addingTimeInterval(-86_400),
            attributes: [
                "vip": .bool(true), "level": .number(3), "tags": .array([.string("x"), .number(7)]),
                "profile": .object(["tier": .string("gold")]),
            ]),
        installation(
            "b", platform: .android, channels: ["news"], badge: 0, model: "Pixel 8", valid: false,
            attributes: ["vip": .bool(false), "level": .string("3"), "profile": .object(["tier": .string("silver")])]),
        installation(
            "c", user: "u2", channels: [], locale: "en", badge: 10, model: "iphone SE", lastSeen: newYear,
            attributes: ["vip": .null, "level": .number(1), "tags": .string("x")]),
        installation("d", user: "u1", platform: .android, channels: ["sports"], locale: "é", badge: 1),
    ]

    private func selected(_ json: String) throws -> [String] {
        let query = try parse(json)
        return Self.sample.filter(query.matches).map(\.id)
    }

    @Test(
        "The in-memory evaluator follows Parse semantics",
        arguments: [
            ("{}", ["a", "b", "c", "d"]),
            (#"{"platform": "android"}"#, ["b", "d"]),
            (#"{"user_id": "u1"}"#, ["a", "d"]),
            (#"{"user_id": null}"#, ["b"]),
            (#"{"user_id": {"$ne": "u1"}}"#, ["b", "c"]),
            (#"{"user_id": {"$exists": true}}"#, ["a", "c", "d"]),
            (#"{"user_id": {"$in": ["u2", null]}}"#, ["b", "c"]),
            (#"{"user_id": {"$nin": ["u2"]}}"#, ["a", "b", "d"]),
            (#"{"channels": "news"}"#, ["a", "b"]),
            (#"{"channels": {"$ne": "news"}}"#, ["c", "d"]),
            (#"{"channels": {"$in": ["sports", "weather"]}}"#, ["a", "d"]),
            (#"{"channels": {"$nin": ["sports", "weather"]}}"#, ["b", "c"]),
            (#"{"channels": {"$all": ["news", "sports"]}}"#, ["a"]),
            (#"{"channels": {"$exists": true}}"#, ["a", "b", "c", "d"]),
            (#"{"badge": {"$gt": 0, "$lte": 3}}"#, ["a", "d"]),
            (#"{"badge": {"$in": [0, 10]}}"#, ["b", "c"]),
            (#"{"valid": false}"#, ["b"]),
            (#"{"locale": {"$gt": "en"}}"#, ["a", "d"]),
            (#"{"locale": {"$gt": "z"}}"#, ["d"]),
            (#"{"vip": true}"#, ["a"]),
            (#"{"attributes.vip": {"$ne": true}}"#, ["b", "c", "d"]),
            (#"{"vip": {"$exists": true}}"#, ["a", "b"]),
            (#"{"vip": null}"#, ["c", "d"]),
            (#"{"level": 3}"#, ["a"]),
            (#"{"level": "3"}"#, ["b"]),
            (#"{"level": {"$gte": 1}}"#, ["a", "c"]),
            (#"{"level": {"$gte": "1"}}"#, ["b"]),
            (#"{"tags": "x"}"#, ["a", "c"]),
            (#"{"tags": 7}"#, ["a"]),
            (#"{"tags": {"$all": ["x", 7]}}"#, ["a"]),
            (#"{"tags": {"$gt": 5}}"#, ["a"]),
            (#"{"profile.tier": "gold"}"#, ["a"]),
            (#"{"attributes.profile": {"$exists": true}}"#, ["a", "b"]),
            (#"{"profile": "gold"}"#, []),
            (#"{"profile.tier.deeper": {"$exists": false}}"#, ["a", "b", "c", "d"]),
            (#"{"device_model": {"$regex": "^iphone"}}"#, ["c"]),
            (#"{"device_model": {"$regex": "^iphone", "$options": "i"}}"#, ["a", "c"]),
            (#"{"channels": {"$regex": "^sp"}}"#, ["a", "d"]),
            (#"{"last_seen_at": {"$lt": "2026-01-01T00:00:00Z"}}"#, ["a"]),
            (#"{"last_seen_at": {"$exists": false}}"#, ["b", "d"]),
            (#"{"$or": [{"platform": "android", "valid": true}, {"badge": {"$gte": 10}}]}"#, ["c", "d"]),
            (#"{"$and": [{"$or": [{"vip": true}, {"level": 1}]}, {"locale": {"$ne": "en"}}]}"#, ["a"]),
        ])
    func evaluator(json: String, expected: [String]) throws {
        #expect(try selected(json) == expected)
    }
}

import Foundation
import HeraldCore
import HeraldTestSupport
import PostgresNIO
import Testing

@testable import HeraldPostgres

/// Runs queries compiled to PostgreSQL against real rows and checks them against the in-memory
/// evaluator (the same table of queries as the SQLite suite).
@Suite("Installation query on PostgreSQL", SeededQueryDatabase())
struct InstallationQueryPostgresTests {
    private static let base = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z

    /// An installation and its `attributes` exactly as stored (to keep `3.0` a JSON real).
    fileprivate struct Seed {
        var installation: Installation
        var attributesJSON: String
    }

    private static func seed(
        _ id: String, user: String? = nil, device: String? = nil, platform: Platform = .ios,
        service: PushService = .apns, environment: PushEnvironment = .production, channels: [String] = [],
        locale: String? = nil, timezone: String? = nil, badge: Int = 0, appVersion: String? = nil,
        osVersion: String? = nil, model: String? = nil, bundle: String? = nil, valid: Bool = true,
        created: TimeInterval = 0, lastSeen: TimeInterval? = nil, lastDelivered: TimeInterval? = nil,
        attributes: String = "{}"
    ) -> Seed {
        let parsed = try! JSONValue.parse(Array(attributes.utf8))
        let installation = Installation(
            id: id, appID: "app", userID: user, deviceID: device, platform: platform, service: service,
            environment: environment, token: .device("token-\(id)"), channels: channels, locale: locale,
            timezone: timezone, badge: badge, appVersion: appVersion, osVersion: osVersion, deviceModel: model,
            bundleID: bundle, attributes: parsed.objectValue!, valid: valid,
            lastDeliveredAt: lastDelivered.map { base.addingTimeInterval($0) },
            lastSeenAt: lastSeen.map { base.addingTimeInterval($0) }, createdAt: base.addingTimeInterval(created),
            updatedAt: base.addingTimeInterval(created + 60))
        return Seed(installation: installation, attributesJSON: attributes)
    }

    /// Twelve hand-made rows (h01…h12) with the attributes the hand-checked cases read, and twenty
    /// generated ones (g01…g20) that vary every column.
    fileprivate static let seeds: [Seed] = {
        var seeds = [
            seed(
                "h01", user: "alice", channels: ["beta", "news"], locale: "fr", badge: 3, model: "iPhone15,2",
                attributes:
                    #"{"vip": true, "level": 3, "tags": ["x", 7, null, {"k": 1}, [1]], "profile": {"tier": "gold", "score": 9.5}}"#
            ),
            seed(
                "h02", user: "alice", platform: .android, service: .fcm, channels: ["alpha", "beta"],
                attributes: #"{"vip": false, "level": "3", "profile": {"tier": "silver"}}"#),
            seed("h03", channels: ["news"], attributes: #"{"vip": null, "level": 3.0, "tags": "x"}"#),
            seed("h04", valid: false, attributes: #"{"vip": 1, "level": 1}"#),
            seed("h05", attributes: #"{"vip": "true", "profile": "gold"}"#),
            seed("h06", channels: ["Éclair"]),
            seed("h07", attributes: #"{"tags": [], "level": -2}"#),
            seed("h08", attributes: #"{"profile": {"tier": "Gold", "nested": {"deep": "yes"}}}"#),
            seed("h09", attributes: #"{"level": 10, "name": "Éclair"}"#),
            seed("h10", attributes: #"{"level": 2.5, "name": "eclair"}"#),
            // A decomposed É: equal to h09's name and ordered after "eclair" for Swift's String,
            // but not byte for byte.
            seed("h11", attributes: #"{"name": "E\u0301clair"}"#),
            seed("h12", attributes: #"{"tags": ["X", "y"], "name": "zeta"}"#),
            // Shanghai and Beijing (about 1,070 km or 665 miles apart), and a look-alike that is no GeoPoint.
            seed("h13", attributes: #"{"location": {"__type": "GeoPoint", "latitude": 31.23, "longitude": 121.47}}"#),
            seed("h14", attributes: #"{"location": {"__type": "GeoPoint", "latitude": 39.90, "longitude": 116.40}}"#),
            seed("h15", attributes: #"{"location": {"latitude": 31.23, "longitude": 121.47}}"#),
        ]
        let platforms: [(Platform, PushService)] = [(.ios, .apns), (.android, .fcm), (.web, .webpush), (.ios, .sns)]
        let channelSets = [["news"], ["news", "sports"], [], ["weather"], ["sports", "weather", "news"]]
        let locales: [String?] = ["en", "fr", nil, "zh-Hans", "de"]
        let models: [String?] = ["Pixel 8", "pixel 7a", "iPhone16,1", nil]
        for index in 1...20 {
            let (platform, service) = platforms[index % platforms.count]
            let vip = index == 4 ? ", \"vip\": true" : ""
            seeds.append(
                seed(
                    String(format: "g%02d", index), user: index.isMultiple(of: 3) ? nil : "user-\(index % 7)",
                    device: index.isMultiple(of: 4) ? nil : "dev-\(index)", platform: platform, service: service,
                    environment: index.isMultiple(of: 5) ? .sandbox : .production,
                    channels: channelSets[index % channelSets.count], locale: locales[index % locales.count],
                    timezone: index.isMultiple(of: 2) ? "Asia/Shanghai" : "Europe/Paris", badge: index % 6,
                    appVersion: "\(1 + index % 3).\(index % 4)",
                    osVersion: index.isMultiple(of: 2) ? "17.\(index % 5)" : "14",
                    model: models[index % models.count], bundle: index.isMultiple(of: 7) ? nil : "com.example.app",
                    valid: !index.isMultiple(of: 6), created: Double(index) * 3600,
                    lastSeen: index.isMultiple(of: 3) ? nil : Double(index) * 7200,
                    lastDelivered: index.isMultiple(of: 2) ? Double(index) * 1800 : nil,
                    attributes: "{\"n\": \(index), \"group\": \"g\(index % 3)\"\(vip)}"))
        }
        return seeds
    }()

    private func parse(_ json: String) throws -> InstallationQuery {
        try InstallationQuery(parsing: JSONValue.parse(Array(json.utf8)))
    }

    /// The suite's seeded database (``SeededQueryDatabase``); `body` runs with a function that selects by a query.
    private func withSeededStore(
        _ body: (_ select: (InstallationQuery, Bool) async throws -> [String]) async throws -> Void
    ) async throws {
        let store = try #require(SeededQueryDatabase.current, "the suite's SeededQueryDatabase trait makes it")
        try await body { query, negated in
            let (sql, values) = query.postgresCondition(firstParameter: 2)
            let condition = negated ? "NOT (\(sql))" : sql
            return try await store.read { connection in
                try await connection.rows(
                    "SELECT id FROM installations WHERE app_id = $1 AND \(condition) ORDER BY id COLLATE \"C\"",
                    ["app"] + values)
            }.map { try $0.get("id", as: String.self) }
        }
    }

    private func selectedInMemory(_ query: InstallationQuery) -> [String] {
        Self.seeds.map(\.installation).filter(query.matches).map(\.id).sorted()
    }

    @Test(
        "Hand-checked answers: the SQL and the evaluator both give them",
        arguments: [
            (#"{"vip": true}"#, ["g04", "h01"]),
            (#"{"vip": {"$exists": true}}"#, ["g04", "h01", "h02", "h04", "h05"]),
            (
                #"{"vip": null, "n": {"$exists": false}}"#,
                ["h03", "h06", "h07", "h08", "h09", "h10", "h11", "h12", "h13", "h14", "h15"]
            ),
            (
                #"{"location": {"$nearSphere": {"__type": "GeoPoint", "latitude": 31.2, "longitude": 121.5}, "$maxDistanceInKilometers": 100}}"#,
                ["h13"]
            ),
            (
                #"{"location": {"$nearSphere": {"__type": "GeoPoint", "latitude": 31.2, "longitude": 121.5}, "$maxDistanceInKilometers": 1500}}"#,
                ["h13", "h14"]
            ),
            (
                #"{"location": {"$nearSphere": {"__type": "GeoPoint", "latitude": 31.2, "longitude": 121.5}, "$maxDistanceInMiles": 600}}"#,
                ["h13"]
            ),
            (
                #"{"location": {"$nearSphere": {"__type": "GeoPoint", "latitude": 31.2, "longitude": 121.5}, "$maxDistanceInRadians": 0.2}}"#,
                ["h13", "h14"]
            ),
            (#"{"location": {"$nearSphere": {"__type": "GeoPoint", "latitude": 0, "longitude": 0}}}"#, ["h13", "h14"]),
            (
                #"{"location": {"$within": {"$box": [{"__type": "GeoPoint", "latitude": 30, "longitude": 120}, {"__type": "GeoPoint", "latitude": 32, "longitude": 122}]}}}"#,
                ["h13"]
            ),
            (
                #"{"location": {"$within": {"$box": [{"__type": "GeoPoint", "latitude": 30, "longitude": 170}, {"__type": "GeoPoint", "latitude": 45, "longitude": 117}]}}}"#,
                ["h14"]
            ),
            (#"{"level": 3}"#, ["h01", "h03"]),
            (#"{"level": "3"}"#, ["h02"]),
            (#"{"level": {"$gt": 2}}"#, ["h01", "h03", "h09", "h10"]),
            (#"{"level": {"$in": [1, "3"]}}"#, ["h02", "h04"]),
            (#"{"tags": "x"}"#, ["h01", "h03"]),
            (#"{"tags": {"$all": ["x", 7]}}"#, ["h01"]),
            (#"{"tags": {"$regex": "^x$", "$options": "i"}}"#, ["h01", "h03", "h12"]),
            (#"{"tags": {"$exists": true, "$nin": ["x"]}}"#, ["h07", "h12"]),
            (#"{"profile.tier": "gold"}"#, ["h01"]),
            (#"{"profile.tier": {"$regex": "^gold$", "$options": "i"}}"#, ["h01", "h08"]),
            (#"{"profile": "gold"}"#, ["h05"]),
            (#"{"attributes.profile.nested.deep": {"$exists": true}}"#, ["h08"]),
            (#"{"profile.score": {"$gte": 9.5}}"#, ["h01"]),
            (#"{"name": "Éclair"}"#, ["h09"]),
            (#"{"name": {"$gt": "eclair"}}"#, ["h09", "h12"]),
            (#"{"channels": {"$all": ["beta", "alpha"]}}"#, ["h02"]),
            (#"{"channels": "Éclair"}"#, ["h06"]),
            (#"{"user_id": "alice", "channels": {"$ne": "news"}}"#, ["h02"]),
            (#"{"valid": false, "n": {"$exists": false}}"#, ["h04"]),
            (
                #"{"$or": [{"level": {"$lt": 0}}, {"profile": {"$exists": true}, "vip": {"$ne": true}}]}"#,
                ["h02", "h05", "h07", "h08"]
            ),
        ])
    func handChecked(json: String, expected: [String]) async throws {
        let query = try parse(json)
        #expect(selectedInMemory(query) == expected, "evaluator: \(json)")
        try await withSeededStore { select in
            let selected = try await select(query, false)
            #expect(selected == expected, "SQL: \(json)")
        }
    }

    @Test(
        "The SQL selects what the evaluator selects, and its negation the rest",
        arguments: [
            "{}",
            #"{"platform": "ios"}"#,
            #"{"platform": {"$ne": "android"}}"#,
            #"{"service": {"$in": ["fcm", "webpush"]}}"#,
            #"{"environment": "sandbox"}"#,
            #"{"id": {"$gt": "g10"}}"#,
            #"{"id": {"$lte": "g03"}}"#,
            #"{"user_id": null}"#,
            #"{"user_id": {"$ne": "alice"}}"#,
            #"{"user_id": {"$in": ["alice", null]}}"#,
            #"{"user_id": {"$nin": ["alice", null]}}"#,
            #"{"user_id": {"$exists": true}}"#,
            #"{"user_id": {"$exists": false}}"#,
            #"{"user_id": {"$gte": "user-3"}}"#,
            #"{"device_id": {"$regex": "^dev-1"}}"#,
            #"{"device_id": {"$ne": null}}"#,
            #"{"locale": {"$ne": "fr"}}"#,
            #"{"locale": {"$lt": "en"}}"#,
            #"{"locale": {"$nin": ["fr", "de"]}}"#,
            #"{"timezone": "Asia/Shanghai"}"#,
            #"{"badge": 0}"#,
            #"{"badge": {"$gt": 2, "$lt": 5}}"#,
            #"{"badge": {"$in": [1, 3.0]}}"#,
            #"{"badge": {"$nin": [0]}}"#,
            #"{"badge": 2.5}"#,
            #"{"badge": {"$lte": 2.5}}"#,
            #"{"app_version": {"$gte": "2.0"}}"#,
            #"{"os_version": {"$regex": "^17\\."}}"#,
            #"{"device_model": {"$regex": "pixel", "$options": "i"}}"#,
            #"{"device_model": {"$regex": "pixel"}}"#,
            #"{"device_model": {"$regex": "^(?!iPhone)"}}"#,
            #"{"bundle_id": {"$exists": false}}"#,
            #"{"valid": true}"#,
            #"{"valid": {"$ne": true}}"#,
            #"{"created_at": {"$gte": "2026-01-01T05:00:00Z"}}"#,
            #"{"created_at": {"__type": "Date", "iso": "2026-01-01T03:00:00.000Z"}}"#,
            #"{"updated_at": {"$lt": {"__type": "Date", "iso": "2026-01-01T10:00:00.000Z"}}}"#,
            #"{"last_seen_at": {"$exists": false}}"#,
            #"{"last_seen_at": {"$lt": "2026-01-02T00:00:00+08:00"}}"#,
            #"{"last_delivered_at": {"$ne": null}}"#,
            #"{"last_delivered_at": {"$in": [null, "2026-01-01T02:00:00Z"]}}"#,
            #"{"channels": "news"}"#,
            #"{"channels": {"$ne": "news"}}"#,
            #"{"channels": {"$in": ["weather", "beta"]}}"#,
            #"{"channels": {"$nin": ["news", "sports"]}}"#,
            #"{"channels": {"$all": ["news", "sports"]}}"#,
            #"{"channels": {"$regex": "^we"}}"#,
            #"{"channels": {"$gt": "t"}}"#,
            #"{"channels": {"$exists": false}}"#,
            #"{"channels": null}"#,
            #"{"channels": {"$ne": null}}"#,
            #"{"group": "g1"}"#,
            #"{"n": {"$gte": 10}}"#,
            #"{"attributes.n": {"$in": [1, 2, "3", true]}}"#,
            #"{"n": {"$exists": false}}"#,
            #"{"vip": {"$ne": true}}"#,
            #"{"vip": false}"#,
            #"{"vip": {"$in": [false, null]}}"#,
            #"{"level": {"$lt": "4"}}"#,
            #"{"level": {"$ne": 3}}"#,
            #"{"tags": {"$ne": "x"}}"#,
            #"{"tags": {"$gt": 5}}"#,
            #"{"tags": null}"#,
            #"{"profile": {"$exists": true}}"#,
            #"{"profile": {"$regex": "old"}}"#,
            #"{"name": {"$regex": "clair$"}}"#,
            #"{"name": {"$lt": "zeta"}}"#,
            #"{"$or": [{"vip": true}, {"$and": [{"platform": "android"}, {"badge": {"$gte": 3}}]}]}"#,
            #"{"$and": [{"$or": [{"channels": "news"}, {"locale": null}]}, {"valid": true}], "n": {"$lt": 15}}"#,
            #"{"$or": [{"user_id": {"$exists": false}}, {"group": {"$nin": ["g0", "g2"]}}], "channels": {"$ne": "sports"}}"#,
        ])
    func agreesWithEvaluator(json: String) async throws {
        let query = try parse(json)
        let expected = selectedInMemory(query)
        let rest = Set(Self.seeds.map(\.installation.id)).subtracting(expected).sorted()
        try await withSeededStore { select in
            let selected = try await select(query, false)
            let negated = try await select(query, true)
            #expect(selected == expected, "\(json)")
            #expect(negated == rest, "NOT \(json)")
        }
    }

    @Test("Values are bound, never spliced into the SQL")
    func boundValues() async throws {
        let query = try parse(#"{"user_id": "x' OR 1=1 --", "locale": {"$in": ["fr", "x' OR '1'='1"]}}"#)
        let (sql, values) = query.postgresCondition(firstParameter: 2)
        #expect(!sql.contains("OR 1=1"))
        #expect(!sql.contains("'x"))
        #expect(!values.isEmpty)
        try await withSeededStore { select in
            let selected = try await select(query, false)
            #expect(selected.isEmpty)
        }
    }

    @Test("An empty $and matches everything and an empty $or nothing")
    func emptyCombinations() async throws {
        try await withSeededStore { select in
            let all = try await select(.and([]), false)
            let none = try await select(.or([]), false)
            let inNothing = try await select(.condition(field: .column(.badge), op: .in([])), false)
            let notInNothing = try await select(.condition(field: .column(.badge), op: .notIn([])), false)
            #expect(all.count == Self.seeds.count)
            #expect(none.isEmpty)
            #expect(inNothing.isEmpty)
            #expect(notInNothing.count == Self.seeds.count)
        }
    }

    @Test("A $regex the parser accepts but PostgreSQL cannot run is a 400 invalid_query on where, not a 500")
    func regexPostgresCannotRun() async throws {
        // ICU takes a possessive quantifier; PostgreSQL's regular expressions do not.
        let query = try parse(#"{"locale": {"$regex": "f++"}}"#)
        try await withSeededStore { select in
            do {
                _ = try await select(query, false)
                Issue.record("the query ran")
            } catch let error as HeraldError {
                #expect(error.code == "invalid_query")
                #expect(error.field == "where")
                #expect(error.kind == .badRequest)
            }
        }
    }
}

/// One database holding the suite's rows (``InstallationQueryPostgresTests/seeds``) for the whole suite, which only reads them: made and seeded before its
/// first test, dropped after its last (a database per case made the suite a minute of migrations).
struct SeededQueryDatabase: SuiteTrait, TestScoping {
    @TaskLocal static var current: PostgresStore?

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await PostgresFixture.with { fixture in
            try await Self.insertSeeds(into: fixture.store)
            try await Self.$current.withValue(fixture.store) { try await function() }
        }
    }

    private static func insertSeeds(into store: PostgresStore) async throws {
        try await store.read { connection in
            for seed in InstallationQueryPostgresTests.seeds {
                let installation = seed.installation
                let channels = String(
                    decoding: JSONValue.array(installation.channels.map(JSONValue.string)).serialized(),
                    as: UTF8.self)
                try await connection.run(
                    """
                    INSERT INTO installations (
                        id, app_id, user_id, device_id, platform, service, environment, token_index,
                        token_sealed, channels, locale, timezone, badge, app_version, os_version, device_model,
                        bundle_id, attributes, valid, created_at, updated_at, last_seen_at, last_delivered_at)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12, $13, $14, $15, $16, $17,
                        $18::jsonb, $19, $20, $21, $22, $23)
                    """,
                    [
                        installation.id, installation.appID, installation.userID, installation.deviceID,
                        installation.platform.rawValue, installation.service.rawValue,
                        installation.environment.rawValue, Data((0..<16).map { _ in UInt8.random(in: 0...255) }),
                        Data((0..<32).map { _ in UInt8.random(in: 0...255) }), channels, installation.locale,
                        installation.timezone, installation.badge, installation.appVersion,
                        installation.osVersion, installation.deviceModel, installation.bundleID,
                        seed.attributesJSON, installation.valid, installation.createdAt.timeIntervalSince1970,
                        installation.updatedAt.timeIntervalSince1970,
                        installation.lastSeenAt?.timeIntervalSince1970,
                        installation.lastDeliveredAt?.timeIntervalSince1970,
                    ])
            }
        }
    }
}

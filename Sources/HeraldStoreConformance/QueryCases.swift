import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// The shared query table: twelve installations with varied attributes and `where` queries over
/// every operator of the query language, each with its matches worked out by hand. A case checks
/// that three answers agree: the hand-written list, ``InstallationQuery/matches(_:)`` (the
/// oracle) over the fixtures, the store's `resolve` and `count` for a target with the query, and
/// its listing (`installations(appID:matching:…)`, `countInstallations`), which keeps invalid ones.
public enum QueryCases {
    /// One installation of the table.
    struct Fixture: Sendable {
        var name: String
        var platform: Platform
        var service: PushService
        var user: String? = nil
        var channels: [String] = []
        var locale: String? = nil
        var badge: Int = 0
        var appVersion: String? = nil
        var deviceModel: String? = nil
        /// The attributes as JSON text.
        var attributes: String = "{}"

        func registration() throws -> InstallationRegistration {
            let token: PushToken =
                switch service {
                case .webpush: .webPush(Fixtures.webPushSubscription())
                case .fcm: .device(Fixtures.fcmToken())
                default: .device(Fixtures.apnsToken())
                }
            let attributes = try #require(try JSONValue.parse(Array(self.attributes.utf8)).objectValue)
            return InstallationRegistration(
                platform: platform, service: service, token: token,
                profile: .init(
                    userID: user, channels: channels, locale: locale, badge: badge, appVersion: appVersion,
                    deviceModel: deviceModel, attributes: attributes))
        }
    }

    /// A `where` query and the fixtures it selects.
    struct Query: Sendable {
        var json: String
        var expected: [String]

        init(_ json: String, _ expected: [String]) {
            self.json = json
            self.expected = expected
        }
    }

    static let app = "q"

    // Shanghai, Beijing (≈1,070 km from Shanghai), Tokyo (≈1,770 km), Sydney, Paris and Reykjavik
    // (≈2,230 km from Paris); lima's location is a look-alike without `__type`, no GeoPoint.
    static let fixtures: [Fixture] = [
        Fixture(
            name: "alpha", platform: .ios, service: .apns, user: "u1", channels: ["news", "sports"], locale: "en",
            appVersion: "2.1", deviceModel: "iPhone15,2",
            attributes: """
                {"level": 5, "score": 1.5, "vip": true, "name": "Alice", "tags": ["a", "b"],
                 "profile": {"tier": "gold", "age": 30}, "loc": \(point(31.23, 121.47))}
                """),
        Fixture(
            name: "bravo", platform: .android, service: .fcm, user: "u1", channels: ["news"], locale: "fr", badge: 2,
            appVersion: "1.0", deviceModel: "Pixel 8",
            attributes: """
                {"level": "5", "score": 2, "vip": false, "name": "alice", "tags": ["b", "c"],
                 "profile": {"tier": "silver", "age": 25}, "loc": \(point(39.90, 116.40))}
                """),
        Fixture(
            name: "charlie", platform: .web, service: .webpush, user: "u2", badge: 7,
            attributes: """
                {"level": 10, "score": 2.5, "vip": null, "name": "Bob", "tags": [], "profile": {"tier": "gold"}}
                """),
        Fixture(
            name: "delta", platform: .ios, service: .apns, channels: ["sports"], locale: "de", badge: 1,
            appVersion: "2.0", deviceModel: "iPad13,1",
            attributes: """
                {"level": 1, "vip": "true", "name": "bob", "tags": "a", "loc": \(point(35.68, 139.69))}
                """),
        Fixture(
            name: "echo", platform: .android, service: .fcm, user: "u3", channels: ["weather"], locale: "en", badge: 3),
        Fixture(
            name: "foxtrot", platform: .ipados, service: .apns, user: "u3", channels: ["news", "weather"], badge: 4,
            appVersion: "3.0",
            attributes: """
                {"level": 7, "score": -1, "name": "Éclair", "tags": ["A"],
                 "profile": {"tier": "Gold", "nested": {"deep": "yes"}}, "loc": \(point(-33.87, 151.21))}
                """),
        Fixture(
            name: "golf", platform: .android, service: .fcm, user: "u4", channels: ["sports"], locale: "es",
            deviceModel: "pixel 7a",
            attributes: """
                {"level": 0, "vip": true, "name": "charlie", "profile": "gold", "tags": ["a", "b", "c"]}
                """),
        Fixture(
            name: "hotel", platform: .web, service: .webpush,
            attributes: #"{"level": 3, "score": 0.5, "vip": false, "name": "delta"}"#),
        Fixture(
            name: "india", platform: .ios, service: .apns, user: "u5", channels: ["news"], locale: "en-GB", badge: 9,
            attributes: """
                {"level": 12, "vip": true, "name": "echo", "tags": ["b"], "loc": \(point(48.86, 2.35))}
                """),
        Fixture(
            name: "juliet", platform: .android, service: .fcm, user: "u5", attributes: #"{"level": null, "name": null}"#
        ),
        Fixture(
            name: "kilo", platform: .macos, service: .apns, user: "u6", channels: ["sports", "news"], badge: 5,
            attributes: """
                {"level": 100, "score": 99.9, "name": "Zed", "profile": {"tier": "bronze", "age": 60},
                 "loc": \(point(64.15, -21.94))}
                """),
        Fixture(
            name: "lima", platform: .ios, service: .apns, user: "u6", channels: ["beta"], locale: "en", badge: 1,
            attributes: """
                {"level": -5, "name": "alpha", "tags": ["x", "a"], "loc": {"latitude": 31.23, "longitude": 121.47}}
                """),
    ]

    /// Matches almost everything, but is invalid: no query may resolve to it.
    static let invalid = Fixture(
        name: "mike", platform: .ios, service: .apns, user: "u1", channels: ["news"],
        attributes: #"{"level": 5, "vip": true, "tags": ["a", "b"]}"#)

    static let everyone = fixtures.map(\.name)

    static func except(_ names: String...) -> [String] { everyone.filter { !names.contains($0) } }

    static func point(_ latitude: Double, _ longitude: Double) -> String {
        #"{"__type": "GeoPoint", "latitude": \#(latitude), "longitude": \#(longitude)}"#
    }

    static let shanghai = point(31.2, 121.5)

    /// The queries, by the operators they exercise.
    static let groups: [(name: String, queries: [Query])] = [
        (
            "equality, strict on type; int and double are one number",
            [
                Query("{}", everyone),
                Query(#"{"level": 5}"#, ["alpha"]),
                Query(#"{"level": "5"}"#, ["bravo"]),
                Query(#"{"level": 5.0}"#, ["alpha"]),
                Query(#"{"score": 2.0}"#, ["bravo"]),
                Query(#"{"vip": true}"#, ["alpha", "golf", "india"]),
                Query(#"{"vip": "true"}"#, ["delta"]),
                Query(#"{"badge": 2.0}"#, ["bravo"]),
                Query(#"{"platform": "android"}"#, ["bravo", "echo", "golf", "juliet"]),
                Query(#"{"level": {"$eq": 10}}"#, ["charlie"]),
            ]
        ),
        (
            "comparisons on numbers and strings",
            [
                Query(#"{"score": {"$gt": 1.5}}"#, ["bravo", "charlie", "kilo"]),
                Query(#"{"score": {"$gte": 1.5, "$lt": 50}}"#, ["alpha", "bravo", "charlie"]),
                Query(#"{"level": {"$lte": 3}}"#, ["delta", "golf", "hotel", "lima"]),
                Query(#"{"level": {"$gt": "4"}}"#, ["bravo"]),
                Query(#"{"name": {"$gt": "b"}}"#, ["delta", "foxtrot", "golf", "hotel", "india"]),
                Query(#"{"badge": {"$gt": 3}}"#, ["charlie", "foxtrot", "india", "kilo"]),
                Query(#"{"app_version": {"$gte": "2.0"}}"#, ["alpha", "delta", "foxtrot"]),
                Query(
                    #"{"created_at": {"$gte": {"__type": "Date", "iso": "2027-01-15T08:06:00.000Z"}}}"#,
                    ["golf", "hotel", "india", "juliet", "kilo", "lima"]),
            ]
        ),
        (
            "negations and membership, missing and null fields included",
            [
                Query(#"{"level": {"$ne": 5}}"#, except("alpha")),
                Query(#"{"vip": {"$ne": true}}"#, except("alpha", "golf", "india")),
                Query(#"{"level": {"$in": [5, "5", 7]}}"#, ["alpha", "bravo", "foxtrot"]),
                Query(#"{"level": {"$nin": [5, 10]}}"#, except("alpha", "charlie")),
                Query(#"{"level": {"$in": []}}"#, []),
                Query(#"{"level": {"$nin": []}}"#, everyone),
                Query(
                    #"{"vip": {"$in": [false, null]}}"#,
                    ["bravo", "charlie", "echo", "foxtrot", "hotel", "juliet", "kilo", "lima"]),
                Query(#"{"user_id": {"$ne": "u1"}}"#, except("alpha", "bravo")),
                Query(#"{"user_id": {"$in": ["u5", null]}}"#, ["delta", "hotel", "india", "juliet"]),
                Query(
                    #"{"locale": {"$nin": ["en", "fr"]}}"#,
                    ["charlie", "delta", "foxtrot", "golf", "hotel", "india", "juliet", "kilo"]),
                Query(
                    #"{"service": {"$in": ["webpush", "fcm"]}}"#,
                    ["bravo", "charlie", "echo", "golf", "hotel", "juliet"]),
            ]
        ),
        (
            "existence and null",
            [
                Query(#"{"level": {"$exists": false}}"#, ["echo", "juliet"]),
                Query(#"{"level": {"$exists": true}}"#, except("echo", "juliet")),
                Query(#"{"level": null}"#, ["echo", "juliet"]),
                Query(#"{"user_id": {"$exists": false}}"#, ["delta", "hotel"]),
                Query(#"{"profile": {"$exists": true}}"#, ["alpha", "bravo", "charlie", "foxtrot", "golf", "kilo"]),
            ]
        ),
        (
            "regular expressions, with and without the i option",
            [
                Query(#"{"name": {"$regex": "^a"}}"#, ["bravo", "lima"]),
                Query(#"{"name": {"$regex": "^a", "$options": "i"}}"#, ["alpha", "bravo", "lima"]),
                Query(#"{"name": {"$regex": "b", "$options": "i"}}"#, ["charlie", "delta"]),
                Query(#"{"locale": {"$regex": "^en"}}"#, ["alpha", "echo", "india", "lima"]),
                Query(#"{"device_model": {"$regex": "pixel", "$options": "i"}}"#, ["bravo", "golf"]),
            ]
        ),
        (
            "arrays: elements, $all, and channels",
            [
                Query(#"{"tags": "a"}"#, ["alpha", "delta", "golf", "lima"]),
                Query(#"{"tags": {"$all": ["a", "b"]}}"#, ["alpha", "golf"]),
                Query(
                    #"{"tags": {"$nin": ["a"]}}"#,
                    ["bravo", "charlie", "echo", "foxtrot", "hotel", "india", "juliet", "kilo"]),
                Query(#"{"tags": {"$regex": "^a$", "$options": "i"}}"#, ["alpha", "delta", "foxtrot", "golf", "lima"]),
                Query(#"{"tags": {"$exists": true, "$nin": ["a", "b"]}}"#, ["charlie", "foxtrot"]),
                Query(#"{"channels": "news"}"#, ["alpha", "bravo", "foxtrot", "india", "kilo"]),
                Query(#"{"channels": {"$all": ["news", "sports"]}}"#, ["alpha", "kilo"]),
                Query(
                    #"{"channels": {"$ne": "news"}}"#, ["charlie", "delta", "echo", "golf", "hotel", "juliet", "lima"]),
                Query(#"{"channels": {"$in": ["weather", "beta"]}}"#, ["echo", "foxtrot", "lima"]),
            ]
        ),
        (
            "nested key paths",
            [
                Query(#"{"profile.tier": "gold"}"#, ["alpha", "charlie"]),
                Query(
                    #"{"attributes.profile.tier": {"$regex": "^gold$", "$options": "i"}}"#,
                    ["alpha", "charlie", "foxtrot"]),
                Query(#"{"profile.age": {"$gte": 30}}"#, ["alpha", "kilo"]),
                Query(#"{"profile.nested.deep": {"$exists": true}}"#, ["foxtrot"]),
                Query(#"{"profile": "gold"}"#, ["golf"]),
            ]
        ),
        (
            "$and and $or",
            [
                Query(#"{"$or": [{"level": {"$lt": 0}}, {"vip": "true"}]}"#, ["delta", "lima"]),
                Query(#"{"$and": [{"channels": "news"}, {"platform": "ios"}]}"#, ["alpha", "india"]),
                Query(
                    #"{"$or": [{"user_id": "u6"}, {"$and": [{"vip": true}, {"badge": {"$gte": 5}}]}]}"#,
                    ["india", "kilo", "lima"]),
                Query(#"{"channels": "news", "$or": [{"locale": null}, {"badge": 2}]}"#, ["bravo", "foxtrot", "kilo"]),
            ]
        ),
        (
            "geo: $nearSphere with each distance unit, $within $box",
            [
                Query(#"{"loc": {"$nearSphere": \#(shanghai), "$maxDistanceInKilometers": 100}}"#, ["alpha"]),
                Query(
                    #"{"loc": {"$nearSphere": \#(shanghai), "$maxDistanceInKilometers": 1500}}"#, ["alpha", "bravo"]),
                Query(
                    #"{"loc": {"$nearSphere": \#(shanghai), "$maxDistanceInMiles": 1200}}"#,
                    ["alpha", "bravo", "delta"]),
                Query(
                    #"{"loc": {"$nearSphere": \#(point(48.86, 2.35)), "$maxDistanceInRadians": 0.5}}"#,
                    ["india", "kilo"]),
                Query(
                    #"{"loc": {"$nearSphere": \#(point(0, 0))}}"#,
                    ["alpha", "bravo", "delta", "foxtrot", "india", "kilo"]),
                Query(
                    #"{"loc": {"$within": {"$box": [\#(point(30, 115)), \#(point(41, 122))]}}}"#, ["alpha", "bravo"]),
                // A box across the antimeridian: longitudes from 100 east round to 20 west.
                Query(
                    #"{"loc": {"$within": {"$box": [\#(point(-40, 100)), \#(point(70, -20))]}}}"#,
                    ["alpha", "bravo", "delta", "foxtrot", "kilo"]),
            ]
        ),
    ]

    /// One case per group of the table.
    static let cases: [StoreConformanceCase] = groups.map { group in
        StoreConformanceCase("query: \(group.name)") { store in try await check(group.queries, in: store) }
    }

    /// Registers the fixtures, then checks every query three ways.
    static func check(_ queries: [Query], in store: any HeraldStore) async throws {
        var installations: [Installation] = []
        var names: [String: String] = [:]
        for (index, fixture) in fixtures.enumerated() {
            let registration = try fixture.registration()
            let time = StoreConformance.at(Double(index) * 60)
            let stored = try await store.register(registration, appID: app, now: time)
            #expect(stored.created)
            installations.append(Installation(registration, id: stored.installation.id, appID: app, now: time))
            names[stored.installation.id] = fixture.name
        }
        let invalid = try await store.register(try Self.invalid.registration(), appID: app, now: StoreConformance.now)
        try await StoreConformance.applyEvents(
            [(invalid.installation.id, .invalidated(reason: "Unregistered", since: nil, at: StoreConformance.now))],
            in: store)
        var invalidInstallation = Installation(
            try Self.invalid.registration(), id: invalid.installation.id, appID: app, now: StoreConformance.now)
        invalidInstallation.valid = false
        installations.append(invalidInstallation)
        names[invalid.installation.id] = Self.invalid.name
        // Another app's installation that every query would select.
        _ = try await store.register(try fixtures[0].registration(), appID: "other", now: StoreConformance.now)

        for query in queries {
            #expect(Set(query.expected).isSubset(of: everyone), "unknown fixture in \(query.json)")
            let parsed = try AudienceQuery(parsing: try JSONValue.parse(Array(query.json.utf8)))
            let oracle = installations.filter { $0.valid && parsed.query.matches($0) }.map(\.id)
            #expect(oracle.compactMap { names[$0] }.sorted() == query.expected.sorted(), "oracle: \(query.json)")

            let target = NotificationTarget(audience: .query(parsed))
            let resolved = try await StoreConformance.resolveAll(target, app: app, in: store, limit: 5)
            #expect(resolved == resolved.sorted(), "resolve order: \(query.json)")
            #expect(resolved.map { names[$0] ?? $0 }.sorted() == query.expected.sorted(), "resolve: \(query.json)")

            var byService: [PushService: Int] = [:]
            for installation in installations where oracle.contains(installation.id) {
                byService[installation.service, default: 0] += 1
            }
            #expect(try await store.count(target, appID: app) == byService, "count: \(query.json)")

            // The listing a dialect reads: valid or not, in id order, page by page with skip.
            let listed = installations.filter { parsed.query.matches($0) }.map(\.id).sorted()
            var pages: [String] = []
            while true {
                let page = try await store.installations(
                    appID: app, matching: parsed.query, order: [], skip: pages.count, limit: 5)
                pages += page.map(\.id)
                if page.count < 5 { break }
            }
            #expect(pages == listed, "listing: \(query.json)")
            #expect(
                try await store.countInstallations(appID: app, matching: parsed.query) == listed.count,
                "listing count: \(query.json)")
        }
    }
}

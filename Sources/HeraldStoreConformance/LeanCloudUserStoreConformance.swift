import Foundation
import HeraldCore
import HeraldLeanCloud
import HeraldTestSupport
import Testing

/// The LeanCloud dialect's `_User` objects (`LeanCloudUserStore`, declared in `HeraldLeanCloud`),
/// and their query by an installation query (the store's own, as ``QueryCases`` and ``ListingCases``).
extension StoreConformance {
    static let leanCloudUsers: [StoreConformanceCase] = [
        .init(
            "leancloud: _User objects are stored, replaced by id, listed in id order, and deleted",
            keeping: (any HeraldStore & LeanCloudUserStore).self
        ) { store in
            let fields: [String: JSONValue] = [
                "username": .string("ann"),
                "home": GeoPoint(latitude: 31.2, longitude: 121.5)!.json,
                "age": .number(30),
            ]
            let ann = LeanCloudUser(appID: "lc", id: "u2", fields: fields, createdAt: now, updatedAt: now)
            let bea = LeanCloudUser(
                appID: "lc", id: "u1", fields: ["username": .string("bea")], createdAt: now, updatedAt: now)
            try await store.putLeanCloudUser(ann)
            try await store.putLeanCloudUser(bea)
            #expect(try await store.leanCloudUser(appID: "lc", id: "u2") == ann)
            #expect(try await store.leanCloudUser(appID: "other", id: "u2") == nil)
            var changed = ann
            changed.fields["age"] = .number(31)
            changed.updatedAt = at(10)
            try await store.putLeanCloudUser(changed)
            #expect(try await store.leanCloudUser(appID: "lc", id: "u2") == changed)
            #expect(try await store.leanCloudUsers(appID: "lc", after: nil, limit: 10).map(\.id) == ["u1", "u2"])
            #expect(try await store.leanCloudUsers(appID: "lc", after: "u1", limit: 10) == [changed])
            #expect(try await store.leanCloudUsers(appID: "lc", after: nil, limit: 1).map(\.id) == ["u1"])
            #expect(try await store.deleteLeanCloudUser(appID: "lc", id: "u1"))
            #expect(try await !store.deleteLeanCloudUser(appID: "lc", id: "u1"))
            #expect(try await store.leanCloudUsers(appID: "lc", after: nil, limit: 10) == [changed])
        },
        .init(
            "listing: a dialect's JSON records by an installation query: id, times and saved fields",
            keeping: (any HeraldStore & LeanCloudUserStore).self
        ) { store in
            let users = [
                LeanCloudUser(
                    appID: "lc", id: "u1",
                    fields: try userFields(
                        #"{"name": "ann", "age": 31, "location": \#(QueryCases.point(31.23, 121.47))}"#),
                    createdAt: at(0), updatedAt: at(500)),
                LeanCloudUser(
                    appID: "lc", id: "u2", fields: try userFields(#"{"name": "bea", "age": 19, "tags": ["x"]}"#),
                    createdAt: at(60), updatedAt: at(60)),
                LeanCloudUser(
                    appID: "lc", id: "u3", fields: try userFields(#"{"name": "Cy", "age": "40"}"#),
                    createdAt: at(120), updatedAt: at(120)),
            ]
            for user in users { try await store.putLeanCloudUser(user) }
            // Another app's user that every query below would select.
            try await store.putLeanCloudUser(
                LeanCloudUser(
                    appID: "other", id: "u0", fields: users[0].fields, createdAt: at(0),
                    updatedAt: at(500)))
            let since = "{\"__type\": \"Date\", \"iso\": \"2027-01-15T08:01:00.000Z\"}"
            let queries: [(String, [String])] = [
                ("{}", ["u1", "u2", "u3"]),
                (#"{"id": "u2"}"#, ["u2"]),
                (#"{"id": {"$in": ["u1", "u3", "zz"]}}"#, ["u1", "u3"]),
                (#"{"age": {"$gt": 20}}"#, ["u1"]),
                (#"{"age": {"$gte": 19}}"#, ["u1", "u2"]),
                (#"{"name": {"$regex": "^[ab]"}}"#, ["u1", "u2"]),
                (#"{"tags": "x"}"#, ["u2"]),
                (#"{"created_at": {"$gte": \#(since)}}"#, ["u2", "u3"]),
                (#"{"updated_at": {"$gt": \#(since)}}"#, ["u1", "u3"]),
                (#"{"location": {"$nearSphere": \#(QueryCases.shanghai), "$maxDistanceInKilometers": 100}}"#, ["u1"]),
                // Installation columns no record has: missing.
                (#"{"locale": null}"#, ["u1", "u2", "u3"]),
                (#"{"platform": "ios"}"#, []),
                (#"{"channels": "news"}"#, []),
                (#"{"valid": {"$exists": true}}"#, []),
            ]
            for (json, expected) in queries {
                let query = try AudienceQuery(parsing: try JSONValue.parse(Array(json.utf8))).query
                let oracle = users.filter { user in
                    query.matches(
                        record: QueryRecord(
                            id: user.id, fields: user.fields, createdAt: user.createdAt, updatedAt: user.updatedAt))
                }
                #expect(oracle.map(\.id) == expected, "oracle: \(json)")
                #expect(
                    try await store.leanCloudUserIDs(appID: "lc", matching: query, limit: 10) == expected, "\(json)")
            }
            #expect(try await store.leanCloudUserIDs(appID: "lc", matching: .and([]), limit: 2) == ["u1", "u2"])
        },
    ]

    static func userFields(_ json: String) throws -> [String: JSONValue] {
        try #require(try JSONValue.parse(Array(json.utf8)).objectValue)
    }
}

import Foundation
import HTTPTypes
import HeraldCore
import HeraldLeanCloud
import HeraldProviderMocks
import HeraldSQLite
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import HummingbirdTesting
import Testing

@testable import HeraldAPI
@testable import HeraldLeanCloud

@Suite("LeanCloud push API, through the router and the mock providers", .serialized)
struct LeanCloudTests {
    private static func lc(_ harness: EngineHarness, _ api: API) -> LeanCloudClient {
        let clock = harness.server.clock
        return LeanCloudClient(client: api.client, now: { clock.date })
    }

    @Test("The signature is LeanCloud's: the REST guide's known answer")
    func knownSignature() {
        let date = Date(timeIntervalSince1970: 1_453_014_943.466)
        #expect(
            LeanCloudClient.sign("UtOCzqb67d3sN12Kts4URwy8", at: date, master: false)
                == "d5bcbb897e19b2f6633c716dfdfaf9be,1453014943466")
        #expect(
            LeanCloudClient.sign("DyJegPlemooo4X1tg94gQkw1", at: date, master: true)
                == "e074720658078c898aa0d4b1b82bdf4b,1453014943466,master")
    }

    @Test("Every credential form works; wrong keys, stale signatures and app keys on master routes are refused")
    func authentication() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects())
        try await harness.run { api in
            let lc = Self.lc(harness, api)
            let now = harness.server.clock.date
            let id = try await lc.save(#"{"deviceType":"ios","deviceToken":"\#(Fixtures.apnsToken())"}"#)
            let path = "/1.1/classes/_Installation/\(id)"
            let legacySign = HTTPFields([
                HTTPField(name: HTTPField.Name("X-AVOSCloud-Application-Id")!, value: LeanCloudClient.appID),
                HTTPField(
                    name: HTTPField.Name("X-AVOSCloud-Request-Sign")!,
                    value: LeanCloudClient.sign(LeanCloudClient.appKey, at: now, master: false)),
            ])
            let legacyMaster = HTTPFields([
                HTTPField(name: HTTPField.Name("X-AVOSCloud-Application-Id")!, value: LeanCloudClient.appID),
                HTTPField(name: HTTPField.Name("X-AVOSCloud-Master-Key")!, value: LeanCloudClient.masterKey),
            ])
            for auth: LeanCloudClient.Auth in [
                .appKey, .masterKey, .signed(master: false, at: now), .signed(master: true, at: now), .legacy,
                .headers(legacySign), .headers(legacyMaster),
            ] {
                let answer = try await lc.call(.get, path, auth: auth)
                #expect(answer.status == .ok, "\(auth)")
                #expect(answer.string("objectId") == id, "\(auth)")
            }
            // Master-only: a query; the master forms pass, the app key forms get 119.
            for auth: LeanCloudClient.Auth in [.masterKey, .signed(master: true, at: now), .headers(legacyMaster)] {
                #expect(try await lc.call(.get, "/1.1/classes/_Installation", auth: auth).status == .ok)
            }
            for auth: LeanCloudClient.Auth in [.appKey, .signed(master: false, at: now), .legacy] {
                let answer = try await lc.call(.get, "/1.1/classes/_Installation", auth: auth)
                #expect(answer.status == .forbidden)
                #expect(answer.leanCloudCode == 119)
                #expect(answer.string("error") != nil)
            }
            // Client push is off: the app key cannot push or read a notification.
            let refused = try await lc.call(.post, "/1.1/push", auth: .appKey, body: #"{"data":{"alert":"x"}}"#)
            #expect(refused.status == .forbidden)
            #expect(refused.leanCloudCode == 119)
            // Failures: 401 with LeanCloud's body, for every route.
            let failures: [HTTPFields] = [
                [:],
                [HTTPField.Name("X-LC-Id")!: LeanCloudClient.appID, HTTPField.Name("X-LC-Key")!: "wrong"],
                [HTTPField.Name("X-LC-Id")!: "unknown", HTTPField.Name("X-LC-Key")!: LeanCloudClient.appKey],
                [
                    HTTPField.Name("X-LC-Id")!: LeanCloudClient.appID,
                    HTTPField.Name("X-LC-Key")!: LeanCloudClient.appKey + ",master",
                ],
                [
                    HTTPField.Name("X-LC-Id")!: LeanCloudClient.appID,
                    HTTPField.Name("X-LC-Sign")!: LeanCloudClient.sign(
                        LeanCloudClient.appKey, at: now.addingTimeInterval(-3600), master: false),
                ],
                [
                    HTTPField.Name("X-LC-Id")!: LeanCloudClient.appID,
                    HTTPField.Name("X-LC-Sign")!: LeanCloudClient.sign("not-the-key", at: now, master: false),
                ],
                [
                    HTTPField.Name("X-LC-Id")!: LeanCloudClient.appID,
                    // The app key signed, but claiming master.
                    HTTPField.Name("X-LC-Sign")!: LeanCloudClient.sign(LeanCloudClient.appKey, at: now, master: false)
                        + ",master",
                ],
            ]
            for headers in failures {
                for (method, uri) in [(HTTPRequest.Method.get, path), (.post, "/1.1/push"), (.delete, path)] {
                    let answer = try await lc.call(method, uri, auth: .headers(headers), body: "{}")
                    #expect(answer.status == .unauthorized, "\(headers) \(uri)")
                    #expect(answer.leanCloudCode == 401)
                    #expect(
                        answer.string("error") == "Unauthorized."
                            || answer.string("error") == "Request signature expired.")
                }
            }
            // Nothing was deleted by the refused calls.
            #expect(try await lc.call(.get, path).status == .ok)
        }
    }

    @Test("Installations: create, update by token, fields and pointers, operations, query, delete")
    func installations() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects())
        try await harness.run { api in
            let lc = Self.lc(harness, api)
            let token = Fixtures.apnsToken()
            let created = try await lc.call(
                .post, "/1.1/installations", auth: .legacy,
                body: #"""
                    {"deviceType":"ios","deviceToken":"\#(token.uppercased())","channels":["public","protected"],
                    "badge":2,"timeZone":"Asia/Shanghai","apnsTopic":"com.example.herald","injuryReports":true,
                    "owner":{"__type":"Pointer","className":"_User","objectId":"55a4d0bbe4b0"}}
                    """#)
            #expect(created.status == .created)
            let id = try #require(created.string("objectId"))
            #expect(created.headers[.location] == "/1.1/classes/_Installation/\(id)")
            let createdAt = try #require(created.string("createdAt"))
            #expect(createdAt.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil)

            // Saving the same token again updates the installation.
            let again = try await lc.call(
                .post, "/1.1/classes/_Installation?fetchWhenSave=true", auth: .appKey,
                body: #"{"deviceType":"ios","deviceToken":"\#(token)","scores":true}"#)
            #expect(again.status == .ok)
            #expect(again.string("objectId") == id)
            #expect(again["scores"] == .bool(true))
            #expect(again["injuryReports"] == .bool(true))

            let fetched = try await lc.call(.get, "/1.1/installations/\(id)", auth: .appKey)
            #expect(fetched.string("deviceType") == "ios")
            #expect(fetched.string("deviceToken") == token)
            #expect(fetched["channels"] == .array([.string("public"), .string("protected")]))
            #expect(fetched.int("badge") == 2)
            #expect(fetched.string("timeZone") == "Asia/Shanghai")
            #expect(fetched.string("apnsTopic") == "com.example.herald")
            #expect(fetched["valid"] == .bool(true))
            #expect(fetched.string("owner.__type") == "Pointer")
            #expect(fetched.string("owner.className") == "_User")
            #expect(fetched.string("owner.objectId") == "55a4d0bbe4b0")

            // The SDK's operations.
            let ops = try await lc.call(
                .put, "/1.1/classes/_Installation/\(id)?fetchWhenSave=true", auth: .appKey,
                body: #"""
                    {"channels":{"__op":"AddUnique","objects":["Giants","public"]},"badge":{"__op":"Increment","amount":3},
                    "scores":{"__op":"Delete"}}
                    """#)
            #expect(ops.status == .ok)
            #expect(ops["channels"] == .array([.string("public"), .string("protected"), .string("Giants")]))
            #expect(ops.int("badge") == 5)
            #expect(ops["scores"] == nil)
            #expect(ops.string("updatedAt") != nil)
            let removed = try await lc.call(
                .put, "/1.1/installations/\(id)", auth: .appKey,
                body: #"{"channels":{"__op":"Remove","objects":["public"]}}"#)
            #expect(removed.status == .ok)
            #expect(
                try await lc.call(.get, "/1.1/installations/\(id)")["channels"]
                    == .array([.string("protected"), .string("Giants")]))

            // Android: only an installationId is a direct installation; registrationId + fcm is FCM.
            let direct = try await lc.save(
                #"{"deviceType":"android","installationId":"12345678-4312-1234-1234-1234567890ab","channels":["public"]}"#
            )
            let stored = try #require(try await harness.server.store.installation(appID: "demo", id: direct))
            #expect(stored.service == .direct)
            #expect(stored.deviceID == "12345678-4312-1234-1234-1234567890ab")
            let fcmToken = Fixtures.fcmToken()
            let fcm = try await lc.save(
                #"{"deviceType":"android","installationId":"a7e1c2d4-0000-4000-8000-00000000fc01","registrationId":"\#(fcmToken)","vendor":"fcm"}"#
            )
            #expect(try await harness.server.store.installation(appID: "demo", id: fcm)?.service == .fcm)
            #expect(try await lc.call(.get, "/1.1/installations/\(fcm)").string("registrationId") == fcmToken)

            // Refusals, changing nothing.
            let wp = try await lc.call(
                .post, "/1.1/installations", auth: .appKey, body: #"{"deviceType":"wp","subscriptionUri":"x"}"#)
            #expect(wp.status == .badRequest)
            #expect(wp.leanCloudCode == 135)
            #expect(wp.string("error")?.contains("MPNS") == true)
            let badToken = try await lc.call(
                .post, "/1.1/installations", auth: .appKey, body: #"{"deviceType":"ios","deviceToken":"xyz"}"#)
            #expect(badToken.leanCloudCode == 114)
            let malformed = try await lc.call(.post, "/1.1/installations", auth: .appKey, body: #"{"deviceType":"ios""#)
            #expect(malformed.status == .badRequest)
            #expect(malformed.leanCloudCode == 107)
            let wrongType = try await lc.call(
                .put, "/1.1/installations/\(id)", auth: .appKey, body: #"{"badge":"many"}"#)
            #expect(wrongType.leanCloudCode == 111)
            let missing = try await lc.call(.get, "/1.1/installations/doesNotExist", auth: .appKey)
            #expect(missing.status == .notFound)
            #expect(missing.leanCloudCode == 101)

            // Queries (master key), as the Python SDK encodes them.
            let whereText =
                #"{"channels":"protected","deviceType":{"$in":["ios"]},"updatedAt":{"$lt":{"__type":"Date","iso":"2100-01-01T00:00:00.000Z"}}}"#
            let encoded = whereText.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let query = try await lc.call(.get, "/1.1/classes/_Installation?where=\(encoded)&keys=deviceToken&limit=10")
            #expect(query.status == .ok)
            guard case .array(let results)? = query["results"] else { throw TestFailure("no results") }
            #expect(results.count == 1)
            #expect(results.first?.objectValue?["deviceToken"] == .string(token))
            #expect(results.first?.objectValue?["channels"] == nil)
            let all = try await lc.call(.get, "/1.1/classes/_Installation?order=-createdAt&limit=0&count=1")
            #expect(all.int("count") == 3)
            #expect(all["results"] == .array([]))
            // Sorted by creation, then id (the three were made at one instant of the test's clock, and ids
            // made in one millisecond follow the order they were made in only while no other test makes ids).
            func text(_ row: JSONValue, _ key: String) -> String {
                if case .string(let value)? = row.objectValue?[key] { return value }
                return ""
            }
            let byCreation = try await lc.call(.get, "/1.1/installations?order=createdAt,objectId")
            guard case .array(let rows)? = byCreation["results"] else { throw TestFailure("no results") }
            let keys = rows.map { text($0, "createdAt") + " " + text($0, "objectId") }
            #expect(keys.count == 3 && keys == keys.sorted(), "\(keys)")
            #expect(rows.contains { text($0, "objectId") == direct })
            let ordered = try await lc.call(.get, "/1.1/installations?order=createdAt,objectId&skip=1&limit=1")
            #expect(
                ordered["results.0.objectId"] == .string(rows.dropFirst().first.map { text($0, "objectId") } ?? "none"))
            let tokenQuery = try await lc.call(
                .get,
                "/1.1/installations?where="
                    + #"{"deviceToken":{"$exists":true}}"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            )
            #expect(tokenQuery["results.0.objectId"] == .string(id))
            #expect(tokenQuery["results.1"] == nil)
            let custom = try await lc.call(
                .get,
                "/1.1/installations?count=1&where="
                    + #"{"injuryReports":true}"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
            #expect(custom.int("count") == 1)

            // Batch, as the SDK's save_all sends it.
            let batch = try await lc.call(
                .post, "/1.1/batch",
                body: #"""
                    {"requests":[{"method":"PUT","path":"/1.1/classes/_Installation/\#(id)","body":{"k":1}},
                    {"method":"PUT","path":"/1.1/classes/_Installation/nope","body":{"k":2}}]}
                    """#)
            #expect(batch.status == .ok)
            #expect(batch["0.success.updatedAt"] != nil)
            #expect(batch.int("1.error.code") == 101)
            #expect(try await lc.call(.get, "/1.1/installations/\(id)").int("k") == 1)

            // Delete, with the app key as the SDK's destroy does; then gone.
            let deleted = try await lc.call(.delete, "/1.1/classes/_Installation/\(id)", auth: .appKey, body: "{}")
            #expect(deleted.status == .ok)
            #expect(deleted.json == .object([:]))
            #expect(try await lc.call(.get, "/1.1/installations/\(id)").leanCloudCode == 101)
        }
    }

    @Test("Pushes reach the mock APNs and FCM: channel, where, badge Increment, silent Android action, status")
    func pushes() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects())
        try await harness.run { api in
            let lc = Self.lc(harness, api)
            let mets = Fixtures.apnsToken()
            let other = Fixtures.apnsToken()
            let fcmToken = Fixtures.fcmToken()
            _ = try await lc.save(#"{"deviceType":"ios","deviceToken":"\#(mets)","channels":["Mets"],"badge":4}"#)
            _ = try await lc.save(#"{"deviceType":"ios","deviceToken":"\#(other)","injuryReports":true}"#)
            _ = try await lc.save(
                #"{"deviceType":"android","installationId":"inst-0001-0000-0000-000000000001","registrationId":"\#(fcmToken)","vendor":"fcm","channels":["public"]}"#
            )

            let channelPush = try await lc.push(
                #"""
                {"channels":["Mets"],"data":{"alert":"The Mets scored! The game is now tied 1-1.","badge":"Increment",
                "sound":"cheering.caf","title":"Mets Score!","newsItem":"Man bites dog"}}
                """#)
            try await harness.drain()
            let apns = try #require(harness.apns.requests.first)
            #expect(apns.token == mets)
            let aps = try #require(apns.json?.objectValue?["aps"]?.objectValue)
            #expect(aps["badge"] == .number(JSONNumber(5)))
            #expect(aps["sound"] == .string("cheering.caf"))
            #expect(aps["alert"]?.objectValue?["body"] == .string("The Mets scored! The game is now tied 1-1."))
            #expect(apns.json?.objectValue?["newsItem"] == .string("Man bites dog"))
            #expect(harness.apns.requests.count == 1)
            #expect(harness.fcm.requests.isEmpty)

            let status = try await lc.call(.get, "/1.1/tables/Notifications/\(channelPush)")
            #expect(status.status == .ok)
            #expect(status.string("objectId") == channelPush)
            #expect(status.string("status") == "done")
            #expect(status.int("devices") == 1)
            #expect(status.int("successes") == 1)
            #expect(status.int("errors") == 0)
            #expect(status.string("data.badge") == "Increment")
            #expect(status.string("data.alert") == "The Mets scored! The game is now tied 1-1.")
            #expect(try await lc.call(.get, "/1.1/classes/_Notification/\(channelPush)").string("status") == "done")
            #expect(try await lc.call(.get, "/1.1/tables/Notifications/none").leanCloudCode == 101)

            // A where query on a custom field.
            _ = try await lc.push(#"{"where":{"injuryReports":true},"data":{"alert":"Willie Hayes injured."}}"#)
            try await harness.drain()
            #expect(harness.apns.requests.count == 2)
            #expect(harness.apns.requests.last?.token == other)

            // Silent Android: action and custom keys, data only.
            _ = try await lc.push(
                #"{"channels":["public"],"data":{"action":"com.avos.UPDATE_STATUS","name":"avos cloud."}}"#)
            try await harness.drain()
            let fcm = try #require(harness.fcm.requests.first)
            #expect(fcm.token == fcmToken)
            let message = try #require(fcm.json?.objectValue?["message"]?.objectValue)
            #expect(message["notification"] == nil)
            #expect(message["android"]?.objectValue?["notification"] == nil)
            #expect(message["data"]?.objectValue?["action"] == .string("com.avos.UPDATE_STATUS"))
            #expect(message["data"]?.objectValue?["name"] == .string("avos cloud."))
            #expect(harness.apns.requests.count == 2)

            // notification_id: a repeat returns the first notification.
            let first = try await lc.push(#"{"notification_id":"abc123","data":{"alert":"once"},"channels":["none"]}"#)
            let repeated = try await lc.push(
                #"{"notification_id":"abc123","data":{"alert":"once"},"channels":["none"]}"#)
            #expect(first == repeated)

            // A where on deviceToken equality.
            _ = try await lc.push(#"{"where":{"deviceToken":"\#(other.uppercased())"},"data":{"alert":"just you"}}"#)
            try await harness.drain()
            #expect(harness.apns.requests.count == 3)
            #expect(harness.apns.requests.last?.token == other)
        }
    }

    @Test("cql and geo queries select installations: near a GeoPoint, inside a box, by CQL")
    func cqlAndGeo() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects())
        try await harness.run { api in
            let lc = Self.lc(harness, api)
            let shanghai = Fixtures.apnsToken()
            let beijing = Fixtures.apnsToken()
            _ = try await lc.save(
                #"{"deviceType":"ios","deviceToken":"\#(shanghai)","level":3,"location":{"__type":"GeoPoint","latitude":31.23,"longitude":121.47}}"#
            )
            _ = try await lc.save(
                #"{"deviceType":"ios","deviceToken":"\#(beijing)","level":7,"location":{"__type":"GeoPoint","latitude":39.9,"longitude":116.4}}"#
            )
            func pushed(_ body: String) async throws -> [String] {
                let before = harness.apns.requests.count
                _ = try await lc.push(body)
                try await harness.drain()
                return harness.apns.requests.dropFirst(before).compactMap(\.token)
            }
            #expect(
                try await pushed(
                    #"{"where":{"location":{"$nearSphere":{"__type":"GeoPoint","latitude":31.2,"longitude":121.5},"$maxDistanceInMiles":100}},"data":{"alert":"near"}}"#
                ) == [shanghai])
            #expect(
                try await pushed(
                    #"{"where":{"location":{"$within":{"$box":[{"__type":"GeoPoint","latitude":35,"longitude":110},{"__type":"GeoPoint","latitude":45,"longitude":120}]}}},"data":{"alert":"box"}}"#
                ) == [beijing])
            #expect(
                try await pushed(
                    #"{"cql":"select * from _Installation where deviceType = 'ios' and level > 5","data":{"alert":"cql"}}"#
                ) == [beijing])
            #expect(
                try await pushed(
                    #"{"cql":"select * from _Installation where location near geopoint(31.2, 121.5) max 2000 km and level in (3, 7)","data":{"alert":"both"}}"#
                ).sorted() == [beijing, shanghai].sorted())
            // CQL's token conditions are resolved like where's (tokens are stored encrypted).
            #expect(
                try await pushed(
                    #"{"cql":"select * from _Installation where deviceToken = '\#(shanghai)'","data":{"alert":"token"}}"#
                ) == [shanghai])
            let refused = try await lc.call(
                .post, "/1.1/push", body: #"{"cql":"select * from _User where name = 'x'","data":{"alert":"x"}}"#)
            #expect(refused.leanCloudCode == 102)
            let malformed = try await lc.call(
                .post, "/1.1/push", body: #"{"cql":"select * from _Installation where","data":{"alert":"x"}}"#)
            #expect(malformed.leanCloudCode == 102)
        }
    }

    @Test("_User objects, and the guide's geo push: $inQuery on owner near a GeoPoint reaches that user's device")
    func usersAndInQuery() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects())
        try await harness.run { api in
            let lc = Self.lc(harness, api)
            func user(_ latitude: Double, _ longitude: Double) async throws -> String {
                let created = try await lc.call(
                    .post, "/1.1/users",
                    body:
                        #"{"username":"u","location":{"__type":"GeoPoint","latitude":\#(latitude),"longitude":\#(longitude)}}"#
                )
                #expect(created.status == .created)
                return try #require(created.string("objectId"))
            }
            let near = try await user(30.001, -20.001)
            let far = try await user(31.0, -20.0)
            #expect(try await lc.call(.get, "/1.1/classes/_User/\(near)").string("objectId") == near)
            #expect(try await lc.call(.get, "/1.1/users/\(near)", auth: .appKey).leanCloudCode == 119)
            let nearToken = Fixtures.apnsToken()
            let farToken = Fixtures.apnsToken()
            _ = try await lc.save(
                #"{"deviceType":"ios","deviceToken":"\#(nearToken)","owner":{"__type":"Pointer","className":"_User","objectId":"\#(near)"}}"#
            )
            _ = try await lc.save(
                #"{"deviceType":"ios","deviceToken":"\#(farToken)","owner":{"__type":"Pointer","className":"_User","objectId":"\#(far)"}}"#
            )
            // The guide's request, verbatim but for valid JSON.
            _ = try await lc.push(
                #"{"where":{"owner":{"$inQuery":{"location":{"$nearSphere":{"__type":"GeoPoint","latitude":30.0,"longitude":-20.0},"$maxDistanceInMiles":1.0}}}},"data":{"alert":"Free hotdogs at the avoscloud concession stand!"}}"#
            )
            try await harness.drain()
            #expect(harness.apns.requests.map(\.token) == [nearToken])
            // The SDKs' form, with className, and $notInQuery.
            _ = try await lc.push(
                #"{"where":{"owner":{"$notInQuery":{"className":"_User","where":{"objectId":"\#(near)"}}}},"data":{"alert":"others"}}"#
            )
            try await harness.drain()
            #expect(harness.apns.requests.last?.token == farToken)
            #expect(harness.apns.requests.count == 2)
            let wrongClass = try await lc.call(
                .post, "/1.1/push",
                body: #"{"where":{"owner":{"$inQuery":{"className":"Post","where":{}}}},"data":{"alert":"x"}}"#)
            #expect(wrongClass.leanCloudCode == 102)

            #expect(
                try await lc.call(.put, "/1.1/users/\(far)", body: #"{"location":{"__op":"Delete"}}"#).status == .ok)
            #expect(try await lc.call(.get, "/1.1/users/\(far)")["location"] == nil)
            #expect(try await lc.call(.delete, "/1.1/users/\(far)").status == .ok)
            #expect(try await lc.call(.get, "/1.1/users/\(far)").leanCloudCode == 101)
        }
    }

    @Test("_User: bad names, bodies and operations are refused with LeanCloud's codes and store nothing")
    func userBadInput() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects())
        try await harness.run { api in
            let lc = Self.lc(harness, api)
            #expect(try await lc.call(.post, "/1.1/users", body: #"{"a b":1}"#).leanCloudCode == 105)
            #expect(try await lc.call(.post, "/1.1/users", body: #"{"name":"#).leanCloudCode == 107)
            #expect(try await lc.call(.post, "/1.1/users", body: #"["x"]"#).status.code == 400)
            #expect(try await lc.call(.post, "/1.1/users", auth: .appKey, body: #"{"name":"x"}"#).leanCloudCode == 119)
            #expect(try await lc.call(.put, "/1.1/users/nope", body: #"{"name":"x"}"#).leanCloudCode == 101)
            #expect(try await lc.call(.delete, "/1.1/classes/_User/nope").leanCloudCode == 101)
            let users = try #require(harness.server.store as? any LeanCloudUserStore)
            #expect(try await users.leanCloudUsers(appID: "demo", after: nil, limit: 10).isEmpty)
            let id = try #require(try await lc.call(.post, "/1.1/users", body: #"{"name":"x"}"#).string("objectId"))
            let increment = try await lc.call(
                .put, "/1.1/users/\(id)", body: #"{"name":{"__op":"Increment","amount":1}}"#)
            #expect(increment.leanCloudCode == 111)
            #expect(try await lc.call(.get, "/1.1/users/\(id)")["name"] == .string("x"))
        }
    }

    @Test("data.ios and data.android: each platform gets its own object in place of the common fields")
    func platformData() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects())
        try await harness.run { api in
            let lc = Self.lc(harness, api)
            let token = Fixtures.apnsToken()
            let fcmToken = Fixtures.fcmToken()
            _ = try await lc.save(#"{"deviceType":"ios","deviceToken":"\#(token)","badge":1}"#)
            _ = try await lc.save(
                #"{"deviceType":"android","installationId":"inst-0002-0000-0000-000000000002","registrationId":"\#(fcmToken)","vendor":"fcm"}"#
            )
            _ = try await lc.push(
                #"""
                {"data":{"alert":"common","title":"Common","shared":"c",
                "ios":{"alert":"for iOS","badge":"Increment","sound":"a.caf","p":"vmRZXZ1Dvo"},
                "android":{"action":"com.avos.UPDATE_STATUS","name":"avos cloud."}}}
                """#)
            try await harness.drain()
            let apns = try #require(harness.apns.requests.first?.json?.objectValue)
            let aps = try #require(apns["aps"]?.objectValue)
            #expect(aps["alert"] == .object(["body": .string("for iOS")]))
            #expect(aps["badge"] == .number(JSONNumber(2)))
            #expect(aps["sound"] == .string("a.caf"))
            #expect(apns["p"] == .string("vmRZXZ1Dvo"))
            #expect(apns["shared"] == nil)
            let message = try #require(harness.fcm.requests.first?.json?.objectValue?["message"]?.objectValue)
            #expect(message["notification"] == nil)
            // Beside the platform's object: the notification id Herald adds for open reports.
            var data = message["data"]?.objectValue ?? [:]
            #expect(data.removeValue(forKey: "herald_id") != nil)
            #expect(data == ["action": .string("com.avos.UPDATE_STATUS"), "name": .string("avos cloud.")])
            let wrong = try await lc.call(.post, "/1.1/push", body: #"{"data":{"ios":"x"}}"#)
            #expect(wrong.leanCloudCode == 111)
        }
    }

    @Test("prod dev goes through the APNs sandbox, prod through production, whatever the installation's")
    func prodDev() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects(), apnsSandbox: .separate)
        try await harness.run { api in
            let lc = Self.lc(harness, api)
            let sandbox = try #require(harness.sandboxAPNs)
            let token = Fixtures.apnsToken()
            _ = try await lc.save(#"{"deviceType":"ios","deviceToken":"\#(token)"}"#)
            let dev = try await lc.push(#"{"prod":"dev","data":{"alert":"dev"}}"#)
            try await harness.drain()
            #expect(sandbox.requests.map(\.token) == [token])
            #expect(harness.apns.requests.isEmpty)
            #expect(try await lc.call(.get, "/1.1/tables/Notifications/\(dev)").int("successes") == 1)
            _ = try await lc.push(#"{"prod":"prod","data":{"alert":"prod"}}"#)
            _ = try await lc.push(#"{"data":{"alert":"default"}}"#)
            try await harness.drain()
            #expect(harness.apns.requests.count == 2)
            #expect(sandbox.requests.count == 1)
            let bad = try await lc.call(.post, "/1.1/push", body: #"{"prod":"staging","data":{"alert":"x"}}"#)
            #expect(bad.leanCloudCode == 111)
        }
    }

    @Test(
        "An invalidated installation is valid again once the app updates it; the master key changes valid only by setting it (003)"
    )
    func updatedInstallationIsValidAgain() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects())
        try await harness.run { api in
            let lc = Self.lc(harness, api)
            let token = Fixtures.apnsToken()
            let id = try await lc.save(#"{"deviceType":"ios","deviceToken":"\#(token)","channels":["public"]}"#)
            // APNs says the token is gone: the installation is invalid, and pushes skip it.
            harness.apns.script(
                token: token, .unregistered(since: harness.server.clock.date.addingTimeInterval(60)), times: 1)
            _ = try await lc.push(#"{"channels":["public"],"data":{"alert":"first"}}"#)
            try await harness.drain()
            func valid() async throws -> JSONValue? {
                try await lc.call(.get, "/1.1/installations/\(id)")["valid"]
            }
            #expect(try await valid() == .bool(false))

            // The master key's writes that do not set valid leave it invalid: a field, and a save by token.
            let edited = try await lc.call(.put, "/1.1/installations/\(id)", auth: .masterKey, body: #"{"badge":3}"#)
            #expect(edited.status == .ok)
            #expect(try await valid() == .bool(false))
            let resaved = try await lc.call(
                .post, "/1.1/installations", auth: .masterKey,
                body: #"{"deviceType":"ios","deviceToken":"\#(token)","badge":4}"#)
            #expect(resaved.status == .ok)
            #expect(try await valid() == .bool(false))
            let invalidatedAt = try await api.call(.get, "/v1/installations/\(id)")["invalidated_at"]
            #expect(invalidatedAt != nil && invalidatedAt != .null)

            // The guide's channels update, with the app key (X-AVOSCloud-*): the app was opened, the
            // installation is valid again, with its failures forgotten.
            let updated = try await lc.call(
                .put, "/1.1/installations/\(id)", auth: .legacy, body: #"{"channels":["Giants"]}"#)
            #expect(updated.status == .ok)
            #expect(try await valid() == .bool(true))
            let native = try await api.call(.get, "/v1/installations/\(id)")
            #expect(native["invalidated_at"] == .null)
            #expect(native["failure_count"] == .number(0))
            _ = try await lc.push(#"{"channels":["Giants"],"data":{"alert":"second"}}"#)
            try await harness.drain()
            #expect(harness.apns.requests.count == 2)

            // The master key sets it explicitly, either way.
            let off = try await lc.call(.put, "/1.1/installations/\(id)", auth: .masterKey, body: #"{"valid":false}"#)
            #expect(off.status == .ok)
            #expect(try await valid() == .bool(false))
            let on = try await lc.call(.put, "/1.1/installations/\(id)", auth: .masterKey, body: #"{"valid":true}"#)
            #expect(on.status == .ok)
            #expect(try await valid() == .bool(true))
        }
    }

    @Test("push_time schedules; a push expired before sending is never sent")
    func scheduling() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects())
        try await harness.run { api in
            let lc = Self.lc(harness, api)
            _ = try await lc.save(#"{"deviceType":"ios","deviceToken":"\#(Fixtures.apnsToken())"}"#)
            let clock = harness.server.clock
            let later = LeanCloudDateText.string(clock.date.addingTimeInterval(600))
            let scheduled = try await lc.push(#"{"push_time":"\#(later)","data":{"alert":"later"}}"#)
            try await harness.drain()
            #expect(harness.apns.requests.isEmpty)
            #expect(try await lc.call(.get, "/1.1/tables/Notifications/\(scheduled)").string("status") == "in queue")
            clock.advance(by: .seconds(601))
            try await harness.drain()
            #expect(harness.apns.requests.count == 1)
            #expect(try await lc.call(.get, "/1.1/tables/Notifications/\(scheduled)").string("status") == "done")

            let expiring = try await lc.push(#"{"expiration_interval":60,"data":{"alert":"soon stale"}}"#)
            clock.advance(by: .seconds(120))
            try await harness.drain()
            #expect(harness.apns.requests.count == 1)
            let expired = try await lc.call(.get, "/1.1/tables/Notifications/\(expiring)")
            #expect(expired.string("status") == LeanCloudExpected.expired)
            #expect(expired.int("successes") == 0)
            // Already past when sent: accepted, and expired without a send.
            let past = LeanCloudDateText.string(clock.date.addingTimeInterval(-3600))
            let stale = try await lc.push(#"{"expiration_time":"\#(past)","data":{"alert":"stale"}}"#)
            try await harness.drain()
            #expect(harness.apns.requests.count == 1)
            #expect(
                try await lc.call(.get, "/1.1/tables/Notifications/\(stale)").string("status")
                    == LeanCloudExpected.expired)

            // Queries over _Notification (master key).
            func query(_ parameters: String) async throws -> CallResponse {
                try await lc.call(.get, "/1.1/classes/_Notification?" + parameters)
            }
            func encoded(_ text: String) -> String {
                text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            }
            #expect(try await query("count=1&limit=0").int("count") == 3)
            #expect(
                try await query("count=1&where=" + encoded(#"{"status":"\#(LeanCloudExpected.expired)"}"#)).int("count")
                    == 2)
            let done = try await query("where=" + encoded(#"{"status":{"$in":["done","in queue"]},"devices":1}"#))
            #expect(done["results.0.objectId"] == .string(scheduled))
            #expect(done["results.1"] == nil)
            let newest = try await query("order=-createdAt,-objectId&limit=1&keys=status")
            #expect(newest.string("results.0.objectId") == stale)
            #expect(newest["results.0.status"] == .string(LeanCloudExpected.expired))
            #expect(newest["results.0.data"] == nil)
            let before = LeanCloudDateText.string(clock.date.addingTimeInterval(-1))
            let earlier = try await query(
                "count=1&where=" + encoded(#"{"createdAt":{"$lt":{"__type":"Date","iso":"\#(before)"}}}"#))
            #expect(earlier.int("count") == 2)
            #expect(try await query("where=" + encoded(#"{"status":{"$near":1}}"#)).leanCloudCode == 102)
            let denied = try await lc.call(.get, "/1.1/classes/_Notification", auth: .appKey)
            #expect(denied.leanCloudCode == 119)
        }
    }
}

/// Timestamps as the SDK writes them.
enum LeanCloudDateText {
    static func string(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

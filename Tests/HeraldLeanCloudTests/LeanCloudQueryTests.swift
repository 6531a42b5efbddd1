import Foundation
import HTTPTypes
import HeraldCore
import HeraldSQLite
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import HummingbirdTesting
import Testing

@testable import HeraldAPI
@testable import HeraldLeanCloud

/// LeanCloud's class queries (`_Installation`, `_Notification`, `_User` sub-queries) translated
/// to Herald's query language and run by the store as its own SQL, through the router.
@Suite("LeanCloud queries, run by the store", .serialized)
struct LeanCloudQueryTests {
    private static func lc(_ harness: EngineHarness, _ api: API) -> LeanCloudClient {
        let clock = harness.server.clock
        return LeanCloudClient(client: api.client, now: { clock.date })
    }

    private static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    private static func ids(_ response: CallResponse) -> [String] {
        guard case .array(let results)? = response["results"] else { return [] }
        return results.compactMap { result in
            if case .string(let id)? = result.objectValue?["objectId"] { id } else { nil }
        }
    }

    /// Rows sealed under another master key are rows this server cannot read: listing the whole
    /// app fails on them (the control), while a where that leaves them out is answered, as it is
    /// when the store selects the rows and nothing walks through the app's records.
    @Test("A where is the store's query: rows it leaves out are never read, so a row no key here opens is no matter")
    func compiledToTheStore() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects())
        try await harness.run { api in
            let lc = Self.lc(harness, api)
            let news = try await lc.save(
                #"{"deviceType":"ios","deviceToken":"\#(Fixtures.apnsToken())","channels":["news"],"level":3}"#)
            _ = try await lc.save(#"{"deviceType":"ios","deviceToken":"\#(Fixtures.apnsToken())","level":9}"#)
            let pushed = try await lc.push(#"{"channels":["news"],"data":{"alert":"hi"}}"#)
            try await harness.drain()

            let now = harness.server.clock.date
            let foreign = try SQLiteStore(
                path: harness.server.directory.file("herald.sqlite"), cipher: Fixtures.cipher())
            _ = try await foreign.register(
                InstallationRegistration(platform: .ios, service: .apns, token: .device(Fixtures.apnsToken())),
                appID: "demo", now: now)
            let sealed = PushNotification(
                id: Identifier.make(now: now), appID: "demo",
                target: NotificationTarget(
                    audience: .tokens([
                        .init(token: Fixtures.apnsToken(), service: .apns, environment: .production, platform: .ios)
                    ])),
                payload: NotificationPayload(title: "sealed"), source: "leancloud", status: .failed, createdAt: now)
            _ = try await foreign.insertNotification(
                sealed, runAt: now.addingTimeInterval(86_400), idempotencyWindow: .seconds(60))

            // The control: every row read, the foreign ones too.
            #expect(try await lc.call(.get, "/1.1/installations").status.code == 500)
            #expect(try await lc.call(.get, "/1.1/classes/_Notification").status.code == 500)

            let selected = try await lc.call(
                .get, "/1.1/installations?count=1&where=" + Self.encoded(#"{"channels":"news"}"#))
            #expect(selected.status == .ok)
            #expect(Self.ids(selected) == [news])
            #expect(selected.int("count") == 1)
            let custom = try await lc.call(
                .get, "/1.1/classes/_Installation?order=-level&where=" + Self.encoded(#"{"level":{"$gte":3}}"#))
            #expect(Self.ids(custom).count == 2)
            #expect(Self.ids(custom).first != news)
            // Counting reads no row.
            #expect(try await lc.call(.get, "/1.1/installations?count=1&limit=0").int("count") == 3)

            let done = try await lc.call(
                .get, "/1.1/classes/_Notification?count=1&where=" + Self.encoded(#"{"status":"done"}"#))
            #expect(done.status == .ok)
            #expect(Self.ids(done) == [pushed])
            #expect(done.int("count") == 1)
            #expect(try await lc.call(.get, "/1.1/classes/_Notification?count=1&limit=0").int("count") == 2)
        }
    }

    @Test("_Notification: LeanCloud's statuses, counts and Date objects, order, skip; fields it cannot query get 102")
    func notificationQueries() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects())
        try await harness.run { api in
            let lc = Self.lc(harness, api)
            _ = try await lc.save(#"{"deviceType":"ios","deviceToken":"\#(Fixtures.apnsToken())"}"#)
            let clock = harness.server.clock
            let first = try await lc.push(#"{"data":{"alert":"one"}}"#)
            try await harness.drain()
            clock.advance(by: .seconds(10))
            let later = LeanCloudDateText.string(clock.date.addingTimeInterval(600))
            let scheduled = try await lc.push(#"{"push_time":"\#(later)","data":{"alert":"later"}}"#)
            // One of the native API's: not a LeanCloud push.
            _ = try await api.send(#"{"target":{"all":true},"payload":{"title":"native"}}"#)
            try await harness.drain()
            func query(_ parameters: String) async throws -> CallResponse {
                try await lc.call(.get, "/1.1/classes/_Notification?" + parameters)
            }
            #expect(Self.ids(try await query("order=createdAt")) == [first, scheduled])
            #expect(Self.ids(try await query("order=-createdAt&limit=1")) == [scheduled])
            #expect(Self.ids(try await query("order=createdAt&skip=1")) == [scheduled])
            #expect(Self.ids(try await query("where=" + Self.encoded(#"{"successes":1,"errors":0}"#))) == [first])
            #expect(Self.ids(try await query("where=" + Self.encoded(#"{"status":{"$ne":"done"}}"#))) == [scheduled])
            #expect(
                Self.ids(try await query("where=" + Self.encoded(#"{"push_time":{"$exists":true}}"#))) == [scheduled])
            let since = LeanCloudDateText.string(clock.date.addingTimeInterval(-5))
            #expect(
                Self.ids(try await query("where=" + Self.encoded(#"{"createdAt":{"$gte":"\#(since)"}}"#)))
                    == [scheduled])
            #expect(
                Self.ids(
                    try await query(
                        "where="
                            + Self.encoded(
                                #"{"$or":[{"updatedAt":{"$lt":{"__type":"Date","iso":"\#(since)"}}},{"devices":{"$gt":5}}]}"#
                            ))) == [first])
            // A field no push has: $exists false matches all, a value none.
            #expect(try await query("count=1&where=" + Self.encoded(#"{"nope":{"$exists":false}}"#)).int("count") == 2)
            #expect(try await query("count=1&where=" + Self.encoded(#"{"nope":1}"#)).int("count") == 0)
            for bad in [
                #"{"data":{"$exists":true}}"#, #"{"createdAt":{"$gt":"yesterday"}}"#, #"{"status":{"$gt":"done"}}"#,
                #"{"devices":{"$in":3}}"#, #"{"$or":[]}"#, #"{"objectId":{"$regex":"x"}}"#,
            ] {
                let refused = try await query("where=" + Self.encoded(bad))
                #expect(refused.status == .badRequest, "\(bad)")
                #expect(refused.leanCloudCode == 102, "\(bad)")
            }
        }
    }

    @Test("_Installation: order on custom fields and built-ins; token fields cannot be sorted on (102)")
    func installationOrder() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects())
        try await harness.run { api in
            let lc = Self.lc(harness, api)
            let a = try await lc.save(#"{"deviceType":"ios","deviceToken":"\#(Fixtures.apnsToken())","rank":2}"#)
            let b = try await lc.save(#"{"deviceType":"ios","deviceToken":"\#(Fixtures.apnsToken())","rank":"x"}"#)
            let c = try await lc.save(#"{"deviceType":"ios","deviceToken":"\#(Fixtures.apnsToken())","rank":10}"#)
            let d = try await lc.save(#"{"deviceType":"ios","deviceToken":"\#(Fixtures.apnsToken())"}"#)
            // Missing first, then numbers, then strings.
            #expect(Self.ids(try await lc.call(.get, "/1.1/installations?order=rank")) == [d, a, c, b])
            #expect(Self.ids(try await lc.call(.get, "/1.1/installations?order=-rank&skip=1&limit=2")) == [c, a])
            #expect(
                Self.ids(try await lc.call(.get, "/1.1/installations?order=-createdAt,objectId")).count == 4)
            let refused = try await lc.call(.get, "/1.1/installations?order=deviceToken")
            #expect(refused.status == .badRequest)
            #expect(refused.leanCloudCode == 102)
        }
    }

    @Test("$inQuery over _User reads the users' times and ids in the store's query")
    func userSubqueryColumns() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects())
        try await harness.run { api in
            let lc = Self.lc(harness, api)
            let clock = harness.server.clock
            let old = try #require(try await lc.call(.post, "/1.1/users", body: #"{"name":"old"}"#).string("objectId"))
            clock.advance(by: .seconds(60))
            let new = try #require(try await lc.call(.post, "/1.1/users", body: #"{"name":"new"}"#).string("objectId"))
            func owned(by user: String) -> String {
                #"{"deviceType":"ios","deviceToken":"\#(Fixtures.apnsToken())","owner":{"__type":"Pointer","className":"_User","objectId":"\#(user)"}}"#
            }
            let oldDevice = try await lc.save(owned(by: old))
            let newDevice = try await lc.save(owned(by: new))
            let since = LeanCloudDateText.string(clock.date.addingTimeInterval(-30))
            func query(_ whereText: String) async throws -> [String] {
                Self.ids(try await lc.call(.get, "/1.1/installations?where=" + Self.encoded(whereText)))
            }
            #expect(
                try await query(
                    #"{"owner":{"$inQuery":{"where":{"createdAt":{"$gte":{"__type":"Date","iso":"\#(since)"}}},"className":"_User"}}}"#
                ) == [newDevice])
            #expect(try await query(#"{"owner":{"$notInQuery":{"objectId":"\#(new)"}}}"#) == [oldDevice])
            #expect(
                try await query(#"{"owner":{"$inQuery":{"name":{"$in":["old","new"]}}}}"#).sorted()
                    == [oldDevice, newDevice].sorted())
        }
    }
}

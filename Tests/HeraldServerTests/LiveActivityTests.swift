import Foundation
import HTTPTypes
import HeraldCore
import HeraldEngine
import HeraldProviderMocks
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

/// Live Activities through the real API, the engine and the mock APNs and FCM (docs/live-activities.md).
@Suite("Live Activities: push-to-start, updates in revision order, end, refused tokens, budget", .serialized)
struct LiveActivityTests {
    static let engine = EngineConfiguration(
        retryPolicy: RetryPolicy(base: .seconds(1), cap: .seconds(10), maxAttempts: 3), cleanupInterval: nil)

    /// The Live Activity pushes the mock APNs received: (token, aps).
    static func pushes(_ apns: MockAPNsServer) -> [(token: String, aps: [String: JSONValue])] {
        apns.requests.compactMap { request in
            guard request.header("apns-push-type") == "liveactivity", let token = request.token,
                let aps = request.json?.objectValue?["aps"]?.objectValue
            else { return nil }
            return (token, aps)
        }
    }

    static func eta(_ aps: [String: JSONValue]) -> Int? {
        if case .number(let value)? = aps["content-state"]?.objectValue?["eta"] {
            return value.integerValue.map(Int.init)
        }
        return nil
    }

    @Test("A user's two iPhones and Android phone: started, updated in order, a superseded retry never sent, ended")
    func lifecycle() async throws {
        let harness = try await EngineHarness(engine: Self.engine)
        try await harness.run { api in
            let startToken = Fixtures.apnsToken()
            let activityToken = Fixtures.apnsToken()
            let iphone = try await api.register(
                #"{"platform":"ios","token":"\#(Fixtures.apnsToken())","user_id":"ana"}"#)
            let other = try await api.register(
                #"{"platform":"ios","token":"\#(Fixtures.apnsToken())","user_id":"ana"}"#)
            let android = try await api.register(
                #"{"platform":"android","token":"\#(Fixtures.fcmToken())","user_id":"ana"}"#)
            let tokens = "/v1/installations/\(iphone)/live-activities"
            let hook = try await api.call(
                .post, "/v1/webhooks", body: #"{"url":"https://hooks.example.com/la","events":["*"]}"#)
            #expect(hook.status == .created)
            let hookID = try #require(hook.string("id"))
            let stored = try await api.call(
                .put, tokens + "/push-to-start/DeliveryAttributes", bearer: ServerHarness.clientKey,
                body: #"{"token":"\#(startToken)"}"#)
            #expect(stored.status == .ok)
            #expect(stored.string("token_suffix") == String(startToken.suffix(8)))

            let started = try await api.call(
                .post, "/v1/live-activities",
                body: #"""
                    {"target":{"user_ids":["ana"]},"attributes_type":"DeliveryAttributes","attributes":{"order":"42"},
                     "content_state":{"eta":30},"alert":{"title":"Order 42","body":"On its way"},"stale_date":1900000000}
                    """#)
            #expect(started.status == .accepted)
            let id = try #require(started.string("id"))
            #expect(started.int("revision") == 1)
            #expect(started.string("priority") == "normal")
            try await harness.drain()

            // The iPhone with a push-to-start token gets ActivityKit's start on the Live Activity topic.
            let start = try #require(harness.apns.requests.last)
            #expect(start.token == startToken)
            #expect(start.header("apns-topic") == EngineHarness.topic + ".push-type.liveactivity")
            #expect(start.header("apns-priority") == "5")
            #expect(start.status == 200)
            let aps = try #require(start.json?.objectValue?["aps"]?.objectValue)
            #expect(aps["event"] == .string("start"))
            #expect(aps["attributes-type"] == .string("DeliveryAttributes"))
            #expect(
                aps["attributes"]
                    == .object(["order": .string("42"), LiveActivityPush.activityIDAttribute: .string(id)]))
            #expect(aps["input-push-token"] == .number(1))
            #expect(aps["stale-date"] == .number(1_900_000_000))
            #expect(aps["alert"] == .object(["title": .string("Order 42"), "body": .string("On its way")]))
            // The Android phone gets a data message collapsed per activity.
            let message = try #require(harness.fcm.requests.last?.json?.objectValue?["message"]?.objectValue)
            let data = try #require(message["data"]?.objectValue)
            #expect(data["herald_live_activity"] == .string(id))
            #expect(data["event"] == .string("start"))
            #expect(data["revision"] == .string("1"))
            #expect(data["content_state"] == .string(#"{"eta":30}"#))
            #expect(message["notification"] == nil)
            #expect(message["android"]?.objectValue?["collapse_key"] == .string("herald-la-" + id))
            // The iPhone without a push-to-start token is skipped, and says why.
            let notification = try await api.notification(try #require(started.string("notification_id")))
            #expect(notification.int("counts.targeted") == 3)
            #expect(notification.int("counts.sent") == 2)
            let skipped = try await api.call(
                .get, "/v1/notifications/\(try #require(started.string("notification_id")))/deliveries")
            #expect(String(describing: skipped.json).contains("no_push_to_start_token"))
            _ = other

            // The started activity reports its token, under Herald's id.
            let reported = try await api.call(
                .put, tokens + "/" + id, bearer: ServerHarness.clientKey,
                body: #"{"attributes_type":"DeliveryAttributes","token":"\#(activityToken)"}"#)
            #expect(reported.status == .ok)
            let androidPart = try await api.call(
                .put, "/v1/installations/\(android)/live-activities/\(id)", bearer: ServerHarness.clientKey,
                body: #"{"attributes_type":"DeliveryAttributes","token":"\#(Fixtures.apnsToken())"}"#)
            #expect(androidPart.status == .badRequest)
            #expect(androidPart.errorCode == "unsupported_service")

            // Revision 2 fails at APNs and waits for a retry; revision 3 goes; the retry of 2 is
            // superseded and never sent after 3.
            harness.apns.script(token: activityToken, .internalServerError, times: 1)
            let second = try await api.call(
                .post, "/v1/live-activities/\(id)/updates", body: #"{"event":"update","content_state":{"eta":20}}"#)
            #expect(second.int("revision") == 2)
            try await harness.drain()
            let third = try await api.call(
                .post, "/v1/live-activities/\(id)/updates",
                body: #"{"event":"update","content_state":{"eta":10},"priority":"high"}"#)
            #expect(third.int("revision") == 3)
            #expect(third.string("priority") == "high")
            try await harness.drain()
            harness.server.clock.advance(by: .seconds(15))
            try await harness.drain()
            let sent = Self.pushes(harness.apns).filter { $0.token == activityToken && Self.eta($0.aps) != nil }
            let delivered = harness.apns.requests.filter { $0.token == activityToken && $0.status == 200 }
            #expect(delivered.compactMap { $0.json?.objectValue?["aps"]?.objectValue }.compactMap(Self.eta) == [10])
            #expect(sent.map { Self.eta($0.aps) } == [20, 10])
            let timestamps = sent.compactMap { $0.aps["timestamp"] }
            #expect(timestamps.count == 2)
            #expect(harness.apns.requests.last(where: { $0.token == activityToken })?.header("apns-priority") == "10")
            let superseded = try await api.call(
                .get, "/v1/notifications/\(try #require(second.string("notification_id")))/deliveries")
            #expect(String(describing: superseded.json).contains("superseded"))
            // Android got both, in order, on the same collapse key.
            let androidRevisions = harness.fcm.requests.compactMap {
                $0.json?.objectValue?["message"]?.objectValue?["data"]?.objectValue?["revision"]
            }
            #expect(androidRevisions == [.string("1"), .string("2"), .string("3")])

            // A token APNs says is gone is dropped, and only it: the installation stays valid.
            harness.apns.script(token: activityToken, .unregistered(since: harness.server.clock.date), times: 1)
            let fourth = try await api.call(
                .post, "/v1/live-activities/\(id)/updates", body: #"{"event":"update","content_state":{"eta":5}}"#)
            #expect(fourth.status == .accepted)
            try await harness.drain()
            let listed = try await api.call(.get, tokens, bearer: ServerHarness.clientKey)
            #expect(listed["activities"] == .array([]))
            #expect(listed["push_to_start"].map { if case .array(let items) = $0 { items.count } else { 0 } } == 1)
            #expect(try await api.call(.get, "/v1/installations/\(iphone)")["valid"] == .bool(true))

            // The end reaches the devices still taking part; the activity takes no more updates.
            let ended = try await api.call(
                .post, "/v1/live-activities/\(id)/updates",
                body: #"{"event":"end","content_state":{"eta":0},"dismissal_date":1900000000}"#)
            #expect(ended.int("revision") == 5)
            try await harness.drain()
            let last = try #require(harness.fcm.requests.last?.json?.objectValue?["message"]?.objectValue)
            #expect(last["data"]?.objectValue?["event"] == .string("end"))
            #expect(last["data"]?.objectValue?["dismissal_date"] == .string("1900000000"))
            let activity = try await api.call(.get, "/v1/live-activities/\(id)")
            #expect(activity.string("state") == "ended")
            #expect(activity.int("revision") == 5)
            let refused = try await api.call(
                .post, "/v1/live-activities/\(id)/updates", body: #"{"event":"update","content_state":{"eta":1}}"#)
            #expect(refused.status == .conflict)
            #expect(refused.errorCode == "live_activity_ended")

            // Each Live Activity push told the app's webhooks what happened, as any notification does; the
            // dropped activity token invalidated no installation.
            let events = try await api.call(.get, "/v1/webhooks/\(hookID)/deliveries?limit=100").items.compactMap {
                $0.objectValue?["type"]
            }
            #expect(events.filter { $0 == .string("notification.completed") }.count == 5, "\(events)")
            #expect(!events.contains(.string("installation.invalidated")), "\(events)")
        }
    }

    @Test("A broadcast channel: created at APNs, started on, broadcast to with one request, listed and deleted")
    func channels() async throws {
        let harness = try await EngineHarness(engine: Self.engine)
        try await harness.run { api in
            let created = try await api.call(
                .post, "/v1/live-activities/channels", body: #"{"id":"match-9","message_storage_policy":"most_recent"}"#
            )
            #expect(created.status == .created)
            let apnsID = try #require(created.string("apns_channel_id"))
            #expect(harness.apnsChannels.channels.channel(id: apnsID, bundleID: EngineHarness.topic) != nil)
            let again = try await api.call(.post, "/v1/live-activities/channels", body: #"{"id":"match-9"}"#)
            #expect(again.status == .conflict)
            #expect(harness.apnsChannels.channels.channels.count == 1)
            let listed = try await api.call(.get, "/v1/live-activities/channels")
            #expect(listed["data"] == .array([.object(try #require(created.json?.objectValue))]))

            // An activity started on the channel subscribes to it instead of asking for a token.
            let iphone = try await api.register(#"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
            let startToken = Fixtures.apnsToken()
            _ = try await api.call(
                .put, "/v1/installations/\(iphone)/live-activities/push-to-start/MatchAttributes",
                bearer: ServerHarness.clientKey, body: #"{"token":"\#(startToken)"}"#)
            let started = try await api.call(
                .post, "/v1/live-activities",
                body: #"""
                    {"target":{"installation_ids":["\#(iphone)"]},"attributes_type":"MatchAttributes",
                     "content_state":{"home":0,"away":0},"alert":{"title":"Kick-off"},"input_push_channel":"match-9"}
                    """#)
            #expect(started.status == .accepted)
            try await harness.drain()
            let aps = try #require(harness.apns.requests.last?.json?.objectValue?["aps"]?.objectValue)
            #expect(aps["input-push-channel"] == .string(apnsID))
            #expect(aps["input-push-token"] == nil)

            // One broadcast request, whatever the number of subscribers.
            let broadcast = try await api.call(
                .post, "/v1/live-activities/channels/match-9/updates",
                body: #"{"event":"update","content_state":{"home":1,"away":0},"priority":"high"}"#)
            #expect(broadcast.status == .accepted)
            #expect(broadcast.int("revision") == 1)
            try await harness.drain()
            let sent = try #require(harness.apns.requests.last)
            #expect(sent.path == "/4/broadcasts/apps/" + EngineHarness.topic)
            #expect(sent.header("apns-channel-id") == apnsID)
            #expect(sent.header("apns-priority") == "10")
            #expect(sent.status == 200)
            #expect(
                sent.json?.objectValue?["aps"]?.objectValue?["content-state"]
                    == .object(["home": .number(1), "away": .number(0)]))
            let record = try await api.notification(try #require(broadcast.string("notification_id")))
            #expect(record.int("counts.sent") == 1)

            let deleted = try await api.call(.delete, "/v1/live-activities/channels/match-9")
            #expect(deleted.status == .noContent)
            #expect(harness.apnsChannels.channels.channels.isEmpty)
            let gone = try await api.call(
                .post, "/v1/live-activities/channels/match-9/updates",
                body: #"{"event":"end","content_state":{"home":1,"away":0}}"#)
            #expect(gone.status == .notFound)
            #expect(try await api.call(.get, "/v1/live-activities/channels")["data"] == .array([]))
        }
    }

    @Test("A device on the direct channel gets the activity's events, tagged to replace its notification")
    func directChannel() async throws {
        let harness = try await EngineHarness(engine: Self.engine)
        try await harness.live { api, port in
            let id = try #require(
                try await api.call(
                    .post, "/v1/installations",
                    body: #"{"platform":"android","service":"direct","token":"device-\#(UUID().uuidString)"}"#
                ).string("id"))
            let channel = try await ChannelTestClient.subscribed(api, port: port, installation: id)
            let started = try await api.call(
                .post, "/v1/live-activities",
                body: #"""
                    {"target":{"installation_ids":["\#(id)"]},"attributes_type":"WasherAttributes",
                     "content_state":{"minutes":42},"alert":{"title":"Washing"}}
                    """#)
            let activity = try #require(started.string("id"))
            _ = try await harness.drain()
            let start = await channel.next()?["event"]?["data"]
            #expect(start?["tag"] == .string("herald-la-" + activity))
            #expect(start?["live_activity"]?["event"] == .string("start"))
            #expect(start?["live_activity"]?["content_state"] == .object(["minutes": .number(42)]))
            _ = try await api.call(
                .post, "/v1/live-activities/\(activity)/updates",
                body: #"{"event":"update","content_state":{"minutes":41}}"#)
            _ = try await harness.drain()
            let update = await channel.next()?["event"]?["data"]?["live_activity"]
            #expect(update?["revision"] == .number(2))
            #expect(update?["content_state"] == .object(["minutes": .number(41)]))
            _ = await channel.close()
        }
    }

    @Test("High priority within the activity's hourly budget, then priority 5 until the hour is over")
    func budget() async throws {
        var engine = Self.engine
        engine.liveActivityHighPriorityPerHour = ["demo": 2]
        let harness = try await EngineHarness(engine: engine)
        try await harness.run { api in
            let token = Fixtures.apnsToken()
            let iphone = try await api.register(#"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
            let id = "game-7"
            let joined = try await api.call(
                .put, "/v1/installations/\(iphone)/live-activities/\(id)", bearer: ServerHarness.clientKey,
                body: #"{"attributes_type":"ScoreAttributes","token":"\#(token)"}"#)
            #expect(joined.status == .ok)
            var priorities: [String] = []
            for (index, advance) in [0, 60, 60, 3600].enumerated() {
                harness.server.clock.advance(by: .seconds(advance))
                let update = try await api.call(
                    .post, "/v1/live-activities/\(id)/updates",
                    body: #"{"event":"update","content_state":{"home":\#(index)},"priority":"high"}"#)
                priorities.append(update.string("priority") ?? "")
                try await harness.drain()
            }
            #expect(priorities == ["high", "high", "normal", "high"])
            #expect(harness.apns.requests.map { $0.header("apns-priority") } == ["10", "10", "5", "10"])
            // Timestamps never go back, whatever the order in one second.
            let stamps = Self.pushes(harness.apns).compactMap { push -> Int? in
                if case .number(let value)? = push.aps["timestamp"] { return value.integerValue.map(Int.init) }
                return nil
            }
            #expect(stamps == stamps.sorted())
        }
    }

    @Test("An update that expires before it is sent is not sent")
    func expiry() async throws {
        let harness = try await EngineHarness(engine: Self.engine)
        try await harness.run { api in
            let iphone = try await api.register(#"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
            _ = try await api.call(
                .put, "/v1/installations/\(iphone)/live-activities/race", bearer: ServerHarness.clientKey,
                body: #"{"attributes_type":"RaceAttributes","token":"\#(Fixtures.apnsToken())"}"#)
            let update = try await api.call(
                .post, "/v1/live-activities/race/updates",
                body: #"{"event":"update","content_state":{"lap":3},"expiration_interval":10}"#)
            #expect(update.status == .accepted)
            harness.server.clock.advance(by: .seconds(11))
            try await harness.drain()
            #expect(harness.apns.requests.isEmpty)
            let notification = try await api.notification(try #require(update.string("notification_id")))
            #expect(notification.int("counts.skipped_expired") == 1)
        }
    }

    @Test("Bad input is refused with the field at fault, and changes nothing")
    func badInput() async throws {
        let harness = try await EngineHarness(engine: Self.engine)
        try await harness.run { api in
            let iphone = try await api.register(#"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
            let target = #""target":{"all":true},"attributes_type":"A","content_state":{}"#
            let cases: [(String, String, String?, HTTPResponse.Status)] = [
                ("/v1/live-activities", "{\(target)}", "alert", .badRequest),
                (
                    "/v1/live-activities", #"{"target":{"all":true},"content_state":{},"alert":{"title":"x"}}"#,
                    "attributes_type", .badRequest
                ),
                ("/v1/live-activities", #"{\#(target),"alert":{"title":"x"},"unknown":1}"#, "unknown", .badRequest),
                ("/v1/live-activities", #"{\#(target),"alert":{"title":"x"},"id":"a b"}"#, "id", .badRequest),
                (
                    "/v1/live-activities", #"{\#(target),"alert":{"title":"x"},"relevance_score":"high"}"#,
                    "relevance_score", .badRequest
                ),
                (
                    "/v1/live-activities",
                    #"{"target":{"tokens":[{"token":"\#(Fixtures.apnsToken())","service":"apns"}]},"attributes_type":"A","content_state":{},"alert":{"title":"x"}}"#,
                    "target.tokens", .badRequest
                ),
                (
                    "/v1/live-activities", #"{\#(target),"alert":{"title":"x"},"input_push_channel":"nope"}"#,
                    "input_push_channel", .badRequest
                ),
                ("/v1/live-activities/none/updates", #"{"event":"update","content_state":{}}"#, nil, .notFound),
                ("/v1/live-activities/none/updates", #"{"event":"update"}"#, "content_state", .badRequest),
                ("/v1/live-activities/none/updates", #"{"event":"start","content_state":{}}"#, "event", .badRequest),
            ]
            for (path, body, field, status) in cases {
                let response = try await api.call(.post, path, body: body)
                #expect(response.status == status, "\(body)")
                if let field { #expect(response.errorField == field, "\(body)") }
            }
            let clientStart = try await api.call(
                .post, "/v1/live-activities", bearer: ServerHarness.clientKey,
                body: #"{\#(target),"alert":{"title":"x"}}"#)
            #expect(clientStart.status == .forbidden)
            let badToken = try await api.call(
                .put, "/v1/installations/\(iphone)/live-activities/push-to-start/A", bearer: ServerHarness.clientKey,
                body: #"{"token":"xyz"}"#)
            #expect(badToken.status == .badRequest)
            #expect(badToken.errorField == "token")
            let missing = try await api.call(
                .put, "/v1/installations/\(iphone)/live-activities/act", bearer: ServerHarness.clientKey,
                body: #"{"attributes_type":"A"}"#)
            #expect(missing.errorField == "token")
            let listed = try await api.call(.get, "/v1/installations/\(iphone)/live-activities")
            #expect(listed["push_to_start"] == .array([]))
            #expect(listed["activities"] == .array([]))
            #expect(harness.apns.requests.isEmpty)
        }
    }

    @Test(
        "Every new route: malformed JSON, wrong types, unknown, missing and oversized fields get a 4xx, nothing changed"
    )
    func everyRouteRefuses() async throws {
        let harness = try await EngineHarness(engine: Self.engine)
        try await harness.run { api in
            let iphone = try await api.register(#"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
            let tokens = "/v1/installations/\(iphone)/live-activities"
            _ = try await api.call(
                .put, tokens + "/push-to-start/Score", body: #"{"token":"\#(Fixtures.apnsToken())"}"#)
            _ = try await api.call(
                .put, tokens + "/game", body: #"{"attributes_type":"Score","token":"\#(Fixtures.apnsToken())"}"#)
            #expect(
                try await api.call(.post, "/v1/live-activities/channels", body: #"{"id":"cup"}"#).status == .created)
            let long = String(repeating: "T", count: LiveActivityRequest.maxTypeLength + 1)
            let start = #""target":{"all":true},"attributes_type":"Score","content_state":{},"alert":{"title":"x"}"#
            let cases: [(HTTPRequest.Method, String, String, String?)] = [
                (.post, "/v1/live-activities", "{", nil),
                (.post, "/v1/live-activities", "[]", nil),
                (
                    .post, "/v1/live-activities",
                    #"{"target":"all","attributes_type":"S","content_state":{},"alert":{"title":"x"}}"#, "target"
                ),
                (
                    .post, "/v1/live-activities",
                    #"{"target":{"all":true},"attributes_type":5,"content_state":{},"alert":{"title":"x"}}"#,
                    "attributes_type"
                ),
                (
                    .post, "/v1/live-activities",
                    #"{"target":{"all":true},"attributes_type":"\#(long)","content_state":{},"alert":{"title":"x"}}"#,
                    "attributes_type"
                ),
                (.post, "/v1/live-activities", #"{\#(start),"attributes":"x"}"#, "attributes"),
                (
                    .post, "/v1/live-activities",
                    #"{"target":{"all":true},"attributes_type":"S","content_state":[],"alert":{"title":"x"}}"#,
                    "content_state"
                ),
                (
                    .post, "/v1/live-activities",
                    #"{"target":{"all":true},"attributes_type":"S","content_state":{},"alert":"x"}"#, "alert"
                ),
                (.post, "/v1/live-activities", #"{\#(start),"stale_date":"soon"}"#, "stale_date"),
                (.post, "/v1/live-activities", #"{\#(start),"priority":"urgent"}"#, "priority"),
                (.post, "/v1/live-activities", #"{\#(start),"expiration_interval":0}"#, "expiration_interval"),
                (.post, "/v1/live-activities", #"{\#(start),"input_push_token":"yes"}"#, "input_push_token"),
                (.post, "/v1/live-activities/game/updates", "{", nil),
                (.post, "/v1/live-activities/game/updates", #"{"event":5,"content_state":{}}"#, "event"),
                (
                    .post, "/v1/live-activities/game/updates", #"{"event":"update","content_state":"x"}"#,
                    "content_state"
                ),
                (.post, "/v1/live-activities/game/updates", #"{"event":"end","dismissal_date":-1}"#, "dismissal_date"),
                (.post, "/v1/live-activities/game/updates", #"{"event":"end","target":{"all":true}}"#, "target"),
                (.post, "/v1/live-activities/game/updates", #"{"event":"end","alert":{"text":"x"}}"#, "alert.text"),
                (.put, tokens + "/push-to-start/Score", "{", nil),
                (.put, tokens + "/push-to-start/Score", #"{"token":5}"#, "token"),
                (.put, tokens + "/push-to-start/Score", "{}", "token"),
                (.put, tokens + "/push-to-start/Score", #"{"token":"\#(Fixtures.apnsToken())","x":1}"#, "x"),
                (.put, tokens + "/game", "{", nil),
                (.put, tokens + "/game", #"{"token":"\#(Fixtures.apnsToken())"}"#, "attributes_type"),
                (.put, tokens + "/game", #"{"attributes_type":"Score","token":7}"#, "token"),
                (
                    .put, tokens + "/game", #"{"attributes_type":"\#(long)","token":"\#(Fixtures.apnsToken())"}"#,
                    "attributes_type"
                ),
                (
                    .put, tokens + "/a%20b", #"{"attributes_type":"Score","token":"\#(Fixtures.apnsToken())"}"#,
                    "activity_id"
                ),
                (.post, "/v1/live-activities/channels", "{", nil),
                (.post, "/v1/live-activities/channels", #"{"id":"a b"}"#, "id"),
                (.post, "/v1/live-activities/channels", #"{"id":"cup"}"#, "id"),
                (.post, "/v1/live-activities/channels", #"{"message_storage_policy":"all"}"#, "message_storage_policy"),
                (.post, "/v1/live-activities/channels", #"{"environment":"moon"}"#, "environment"),
                (.post, "/v1/live-activities/channels", #"{"colour":1}"#, "colour"),
                (.post, "/v1/live-activities/channels/cup/updates", "{", nil),
                (.post, "/v1/live-activities/channels/cup/updates", #"{"event":"start","content_state":{}}"#, "event"),
                (.post, "/v1/live-activities/channels/cup/updates", #"{"event":"update"}"#, "content_state"),
            ]
            let before = try await api.call(.get, tokens).json
            let activity = try await api.call(.get, "/v1/live-activities/game").json
            let channels = try await api.call(.get, "/v1/live-activities/channels").json
            let oversized = String(repeating: "d", count: 70_000)
            for (method, path, body, field) in cases {
                let answer = try await api.call(method, path, body: body)
                #expect((400..<500).contains(Int(answer.status.code)), "\(method) \(path) \(body): \(answer.status)")
                #expect(answer.errorCode != nil, "\(path) \(body)")
                if let field { #expect(answer.errorField == field, "\(path) \(body): \(answer.errorField ?? "none")") }
            }
            for (method, path) in [
                (HTTPRequest.Method.post, "/v1/live-activities"), (.post, "/v1/live-activities/game/updates"),
                (.put, tokens + "/push-to-start/Score"), (.put, tokens + "/game"),
                (.post, "/v1/live-activities/channels"), (.post, "/v1/live-activities/channels/cup/updates"),
            ] {
                let answer = try await api.call(method, path, body: #"{"padding":"\#(oversized)"}"#)
                #expect(answer.status == .contentTooLarge, "\(path): \(answer.status)")
            }
            #expect(try await api.call(.get, tokens).json == before, "the tokens unchanged")
            #expect(try await api.call(.get, "/v1/live-activities/game").json == activity, "the activity unchanged")
            #expect(try await api.call(.get, "/v1/live-activities/channels").json == channels, "the channels unchanged")
            #expect(try await api.call(.get, "/v1/notifications").items.isEmpty, "nothing sent")
            #expect(harness.apns.requests.isEmpty)
        }
    }
}

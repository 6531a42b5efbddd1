import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine
import HeraldProviderMocks
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import HeraldMatrix

@Suite("Matrix push gateway (POST /_matrix/push/v1/notify)")
struct MatrixTests {
    static let iosAppID = "org.herald.test.ios"
    static let androidAppID = "org.herald.test.android"

    static var dialects: DialectSettings {
        var dialects = DialectSettings()
        dialects.matrix = [
            "demo": MatrixConfiguration(appIDs: [iosAppID: .apns, androidAppID: .fcm], newPushkeysPerMinute: 3)
        ]
        return dialects
    }

    /// A notify body as Synapse sends it (its default format).
    static func notify(_ devices: [(appID: String, pushkey: String, format: String?)], unread: Int = 2) -> String {
        let list = devices.map { device in
            let data = device.format.map { #"{"format":"\#($0)"}"# } ?? "{}"
            return
                #"{"app_id":"\#(device.appID)","pushkey":"\#(device.pushkey)","pushkey_ts":1795862286,"data":\#(data),"tweaks":{"sound":"default"}}"#
        }
        return #"""
            {"notification":{"id":"$ev1","event_id":"$ev1","room_id":"!room:localhost","type":"m.room.message",
             "sender":"@alice:localhost","sender_display_name":"Alice","room_name":"Lunch","prio":"high",
             "counts":{"unread":\#(unread)},"content":{"msgtype":"m.text","body":"Noon?"},
             "devices":[\#(list.joined(separator: ","))]}}
            """#
    }

    @Test("The notify body: ids, counts and devices read; what is malformed is M_BAD_JSON naming it")
    func parsing() throws {
        let notification = try MatrixNotification(
            parsing: try JSONValue.parse(Array(Self.notify([(Self.iosAppID, "k", nil)]).utf8)))
        #expect(notification.eventID == "$ev1")
        #expect(notification.unread == 2)
        #expect(notification.devices.first?.pushkey == "k")
        let payload = notification.payload(for: notification.devices[0], route: .apns)
        #expect(payload.title == "Lunch")
        #expect(payload.body == "Alice: Noon?")
        #expect(payload.badge == .set(2))
        #expect(payload.sound == "default")
        #expect(payload.data["event_id"] == .string("$ev1"))
        #expect(payload.data["room_id"] == .string("!room:localhost"))
        for (body, fragment) in [
            (#"{}"#, "'notification'"),
            (#"{"notification":{"devices":[]}}"#, "devices"),
            (#"{"notification":{"devices":[{"app_id":"a"}]}}"#, "devices[0]"),
            (#"{"notification":{"prio":"urgent","devices":[{"app_id":"a","pushkey":"k"}]}}"#, "prio"),
            (#"{"notification":{"counts":{"unread":-1},"devices":[{"app_id":"a","pushkey":"k"}]}}"#, "unread"),
        ] {
            let json = try JSONValue.parse(Array(body.utf8))
            do throws(MatrixError) {
                _ = try MatrixNotification(parsing: json)
                Issue.record("accepted \(body)")
            } catch {
                #expect(error.errcode == "M_BAD_JSON")
                #expect(error.error.contains(fragment), "\(error.error)")
            }
        }
    }

    @Test(
        "Through the router: an APNs pushkey registered on first use gets the alert, event_id_only only ids, an FCM one a data message; unknown app ids and dead tokens are rejected; Matrix's errors"
    )
    func notifyThroughTheRouter() async throws {
        let harness = try await EngineHarness(dialects: Self.dialects)
        try await harness.run { api in
            let token = Fixtures.apnsToken()
            let first = try await Self.post(api, Self.notify([(Self.iosAppID, token, nil)]))
            #expect(first.status == .ok)
            #expect(first["rejected"] == .array([]))
            _ = try await harness.drain()
            let alert = try #require(harness.apns.requests.last)
            #expect(alert.token == token)
            let aps = alert.json?.objectValue?["aps"]?.objectValue
            #expect(aps?["badge"] == .number(2))
            #expect(aps?["alert"]?.objectValue?["title"] == .string("Lunch"))
            #expect(aps?["alert"]?.objectValue?["body"] == .string("Alice: Noon?"))
            #expect(alert.json?.objectValue?["event_id"] == .string("$ev1"))
            #expect(alert.json?.objectValue?["room_id"] == .string("!room:localhost"))
            #expect(alert.header("apns-priority") == "10")

            // event_id_only: a background push with the ids alone; prio low is priority 5.
            let idsOnly = Self.notify([(Self.iosAppID, token, "event_id_only")]).replacingOccurrences(
                of: #""prio":"high""#, with: #""prio":"low""#)
            #expect(try await Self.post(api, idsOnly).status == .ok)
            _ = try await harness.drain()
            let background = try #require(harness.apns.requests.last)
            #expect(background.json?.objectValue?["aps"]?.objectValue?["alert"] == nil)
            #expect(background.json?.objectValue?["aps"]?.objectValue?["content-available"] == .number(1))
            #expect(background.json?.objectValue?["event_id"] == .string("$ev1"))
            #expect(background.json?.objectValue?["sender"] == nil, "ids only")
            #expect(background.header("apns-priority") == "5")

            // FCM, an unknown app id, and a pushkey that cannot be an APNs token in one notify.
            let fcmToken = Fixtures.fcmToken()
            let mixed = try await Self.post(
                api,
                Self.notify([
                    (Self.androidAppID, fcmToken, nil), ("org.unknown.app", "abc", nil),
                    (Self.iosAppID, "not-hex", nil),
                ]))
            #expect(mixed["rejected"] == .array([.string("abc"), .string("not-hex")]))
            _ = try await harness.drain()
            let message = try #require(harness.fcm.requests.last)
            #expect(message.json?["message"]?["token"] == .string(fcmToken))
            #expect(message.json?["message"]?["data"]?["event_id"] == .string("$ev1"))

            // A token APNs calls unregistered: queued (the first answer cannot know), then rejected.
            harness.apns.script(token: token, .unregistered())
            #expect(try await Self.post(api, Self.notify([(Self.iosAppID, token, nil)]))["rejected"] == .array([]))
            _ = try await harness.drain()
            let before = harness.apns.requests.count
            #expect(
                try await Self.post(api, Self.notify([(Self.iosAppID, token, nil)]))["rejected"]
                    == .array([.string(token)]))
            _ = try await harness.drain()
            #expect(harness.apns.requests.count == before, "nothing sent to a dead token")

            // The ledger: the source and the sender's ids.
            let listed = try await api.call(.get, "/v1/notifications?limit=1")
            #expect(listed["data.0.source"] == .string("matrix"))

            // Matrix's errors, changing nothing.
            let notJSON = try await Self.post(api, "{nope")
            #expect(notJSON.status == .badRequest)
            #expect(notJSON["errcode"] == .string("M_NOT_JSON"))
            let bad = try await Self.post(api, #"{"notification":{}}"#)
            #expect(bad["errcode"] == .string("M_BAD_JSON"))
            // Three new pushkeys a minute from one address (two above): one more passes, the next waits.
            #expect(try await Self.post(api, Self.notify([(Self.iosAppID, Fixtures.apnsToken(), nil)])).status == .ok)
            let limited = try await Self.post(api, Self.notify([(Self.iosAppID, Fixtures.apnsToken(), nil)]))
            #expect(limited.status == .tooManyRequests)
            #expect(limited["errcode"] == .string("M_LIMIT_EXCEEDED"))
            #expect(limited.headers[.retryAfter] != nil)
        }
    }

    static func post(_ api: API, _ body: String) async throws -> CallResponse {
        try await api.call(.post, MatrixRoutes.path, bearer: nil, body: body)
    }
}

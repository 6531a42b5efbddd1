import Foundation
import HTTPTypes
import HeraldCore
import HeraldProviderMocks
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

/// What LeanCloud's clients read back and what each platform is shown (seed 003): `_Notification`'s
/// `status` and `subscribers`, `title` for Android only and `badge` / `sound` for iOS only, and the
/// refusal of an app-key push while client push is off.
@Suite("LeanCloud _Notification status, per-platform rendering, client push", .serialized)
struct LeanCloudNotificationTests {
    private static func lc(_ harness: EngineHarness, _ api: API) -> LeanCloudClient {
        let clock = harness.server.clock
        return LeanCloudClient(client: api.client, now: { clock.date })
    }

    /// An iOS (APNs) and an Android (FCM) installation; their tokens.
    private static func devices(_ lc: LeanCloudClient, badge: Int = 1) async throws -> (ios: String, android: String) {
        let token = Fixtures.apnsToken()
        let registrationID = Fixtures.fcmToken()
        _ = try await lc.save(#"{"deviceType":"ios","deviceToken":"\#(token)","badge":\#(badge)}"#)
        _ = try await lc.save(
            #"""
            {"deviceType":"android","installationId":"\#(UUID().uuidString.lowercased())",
            "registrationId":"\#(registrationID)","vendor":"fcm"}
            """#)
        return (token, registrationID)
    }

    @Test("status is in queue until the push is finished (scheduled too), then done; subscribers: devices reached")
    func statusSequence() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects())
        try await harness.run { api in
            let lc = Self.lc(harness, api)
            _ = try await Self.devices(lc)
            let clock = harness.server.clock
            let later = LeanCloudDateText.string(clock.date.addingTimeInterval(6))
            let id = try await lc.push(#"{"push_time":"\#(later)","data":{"alert":"in six seconds"}}"#)
            try await harness.drain()
            let before = try await lc.call(.get, "/1.1/tables/Notifications/\(id)")
            #expect(before.string("status") == "in queue")
            #expect(before.int("subscribers") == 0)
            // The native API keeps its own status.
            #expect(try await api.notification(id).string("status") == "scheduled")
            let queued = try await lc.call(
                .get, "/1.1/classes/_Notification?count=1&limit=0&where=%7B%22status%22%3A%22in%20queue%22%7D")
            #expect(queued.int("count") == 1)

            clock.advance(by: .seconds(7))
            try await harness.drain()
            #expect(harness.apns.requests.count == 1)
            #expect(harness.fcm.requests.count == 1)
            let after = try await lc.call(.get, "/1.1/tables/Notifications/\(id)")
            #expect(after.string("status") == "done")
            #expect(after.int("subscribers") == 2)
            #expect(after.int("devices") == 2)
            #expect(after.int("successes") == 2)
            #expect(after.int("errors") == 0)
            #expect(try await api.notification(id).string("status") == "done")
        }
    }

    @Test("An expired, a canceled and a failed push read as an error message, not a status word")
    func errorMessages() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects())
        try await harness.run { api in
            let lc = Self.lc(harness, api)
            let (token, registrationID) = try await Self.devices(lc)
            let clock = harness.server.clock

            let past = LeanCloudDateText.string(clock.date.addingTimeInterval(-60))
            let expired = try await lc.push(#"{"expiration_time":"\#(past)","data":{"alert":"too late"}}"#)
            try await harness.drain()
            let expiredStatus = try await lc.call(.get, "/1.1/tables/Notifications/\(expired)")
            #expect(expiredStatus.string("status") == LeanCloudExpected.expired)
            #expect(expiredStatus.int("subscribers") == 0)
            #expect(try await api.notification(expired).string("status") == "expired")

            let later = LeanCloudDateText.string(clock.date.addingTimeInterval(600))
            let canceled = try await lc.push(#"{"push_time":"\#(later)","data":{"alert":"never"}}"#)
            #expect(try await api.call(.delete, "/v1/notifications/\(canceled)").status == .ok)
            #expect(
                try await lc.call(.get, "/1.1/classes/_Notification/\(canceled)").string("status")
                    == LeanCloudExpected.canceled)

            harness.apns.script(token: token, .error(status: 400, reason: "BadExpirationDate"))
            harness.fcm.script(
                token: registrationID,
                .error(
                    status: 400, rpcStatus: "INVALID_ARGUMENT", message: "Invalid payload",
                    errorCode: "INVALID_ARGUMENT"))
            let failed = try await lc.push(#"{"data":{"alert":"refused by both"}}"#)
            try await harness.drain()
            let failedStatus = try await lc.call(.get, "/1.1/tables/Notifications/\(failed)")
            #expect(try await api.notification(failed).string("status") == "failed")
            #expect(failedStatus.string("status") == LeanCloudExpected.failed)
            #expect(failedStatus.int("subscribers") == 0)
            #expect(failedStatus.int("errors") == 2)

            // Each reads as a sentence, and a query on status finds it by that sentence.
            for message in [LeanCloudExpected.expired, LeanCloudExpected.canceled, LeanCloudExpected.failed] {
                #expect(message.hasSuffix("."))
                let where_ = #"{"status":"\#(message)"}"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let found = try await lc.call(.get, "/1.1/classes/_Notification?count=1&limit=0&where=" + where_)
                #expect(found.int("count") == 1, "\(message)")
            }
        }
    }

    @Test("title goes to Android only, badge and sound to iOS only; an iOS device shows the alert text alone")
    func commonRendering() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects())
        try await harness.run { api in
            let lc = Self.lc(harness, api)
            _ = try await Self.devices(lc, badge: 3)
            // The guide's own push: alert, badge Increment, sound and title.
            let id = try await lc.push(
                #"""
                {"data":{"alert":"The Mets scored! The game is now tied 1-1.","badge":"Increment",
                "sound":"cheering.caf","title":"Mets Score!"}}
                """#)
            try await harness.drain()
            let apns = try #require(harness.apns.requests.first?.json?.objectValue)
            let aps = try #require(apns["aps"]?.objectValue)
            #expect(aps["alert"] == .object(["body": .string("The Mets scored! The game is now tied 1-1.")]))
            #expect(aps["badge"] == .number(JSONNumber(4)))
            #expect(aps["sound"] == .string("cheering.caf"))
            let message = try #require(harness.fcm.requests.first?.json?.objectValue?["message"]?.objectValue)
            #expect(
                message["notification"]
                    == .object([
                        "title": .string("Mets Score!"), "body": .string("The Mets scored! The game is now tied 1-1."),
                    ]))
            let android = message["android"]?.objectValue?["notification"]?.objectValue ?? [:]
            #expect(android["sound"] == nil)
            #expect(android["notification_count"] == nil)
            // The record still says what was sent.
            let record = try await lc.call(.get, "/1.1/tables/Notifications/\(id)")
            #expect(record.string("data.title") == "Mets Score!")
            #expect(record.string("data.alert") == "The Mets scored! The game is now tied 1-1.")
            #expect(record.string("data.sound") == "cheering.caf")

            // A title alone: nothing for iOS to show, a notification with its title on Android.
            _ = try await lc.push(#"{"data":{"title":"Only a title","content-available":1}}"#)
            try await harness.drain()
            let titleOnly = try #require(harness.apns.requests.last)
            #expect(titleOnly.json?.objectValue?["aps"]?.objectValue?["alert"] == nil)
            #expect(titleOnly.header("apns-push-type") == "background")
            #expect(titleOnly.header("apns-priority") == "5")
            let titleMessage = try #require(harness.fcm.requests.last?.json?.objectValue?["message"]?.objectValue)
            #expect(titleMessage["notification"] == .object(["title": .string("Only a title")]))

            // An APNs alert object is iOS's alert exactly: data.title does not enter it.
            _ = try await lc.push(
                #"{"data":{"alert":{"loc-key":"GAME_PLAY","loc-args":["Mets"]},"title":"For Android"}}"#)
            try await harness.drain()
            let object = try #require(harness.apns.requests.last?.json?.objectValue?["aps"]?.objectValue)
            #expect(
                object["alert"]
                    == .object(["loc-key": .string("GAME_PLAY"), "loc-args": .array([.string("Mets")])]))
            let objectMessage = try #require(harness.fcm.requests.last?.json?.objectValue?["message"]?.objectValue)
            #expect(objectMessage["notification"]?.objectValue?["title"] == .string("For Android"))
        }
    }

    @Test("data.ios and data.android still override what each platform gets")
    func platformOverrides() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects())
        try await harness.run { api in
            let lc = Self.lc(harness, api)
            _ = try await Self.devices(lc)
            _ = try await lc.push(
                #"""
                {"data":{"alert":"common","title":"Common","badge":9,"sound":"common.caf",
                "ios":{"alert":{"title":"iOS title","body":"for iOS"},"sound":"ios.caf"},
                "android":{"alert":"for Android","title":"Android title"}}}
                """#)
            try await harness.drain()
            let aps = try #require(harness.apns.requests.first?.json?.objectValue?["aps"]?.objectValue)
            #expect(aps["alert"] == .object(["title": .string("iOS title"), "body": .string("for iOS")]))
            #expect(aps["sound"] == .string("ios.caf"))
            #expect(aps["badge"] == nil)
            let message = try #require(harness.fcm.requests.first?.json?.objectValue?["message"]?.objectValue)
            #expect(
                message["notification"]
                    == .object(["title": .string("Android title"), "body": .string("for Android")]))
            let android = message["android"]?.objectValue?["notification"]?.objectValue ?? [:]
            #expect(android["sound"] == nil)
            #expect(android["notification_count"] == nil)
        }
    }

    @Test("An app-key push while client push is off: 119 in LeanCloud's body, naming the setting; nothing sent")
    func clientPushOff() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects())
        try await harness.run { api in
            let lc = Self.lc(harness, api)
            _ = try await Self.devices(lc)
            // The guide's request to every device, as written (X-AVOSCloud-Application-Key: the app key).
            let refused = try await lc.call(
                .post, "/1.1/push", auth: .legacy, body: "{\n\"data\": {\n\"alert\": \"Hello From AVOS Cloud.\"\n}\n}")
            #expect(refused.status == .forbidden)
            #expect(refused.leanCloudCode == 119)
            let message = try #require(refused.string("error"))
            #expect(message.contains("app.demo.leancloud.client_push"))
            #expect(refused.json?.objectValue?.keys.sorted() == ["code", "error"])
            for auth: LeanCloudClient.Auth in [.appKey, .signed(master: false, at: harness.server.clock.date)] {
                let again = try await lc.call(.post, "/1.1/push", auth: auth, body: #"{"data":{"alert":"x"}}"#)
                #expect(again.leanCloudCode == 119)
                #expect(again.string("error") == message)
            }
            try await harness.drain()
            #expect(try await lc.call(.get, "/1.1/classes/_Notification?count=1&limit=0").int("count") == 0)
            #expect(harness.apns.requests.isEmpty)
            #expect(harness.fcm.requests.isEmpty)
        }
    }
}

/// The error-message statuses, as a client reads them.
enum LeanCloudExpected {
    static let expired = "Expired: the push's expiration time passed before it was sent to every device."
    static let canceled = "Canceled: the push was canceled before it was sent to every device."
    static let failed = "Failed: the push could not be delivered to any device."
}

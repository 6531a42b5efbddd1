import Foundation
import HTTPTypes
import HeraldCore
import HeraldEngine
import HeraldProviderMocks
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

@testable import HeraldAOVIS
@testable import HeraldAPI
@testable import HeraldArgusAI

@Suite("ArgusAI dialect: event notifications through the engine and the mock providers", .serialized)
struct ArgusAIEventTests {
    static let settings = ArgusAIConfiguration(publicBaseURL: "https://argusai.local/")
    static let eventsPath = "/api/v1/push/mobile/events"
    static let preferencesPath = "/api/v1/push/mobile/preferences"

    /// The document's example event.
    static func event(users: String? = #"["ann"]"#, eventID: String = "evt-123456") -> String {
        let audience = users.map { ", \"user_ids\": " + $0 } ?? ""
        return """
            {"event_id": "\(eventID)", "camera_id": "cam-789", "camera_name": "Front Door",
             "smart_detection_type": "person", "description": "A person was detected at the front door at 10:30 AM",
             "timestamp": "2025-12-25T10:30:00Z"\(audience)}
            """
    }

    @Test("An event reaches APNs and FCM exactly as the document's payload adaptations, once per event_id")
    func payloadAdaptations() async throws {
        let engine = try await EngineHarness()
        let harness = ArgusAIHarness(engine: engine, settings: Self.settings)
        harness.server.clock.set(ISO8601DateFormatter().date(from: "2025-12-25T10:30:05Z")!)
        let ann = try await harness.server.userToken("ann")
        let fcmToken = Fixtures.fcmToken()
        try await harness.run { api in
            _ = try await api.argusRegister(ArgusAIHarness.registration(bundleID: EngineHarness.topic), as: ann)
            _ = try await api.argusRegister(
                ArgusAIHarness.registration(
                    deviceID: "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", token: fcmToken, platform: "android",
                    service: "fcm"), as: ann)
            let accepted = try await api.call(.post, Self.eventsPath, body: Self.event())
            #expect(accepted.status == .accepted)
            let id = try #require(accepted.string("notification_id"))
            #expect(accepted.string("status") == "queued")
            #expect(
                accepted["notification"]
                    == (try JSONValue.literal(
                        """
                        {
                          "title": "Front Door: Person Detected",
                          "body": "A person was detected at the front door at 10:30 AM",
                          "event_id": "evt-123456",
                          "camera_id": "cam-789",
                          "camera_name": "Front Door",
                          "smart_detection_type": "person",
                          "thumbnail_url": "/api/v1/events/evt-123456/thumbnail",
                          "url": "/events?highlight=evt-123456",
                          "timestamp": "2025-12-25T10:30:00Z",
                          "actions": [
                            {"id": "view", "title": "View"},
                            {"id": "dismiss", "title": "Dismiss"}
                          ],
                          "category": "SECURITY_ALERT",
                          "sound": "default",
                          "priority": "high"
                        }
                        """)))
            try await engine.drain()
            #expect(try await api.notification(id).int("counts.sent") == 2)

            let apns = try #require(engine.apns.requests.first)
            #expect(apns.token == ArgusAIHarness.deviceToken)
            #expect(
                apns.json
                    == (try JSONValue.literal(
                        """
                        {
                          "aps": {
                            "alert": {
                              "title": "Front Door: Person Detected",
                              "body": "A person was detected at the front door at 10:30 AM",
                              "subtitle": "Front Door Camera"
                            },
                            "badge": 1,
                            "sound": "default",
                            "mutable-content": 1,
                            "category": "SECURITY_ALERT",
                            "thread-id": "cam-789"
                          },
                          "event_id": "evt-123456",
                          "camera_id": "cam-789",
                          "camera_name": "Front Door",
                          "smart_detection_type": "person",
                          "thumbnail_url": "https://argusai.local/api/v1/events/evt-123456/thumbnail",
                          "url": "/events?highlight=evt-123456"
                        }
                        """)),
                "\(Self.text(apns.json))")
            #expect(apns.header("apns-push-type") == "alert")
            #expect(apns.header("apns-priority") == "10")

            let fcm = try #require(engine.fcm.requests.first)
            #expect(
                fcm.json?.objectValue?["message"]
                    == (try JSONValue.literal(
                        """
                        {
                          "token": "\(fcmToken)",
                          "data": {
                            "title": "Front Door: Person Detected",
                            "body": "A person was detected at the front door at 10:30 AM",
                            "event_id": "evt-123456",
                            "camera_id": "cam-789",
                            "camera_name": "Front Door",
                            "smart_detection_type": "person",
                            "thumbnail_url": "https://argusai.local/api/v1/events/evt-123456/thumbnail",
                            "url": "/events?highlight=evt-123456",
                            "click_action": "OPEN_EVENT",
                            "notification_channel": "security_alerts"
                          },
                          "android": {
                            "priority": "high",
                            "ttl": "86400s",
                            "notification": {
                              "channel_id": "security_alerts",
                              "icon": "ic_notification",
                              "color": "#FF5722",
                              "tag": "cam-789"
                            }
                          }
                        }
                        """)),
                "\(Self.text(fcm.json))")

            // The same event again is not sent again.
            let repeated = try await api.call(.post, Self.eventsPath, body: Self.event())
            #expect(repeated.status == .ok)
            #expect(repeated.string("notification_id") == id)
            try await engine.drain()
            #expect(engine.apns.requests.count == 1)
            #expect(engine.fcm.requests.count == 1)
        }
    }

    @Test("Camera, object-type and quiet-hours preferences (in the device's zone) skip devices; no sound when off")
    func preferenceFilters() async throws {
        let engine = try await EngineHarness()
        let harness = ArgusAIHarness(engine: engine, settings: Self.settings)
        // 08:00 UTC is 03:00 in New York: inside 22:00-07:00 there, outside it in UTC.
        harness.server.clock.set(ISO8601DateFormatter().date(from: "2025-12-25T08:00:00Z")!)
        let ann = try await harness.server.userToken("ann")
        let preferences = [
            #""enabled_cameras": ["cam-1"]"#,
            #""enabled_object_types": ["vehicle"]"#,
            #""quiet_hours_enabled": true, "quiet_hours_start": "22:00", "quiet_hours_end": "07:00", "timezone": "America/New_York""#,
            #""sound_enabled": false"#,
            #""enabled_cameras": ["cam-789"], "enabled_object_types": ["person"], "quiet_hours_enabled": true, "quiet_hours_start": "22:00", "quiet_hours_end": "07:00""#,
            #""timezone": "Europe/Paris""#,
        ]
        let tokens = preferences.map { _ in Fixtures.apnsToken() }
        try await harness.run { api in
            for (index, (members, token)) in zip(preferences, tokens).enumerated() {
                let deviceID = String(format: "00000000-0000-4000-8000-%012d", index)
                _ = try await api.argusRegister(
                    ArgusAIHarness.registration(deviceID: deviceID, token: token, bundleID: EngineHarness.topic),
                    as: ann)
                let stored = try await api.call(
                    .put, Self.preferencesPath, bearer: ann, body: #"{"device_id": "\#(deviceID)", \#(members)}"#)
                #expect(stored.status == .ok, "\(members): \(String(describing: stored.json))")
            }
            let accepted = try await api.call(.post, Self.eventsPath, body: Self.event())
            let id = try #require(accepted.string("notification_id"))
            try await engine.drain()
            let record = try await api.notification(id)
            #expect(record.int("counts.skipped_preferences") == 3)
            #expect(record.int("counts.sent") == 3)
            let received = Dictionary(uniqueKeysWithValues: engine.apns.requests.map { ($0.token ?? "", $0) })
            #expect(Set(received.keys) == Set(tokens[3...]))
            #expect(received[tokens[3]]?.json?.objectValue?["aps"]?.objectValue?["sound"] == nil)
            #expect(received[tokens[4]]?.json?.objectValue?["aps"]?.objectValue?["sound"] == .string("default"))
            #expect(received[tokens[5]]?.json?.objectValue?["aps"]?.objectValue?["sound"] == .string("default"))
            let skipped = try await api.call(.get, "/v1/notifications/\(id)/deliveries?outcome=skipped")
            #expect(
                Set(skipped.items.compactMap { $0.objectValue?["reason"] })
                    == [.string("source_disabled"), .string("category_disabled"), .string("quiet_hours")])
        }
    }

    @Test("Without user_ids an event goes to every device registered through the dialect")
    func everyArgusDevice() async throws {
        let engine = try await EngineHarness()
        let harness = ArgusAIHarness(engine: engine, settings: Self.settings)
        let ann = try await harness.server.userToken("ann")
        let bob = try await harness.server.userToken("bob")
        let nativeToken = Fixtures.apnsToken()
        let bobToken = Fixtures.apnsToken()
        try await harness.run { api in
            _ = try await api.argusRegister(ArgusAIHarness.registration(bundleID: EngineHarness.topic), as: ann)
            _ = try await api.argusRegister(
                ArgusAIHarness.registration(
                    deviceID: "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", token: bobToken, bundleID: EngineHarness.topic),
                as: bob)
            _ = try await api.register(#"{"platform":"ios","token":"\#(nativeToken)","user_id":"ann"}"#)
            let accepted = try await api.call(.post, Self.eventsPath, body: Self.event(users: nil))
            #expect(accepted.status == .accepted)
            try await engine.drain()
            #expect(Set(engine.apns.requests.compactMap(\.token)) == [ArgusAIHarness.deviceToken, bobToken])
        }
    }

    @Test("An ArgusAI event_id and an AOVIS eventId that are equal are two events, in either order")
    func producersDoNotShareIDs() async throws {
        let engine = try await EngineHarness()
        let harness = ArgusAIHarness(engine: engine, settings: Self.settings)
        try await harness.run { api in
            let argus = try await api.call(.post, Self.eventsPath, body: Self.event(eventID: "x1"))
            #expect(argus.status == .accepted)
            try await AOVISFixtures.camera(api, id: "cam-1", owners: [])
            let aovis = try await AOVISFixtures.event(api, id: "x1", device: "cam-1", type: "person")
            #expect(aovis.status == .created)
            #expect(aovis.string("classifyEventType") == "person")
            #expect(aovis.string("deviceId") == "cam-1")
            #expect(aovis.string("status") == "classified")
            let repeated = try await AOVISFixtures.event(api, id: "x1", device: "cam-1", type: "person")
            #expect(repeated.status == .ok)
            #expect(repeated.string("heraldId") == aovis.string("heraldId"))
            // The other order: an AOVIS event without a notification, then ArgusAI's with the same id.
            #expect(try await AOVISFixtures.event(api, id: "y1", device: "cam-1").status == .created)
            let second = try await api.call(.post, Self.eventsPath, body: Self.event(eventID: "y1"))
            #expect(second.status == .accepted)
            #expect(second.string("notification_id") != nil)
            let argusRepeat = try await api.call(.post, Self.eventsPath, body: Self.event(eventID: "x1"))
            #expect(argusRepeat.status == .ok)
            #expect(argusRepeat.string("notification_id") == argus.string("notification_id"))
        }
    }

    @Test("Events take the server key, a configured public URL and a valid body")
    func eventValidation() async throws {
        let engine = try await EngineHarness()
        let harness = ArgusAIHarness(engine: engine, settings: Self.settings)
        let ann = try await harness.server.userToken("ann")
        try await harness.run { api in
            #expect(try await api.call(.post, Self.eventsPath, bearer: ann, body: Self.event()).status == .forbidden)
            #expect(
                try await api.call(.post, Self.eventsPath, bearer: ServerHarness.clientKey, body: Self.event()).status
                    == .forbidden)
            let cases: [(String, String, String)] = [
                (Self.event(eventID: "evt/../1"), "invalid_value", "event_id"),
                (
                    #"{"event_id": "e1", "camera_name": "Door", "smart_detection_type": "person", "description": "x"}"#,
                    "missing_field", "camera_id"
                ),
                (
                    Self.event().replacingOccurrences(of: "2025-12-25T10:30:00Z", with: "yesterday"),
                    "invalid_timestamp",
                    "timestamp"
                ),
                (Self.event(users: "[]"), "empty_target", "user_ids"),
                (
                    Self.event().replacingOccurrences(of: #""event_id""#, with: #""colour": "red", "event_id""#),
                    "unknown_field", "colour"
                ),
            ]
            for (body, code, field) in cases {
                let response = try await api.call(.post, Self.eventsPath, body: body)
                #expect(response.status == .badRequest, "\(body)")
                #expect(response.errorCode == code, "\(body)")
                #expect(response.errorField == field, "\(body)")
            }
            #expect(try await api.call(.get, "/v1/notifications").items.isEmpty)
        }
        let unconfigured = ArgusAIHarness(engine: try await EngineHarness(), settings: ArgusAIConfiguration())
        try await unconfigured.run { api in
            let response = try await api.call(.post, Self.eventsPath, body: Self.event())
            #expect(response.status == .serviceUnavailable)
            #expect(response.errorCode == "not_configured")
        }
    }

    /// A body as JSON text, for failure messages.
    static func text(_ json: JSONValue?) -> String {
        json.map { String(decoding: $0.serialized(), as: UTF8.self) } ?? "nil"
    }

    @Test(
        "APNs 400 BadDeviceToken / DeviceTokenNotForTopic, FCM INVALID_ARGUMENT: logged and counted for ArgusAI devices, deactivated at 5, never deleted; native ones invalidated (002)"
    )
    func rejectedTokensCounted() async throws {
        let engine = try await EngineHarness(
            engine: EngineConfiguration(retryPolicy: RetryPolicy(maxAttempts: 1), cleanupInterval: nil))
        let harness = ArgusAIHarness(engine: engine, settings: Self.settings)
        let ann = try await harness.server.userToken("ann")
        let fcmToken = Fixtures.fcmToken()
        let nativeToken = Fixtures.apnsToken()
        try await harness.run { api in
            // A TestFlight build's token sent to production: APNs says it is not the topic's.
            let ios = try await api.argusRegister(ArgusAIHarness.registration(bundleID: EngineHarness.topic), as: ann)
            let android = try await api.argusRegister(
                ArgusAIHarness.registration(
                    deviceID: "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", token: fcmToken, platform: "android",
                    service: "fcm"), as: ann)
            _ = try await api.call(
                .post, Self.preferencesPath, bearer: ann,
                body: #"{"device_id":"\#(ArgusAIHarness.deviceID)","enabled_object_types":["person"]}"#)
            let native = try await api.register(#"{"platform":"ios","token":"\#(nativeToken)","user_id":"ann"}"#)
            engine.apns.script(token: ArgusAIHarness.deviceToken, .deviceTokenNotForTopic)
            engine.apns.script(token: nativeToken, .badDeviceToken)
            engine.fcm.script(token: fcmToken, .invalidToken)
            let targets = #"{"installation_ids":["\#(ios)","\#(android)"]}"#
            let first = try await api.send(
                #"{"target":{"installation_ids":["\#(ios)","\#(android)","\#(native)"]},"payload":{"title":"x"}}"#)
            try await engine.drain()
            let record = try await api.notification(first)
            #expect(record.int("counts.invalid") == 3)
            // The ArgusAI devices are kept, with the failure counted and its reason.
            let kept = try await api.call(.get, "/v1/installations/\(ios)")
            #expect(kept["valid"] == .bool(true))
            #expect(kept["failure_count"] == .number(1))
            #expect(kept.string("last_failure_reason") == "DeviceTokenNotForTopic")
            let keptAndroid = try await api.call(.get, "/v1/installations/\(android)")
            #expect(keptAndroid["failure_count"] == .number(1))
            #expect(keptAndroid.string("last_failure_reason") == "INVALID_ARGUMENT")
            // The native installation follows the app's rule (invalidate, the default).
            let invalidated = try await api.call(.get, "/v1/installations/\(native)")
            #expect(invalidated["valid"] == .bool(false))
            #expect(invalidated["failure_count"] == .number(0))

            // Four more failures in a row: deactivated (is_active false), still listed, preferences kept.
            for _ in 0..<4 {
                _ = try await api.send(#"{"target":\#(targets),"payload":{"title":"x"}}"#)
                try await engine.drain()
            }
            let devices = try await api.call(.get, "/api/v1/devices", bearer: ann)["devices"]?.arrayValue ?? []
            let rows = devices.compactMap { $0.objectValue }.filter { [ios, android].contains($0["id"]?.stringValue) }
            #expect(rows.count == 2)
            #expect(rows.allSatisfy { $0["is_active"] == .bool(false) && $0["failure_count"] == .number(5) })
            let preferences = try await api.call(
                .post, Self.preferencesPath, bearer: ann, body: #"{"device_id":"\#(ArgusAIHarness.deviceID)"}"#)
            #expect(preferences["enabled_object_types"] == .array([.string("person")]))
            // A deactivated device is not sent to.
            let before = engine.apns.requests.count + engine.fcm.requests.count
            _ = try await api.send(#"{"target":\#(targets),"payload":{"title":"x"}}"#)
            try await engine.drain()
            #expect(engine.apns.requests.count + engine.fcm.requests.count == before)
        }
    }

    @Test("app.<id>.rejected_tokens count: a native installation's rejected token counts as a failure too")
    func rejectedTokensCountedByTheApp() async throws {
        let engine = try await EngineHarness(
            engine: EngineConfiguration(
                retryPolicy: RetryPolicy(maxAttempts: 1), rejectedTokens: ["demo": .count], cleanupInterval: nil))
        let token = Fixtures.apnsToken()
        let gone = Fixtures.apnsToken()
        try await engine.run { api in
            let id = try await api.register(#"{"platform":"ios","token":"\#(token)"}"#)
            let goneID = try await api.register(#"{"platform":"ios","token":"\#(gone)"}"#)
            engine.apns.script(token: token, .badDeviceToken, times: 1)
            engine.apns.script(token: gone, .unregistered(since: engine.server.clock.date.addingTimeInterval(60)))
            _ = try await api.send(#"{"target":{"all":true},"payload":{"title":"x"}}"#)
            try await engine.drain()
            let counted = try await api.call(.get, "/v1/installations/\(id)")
            #expect(counted["valid"] == .bool(true))
            #expect(counted["failure_count"] == .number(1))
            #expect(counted.string("last_failure_reason") == "BadDeviceToken")
            // A token that is gone invalidates whatever the rule.
            #expect(try await api.call(.get, "/v1/installations/\(goneID)")["valid"] == .bool(false))
            // The next delivery succeeds and resets the count.
            _ = try await api.send(#"{"target":{"installation_ids":["\#(id)"]},"payload":{"title":"y"}}"#)
            try await engine.drain()
            #expect(try await api.call(.get, "/v1/installations/\(id)")["failure_count"] == .number(0))
        }
    }

    @Test(
        "APNs 410 / FCM UNREGISTERED: \"Delete token\" for ArgusAI devices after the ledger records it; native ones stay"
    )
    func deadTokensDeleted() async throws {
        let engine = try await EngineHarness(
            engine: EngineConfiguration(retryPolicy: RetryPolicy(maxAttempts: 1), cleanupInterval: nil))
        let harness = ArgusAIHarness(engine: engine, settings: Self.settings)
        let ann = try await harness.server.userToken("ann")
        let fcmToken = Fixtures.fcmToken()
        let nativeToken = Fixtures.apnsToken()
        let liveToken = Fixtures.apnsToken()
        try await harness.run { api in
            let ios = try await api.argusRegister(ArgusAIHarness.registration(bundleID: EngineHarness.topic), as: ann)
            let android = try await api.argusRegister(
                ArgusAIHarness.registration(
                    deviceID: "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", token: fcmToken, platform: "android",
                    service: "fcm"), as: ann)
            let live = try await api.argusRegister(
                ArgusAIHarness.registration(
                    deviceID: "7a2b3c4d-5e6f-4a70-8b9c-0d1e2f3a4b5c", token: liveToken, bundleID: EngineHarness.topic),
                as: ann)
            _ = try await api.call(
                .post, Self.preferencesPath, bearer: ann, body: #"{"device_id":"\#(ArgusAIHarness.deviceID)"}"#)
            let native = try await api.register(#"{"platform":"ios","token":"\#(nativeToken)","user_id":"ann"}"#)
            engine.apns.script(token: ArgusAIHarness.deviceToken, .unregistered(), times: 1)
            engine.apns.script(token: nativeToken, .unregistered(), times: 1)
            engine.fcm.script(token: fcmToken, .unregistered, times: 1)
            let id = try await api.send(
                #"{"target":{"installation_ids":["\#(ios)","\#(android)","\#(live)","\#(native)"]},"payload":{"title":"x"}}"#
            )
            try await engine.drain()
            let record = try await api.notification(id)
            #expect(record.int("counts.invalid") == 3)
            #expect(record.int("counts.sent") == 1)
            // The ledger keeps each answer, though two of the installations are gone.
            let ledger = try await api.call(.get, "/v1/notifications/\(id)/deliveries?outcome=invalid").items
            #expect(
                Set(ledger.compactMap { $0.objectValue?["installation_id"]?.stringValue }) == [ios, android, native])
            #expect(try await api.call(.get, "/v1/installations/\(ios)").status == .notFound)
            #expect(try await api.call(.get, "/v1/installations/\(android)").status == .notFound)
            #expect(try await api.call(.get, "/v1/installations/\(native)")["valid"] == .bool(false))
            #expect(try await api.call(.get, "/v1/installations/\(live)")["valid"] == .bool(true))
            // The device list shows the live device, and the natively registered one as inactive.
            let devices = try await api.call(.get, "/api/v1/devices", bearer: ann)["devices"]?.arrayValue ?? []
            let active = devices.compactMap { $0.objectValue }.map { ($0["id"]?.stringValue, $0["is_active"]) }
            #expect(active.map(\.0) == [live, native])
            #expect(active.map(\.1) == [.bool(true), .bool(false)])
            // Its preferences went with it: the device is unknown now.
            let preferences = try await api.call(
                .post, Self.preferencesPath, bearer: ann, body: #"{"device_id":"\#(ArgusAIHarness.deviceID)"}"#)
            #expect(preferences.status == .notFound)
        }
    }
}

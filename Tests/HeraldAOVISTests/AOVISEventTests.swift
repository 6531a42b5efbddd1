import Foundation
import HTTPTypes
import HeraldCore
import HeraldProviderMocks
import HeraldSQLite
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

/// Camera events through `POST /api/internal/events`, the engine and the mock APNs and FCM: the
/// pushes must be the AOVIS guide's §6 structures, and `pushSent` must say whether one went out.
@Suite("AOVIS dialect: camera events", .serialized)
struct AOVISEventTests {
    @Test("A vehicle event reaches APNs and FCM exactly as the guide's §6 structures; pushSent becomes true")
    func vehicleEvent() async throws {
        let harness = try await EngineHarness()
        let ann = try await harness.server.userToken("ann")
        let apnsToken = Fixtures.apnsToken()
        let fcmToken = Fixtures.fcmToken()
        try await harness.run { api in
            try await AOVISFixtures.camera(api, id: "cam-drive", alias: "aovis-n4k-3f9a2c", owners: ["ann"])
            _ = try await AOVISFixtures.register(api, "ios", apnsToken, as: ann)
            _ = try await AOVISFixtures.register(api, "android", fcmToken, as: ann)

            let accepted = try await AOVISFixtures.event(api, id: "evt-1", device: "aovis-n4k-3f9a2c")
            #expect(accepted.status == .created)
            let id = try #require(accepted.string("id"))
            #expect(accepted.string("eventId") == "evt-1")
            #expect(accepted.string("status") == "classified")
            #expect(accepted.string("deviceId") == "cam-drive")
            #expect(accepted["owners"] == .array([.string("ann")]))
            #expect(accepted["pushSent"] == .bool(false))
            #expect(accepted["pushSentAt"] == .null)
            let notificationID = try #require(accepted.string("notificationId"))

            try await harness.drain()
            let apns = try #require(harness.apns.requests.first)
            #expect(apns.token == apnsToken)
            let expectedAPNs: JSONValue = .object([
                "aps": .object([
                    "alert": .object([
                        "title": .string("Vehicle detected"), "body": .string("A dark SUV entered the driveway"),
                    ]),
                    "sound": .string("default"),
                    "mutable-content": .number(1),
                ]),
                "deepLink": .string("aovis://event/\(id)"),
                "cloudEventId": .string(id),
                "deviceId": .string("aovis-n4k-3f9a2c"),
                "eventType": .string("vehicle"),
            ])
            let recorded = try #require(apns.json?.objectValue)
            #expect(Set(recorded.keys) == Set(expectedAPNs.objectValue!.keys))
            for (key, value) in expectedAPNs.objectValue! { #expect(recorded[key] == value, "APNs \(key)") }
            #expect(apns.json == expectedAPNs)

            let fcm = try #require(harness.fcm.requests.first)
            #expect(fcm.token == fcmToken)
            let message = try #require(fcm.json?.objectValue?["message"]?.objectValue)
            #expect(
                message["notification"]
                    == .object([
                        "title": .string("Vehicle detected"), "body": .string("A dark SUV entered the driveway"),
                    ]))
            #expect(
                message["data"]
                    == .object([
                        "deepLink": .string("aovis://event/\(id)"), "cloudEventId": .string(id),
                        "deviceId": .string("aovis-n4k-3f9a2c"), "eventType": .string("vehicle"),
                    ]))
            #expect(message["android"]?.objectValue?["notification"]?.objectValue?["click_action"] == nil)

            let read = try await api.call(.get, "/api/internal/events/\(id)")
            #expect(read["pushSent"] == .bool(true))
            #expect(read.string("pushSentAt") != nil)
            #expect(read.string("notificationId") == notificationID)
            #expect(read.string("classifySummaryShort") == "A dark SUV entered the driveway")
            #expect(read.string("thumbnailS3Key") == "thumbs/evt-1.jpg")
            let notification = try await api.notification(notificationID)
            #expect(notification.string("source") == "cam-drive")
            #expect(notification.int("counts.sent") == 2)

            // A repeated intake returns the same event and notifies nobody again.
            let repeated = try await AOVISFixtures.event(api, id: "evt-1", device: "cam-drive")
            #expect(repeated.status == .ok)
            #expect(repeated.string("id") == id)
            #expect(repeated["pushSent"] == .bool(true))
            try await harness.drain()
            #expect(harness.apns.requests.count == 1)
            #expect(harness.fcm.requests.count == 1)
        }
    }

    @Test("deepLink is aovis://event/<cloudEvent.id> and cloudEventId that id: the producer's record id, not Herald's")
    func cloudEventID() async throws {
        let harness = try await EngineHarness()
        let ann = try await harness.server.userToken("ann")
        let apnsToken = Fixtures.apnsToken()
        let fcmToken = Fixtures.fcmToken()
        try await harness.run { api in
            try await AOVISFixtures.camera(api, id: "cam-drive", owners: ["ann"])
            _ = try await AOVISFixtures.register(api, "ios", apnsToken, as: ann)
            _ = try await AOVISFixtures.register(api, "android", fcmToken, as: ann)
            let cloudEventID = "clx8f3k2p0001qz9v6d4h7m2n"
            let accepted = try await AOVISFixtures.event(
                api, id: "iot-evt-77", device: "cam-drive", cloudEventID: cloudEventID)
            #expect(accepted.status == .created)
            #expect(accepted.string("id") == cloudEventID)
            #expect(accepted.string("eventId") == "iot-evt-77")
            let heraldID = try #require(accepted.string("heraldId"))
            #expect(heraldID != cloudEventID)
            try await harness.drain()
            let apns = try #require(harness.apns.requests.first?.json?.objectValue)
            #expect(apns["deepLink"] == .string("aovis://event/\(cloudEventID)"))
            #expect(apns["cloudEventId"] == .string(cloudEventID))
            let data = try #require(harness.fcm.requests.first?.json?.objectValue?["message"]?.objectValue?["data"])
            #expect(data.objectValue?["deepLink"] == .string("aovis://event/\(cloudEventID)"))
            #expect(data.objectValue?["cloudEventId"] == .string(cloudEventID))
            // GET works by either id.
            for id in [cloudEventID, heraldID] {
                let read = try await api.call(.get, "/api/internal/events/\(id)")
                #expect(read.status == .ok)
                #expect(read.string("id") == cloudEventID)
                #expect(read["pushSent"] == .bool(true))
            }
            // A different event may not take the same CloudEvent id; a bad id is refused; nothing is stored.
            let clash = try await AOVISFixtures.event(
                api, id: "iot-evt-78", device: "cam-drive", cloudEventID: cloudEventID)
            #expect(clash.status == .conflict)
            #expect(clash.errorCode == "event_exists")
            let bad = try await AOVISFixtures.event(
                api, id: "iot-evt-79", device: "cam-drive", cloudEventID: "has/slash")
            #expect(bad.status == .badRequest)
            #expect(bad.errorField == "id")
            #expect(try await api.call(.get, "/api/internal/events/iot-evt-78").status == .notFound)
            try await harness.drain()
            #expect(harness.apns.requests.count == 1)
        }
    }

    @Test("The title takes ' at <name>' only while it stays within 50 characters")
    func titleEdge() async throws {
        let harness = try await EngineHarness()
        let ann = try await harness.server.userToken("ann")
        // "Person detected at " is 19 characters: a 31-character name makes 50, a 32-character one 51.
        let fits = String(repeating: "a", count: 30) + "🚗"
        let overflows = String(repeating: "b", count: 31) + "🚗"
        try await harness.run { api in
            try await AOVISFixtures.camera(api, id: "cam-50", name: fits, owners: ["ann"])
            try await AOVISFixtures.camera(api, id: "cam-51", name: overflows, owners: ["ann"])
            try await AOVISFixtures.camera(api, id: "cam-box", name: "Porch", owners: ["ann"])
            _ = try await AOVISFixtures.register(api, "ios", Fixtures.apnsToken(), as: ann)
            var titles: [String] = []
            for (index, device) in ["cam-50", "cam-51", "cam-box"].enumerated() {
                let type = index == 2 ? "package" : "person"
                _ = try await AOVISFixtures.event(
                    api, id: "evt-\(index)", device: device, type: type, summary: "Someone")
                try await harness.drain()
                let alert = harness.apns.requests.last?.json?.objectValue?["aps"]?.objectValue?["alert"]?.objectValue
                if case .string(let title)? = alert?["title"] { titles.append(title) }
            }
            #expect(titles == ["Person detected at \(fits)", "Person detected", "Package delivered at Porch"])
            #expect(titles[0].count == 50)
        }
    }

    @Test("The body is the summary's first 80 characters, never splitting a grapheme")
    func bodyCut() async throws {
        let harness = try await EngineHarness()
        let ann = try await harness.server.userToken("ann")
        let family = "👨‍👩‍👧"  // one Character, five scalars, 18 UTF-8 bytes
        let cases: [(summary: String, body: String)] = [
            (String(repeating: "x", count: 79) + family + " and more", String(repeating: "x", count: 79) + family),
            (String(repeating: "x", count: 80) + family, String(repeating: "x", count: 80)),
            (String(repeating: "车", count: 100), String(repeating: "车", count: 80)),
            (String(repeating: "y", count: 79) + "e\u{301}" + "z", String(repeating: "y", count: 79) + "e\u{301}"),
            ("A cat on the porch", "A cat on the porch"),
        ]
        try await harness.run { api in
            try await AOVISFixtures.camera(api, id: "cam-1", owners: ["ann"])
            let token = Fixtures.apnsToken()
            _ = try await AOVISFixtures.register(api, "ios", token, as: ann)
            for (index, example) in cases.enumerated() {
                let response = try await AOVISFixtures.event(
                    api, id: "evt-\(index)", device: "cam-1", type: "pet", summary: example.summary)
                #expect(response.string("classifySummaryShort") == example.summary)
                try await harness.drain()
                let alert = harness.apns.requests.last?.json?.objectValue?["aps"]?.objectValue?["alert"]?.objectValue
                #expect(alert?["body"] == .string(example.body), "case \(index)")
                #expect(alert?["title"] == .string("Pet detected"))
            }
            #expect(harness.apns.requests.count == cases.count)
        }
    }

    @Test("pushSent stays false when every device is invalid or filtered, true once one accepts")
    func pushSent() async throws {
        let harness = try await EngineHarness()
        let ann = try await harness.server.userToken("ann")
        let bob = try await harness.server.userToken("bob")
        let annIOS = Fixtures.apnsToken()
        let annAndroid = Fixtures.fcmToken()
        let bobIOS = Fixtures.apnsToken()
        try await harness.run { api in
            try await AOVISFixtures.camera(api, id: "cam-yard", alias: "aovis-n4k-yard01", owners: ["ann"])
            let iosID = try await AOVISFixtures.register(api, "ios", annIOS, as: ann)
            _ = try await AOVISFixtures.register(api, "android", annAndroid, as: ann)

            // Both of ann's devices answer "invalid token".
            harness.apns.script(token: annIOS, .badDeviceToken, times: 1)
            harness.fcm.script(token: annAndroid, .unregistered, times: 1)
            let invalid = try #require(
                try await AOVISFixtures.event(api, id: "evt-invalid", device: "cam-yard").string("id"))
            try await harness.drain()
            #expect(harness.apns.requests.count == 1)
            #expect(harness.fcm.requests.count == 1)
            var read = try await api.call(.get, "/api/internal/events/\(invalid)")
            #expect(read["pushSent"] == .bool(false))
            #expect(read["pushSentAt"] == .null)
            #expect(try await api.notification(try #require(read.string("notificationId"))).int("counts.invalid") == 2)

            // Re-registered, but the iOS device's native preferences filter the camera, then the type.
            _ = try await AOVISFixtures.register(api, "ios", annIOS, as: ann)
            let preferences = [#"{"enabled_sources":["cam-other"]}"#, #"{"enabled_categories":["person"]}"#]
            for (index, rule) in preferences.enumerated() {
                let stored = try await api.call(.put, "/v1/installations/\(iosID)/preferences", body: rule)
                #expect(stored.status == .ok)
                let filtered = try #require(
                    try await AOVISFixtures.event(api, id: "evt-filtered-\(index)", device: "aovis-n4k-yard01").string(
                        "id"))
                try await harness.drain()
                read = try await api.call(.get, "/api/internal/events/\(filtered)")
                #expect(read["pushSent"] == .bool(false), "\(rule)")
                let notification = try await api.notification(try #require(read.string("notificationId")))
                #expect(notification.int("counts.skipped_preferences") == 1)
            }
            #expect(harness.apns.requests.count == 1)

            // One device accepting is enough: the invalid one does not matter.
            _ = try await api.call(.put, "/v1/installations/\(iosID)/preferences", body: #"{"enabled_sources":null}"#)
            try await AOVISFixtures.camera(api, id: "cam-gate", owners: ["ann", "bob"])
            _ = try await AOVISFixtures.register(api, "ios", bobIOS, as: bob)
            harness.apns.script(token: annIOS, .unregistered(), times: 1)
            let mixed = try #require(
                try await AOVISFixtures.event(api, id: "evt-mixed", device: "cam-gate").string("id"))
            try await harness.drain()
            read = try await api.call(.get, "/api/internal/events/\(mixed)")
            #expect(read["pushSent"] == .bool(true))
            #expect(read.string("pushSentAt") != nil)
            #expect(read["owners"] == .array([.string("ann"), .string("bob")]))
            let counts = try await api.notification(try #require(read.string("notificationId")))
            #expect(counts.int("counts.sent") == 1)
            #expect(counts.int("counts.invalid") == 1)
        }
    }

    @Test("An event keeps pushSent when clean-up deletes its notification")
    func pushSentOutlivesCleanup() async throws {
        let harness = try await EngineHarness()
        let ann = try await harness.server.userToken("ann")
        try await harness.run { api in
            try await AOVISFixtures.camera(api, id: "cam-1", owners: ["ann"])
            _ = try await AOVISFixtures.register(api, "ios", Fixtures.apnsToken(), as: ann)
            let event = try await AOVISFixtures.event(api, id: "evt-old", device: "cam-1")
            let id = try #require(event.string("id"))
            let notificationID = try #require(event.string("notificationId"))
            try await harness.drain()
            let sentAt = try #require(try await api.call(.get, "/api/internal/events/\(id)").string("pushSentAt"))
            try harness.server.execute("UPDATE notifications SET completed_at = 0", [])
            let report = try await harness.server.store.cleanup(CleanupPolicy(), now: harness.server.clock.date)
            #expect(report.notifications == 1)
            #expect(try await api.notification(notificationID).status == .notFound)
            let read = try await api.call(.get, "/api/internal/events/\(id)")
            #expect(read["pushSent"] == .bool(true))
            #expect(read.string("pushSentAt") == sentAt)
        }
    }

    @Test("No owner, a revoked owner, or owners without devices: the event is stored and nothing is sent")
    func nobodyToNotify() async throws {
        let harness = try await EngineHarness()
        let ann = try await harness.server.userToken("ann")
        try await harness.run { api in
            try await AOVISFixtures.camera(api, id: "cam-alone", owners: [])
            try await AOVISFixtures.camera(api, id: "cam-revoked", owners: ["ann"])
            _ = try await api.call(
                .put, "/api/internal/devices/cam-revoked/owners/ann", body: #"{"status":"REVOKED"}"#)
            try await AOVISFixtures.camera(api, id: "cam-nodevice", owners: ["carol"])
            _ = try await AOVISFixtures.register(api, "ios", Fixtures.apnsToken(), as: ann)
            for (index, device) in ["cam-alone", "cam-revoked", "cam-nodevice"].enumerated() {
                let response = try await AOVISFixtures.event(api, id: "evt-\(index)", device: device, type: "other")
                #expect(response.status == .created)
                #expect(response["notificationId"] == .null, "\(device)")
                let id = try #require(response.string("id"))
                let read = try await api.call(.get, "/api/internal/events/\(id)")
                #expect(read.string("status") == "classified")
                #expect(read["pushSent"] == .bool(false))
            }
            try await harness.drain()
            #expect(harness.apns.requests.isEmpty)
            #expect(try await api.call(.get, "/v1/notifications").items.isEmpty)
        }
    }
}

import Foundation
import HeraldCore
import Testing

@testable import HeraldFCM

/// 2026-03-10 12:00:00 UTC.
private let noon = Date(timeIntervalSince1970: 1_773_144_000)

@Suite("FCMRenderer: notification, string data, the android and apns blocks, and the fcm overrides")
struct FCMRendererTests {
    static func rendered(
        _ payload: NotificationPayload, badge: Int? = nil, sound: Bool = true, expiresAt: Date? = nil
    ) throws -> FCMMessage {
        let notification = PushNotification(
            id: "n-1", appID: "demo", target: NotificationTarget(audience: .all), payload: payload,
            expiresAt: expiresAt, createdAt: noon)
        return try FCMRenderer().render(
            notification, token: "fcm-token", badge: badge, soundEnabled: sound, now: noon)
    }

    @Test("An alert: notification block, data as strings with herald_id, android and apns from the options")
    func alert() throws {
        let payload = NotificationPayload(
            title: "Front door", body: "Someone is at the door", sound: "chime", category: "OPEN_EVENT",
            threadID: "cam-1", image: "https://cdn/x.jpg", deepLink: "app://events/1",
            data: ["event_id": .string("e1"), "count": .number(2), "flags": .object(["a": .bool(true)])],
            collapseID: "door", ttl: 600)
        let message = try Self.rendered(payload, badge: 3)
        #expect(message.target == .token("fcm-token"))
        #expect(message.notification?.title == "Front door")
        #expect(message.notification?.body == "Someone is at the door")
        #expect(message.notification?.image == "https://cdn/x.jpg")
        #expect(
            message.data
                == [
                    "event_id": "e1", "count": "2", "flags": #"{"a":true}"#, "deep_link": "app://events/1",
                    "herald_id": "n-1",
                ])
        #expect(message.android?.collapseKey == "door")
        #expect(message.android?.priority == .high)
        #expect(message.android?.ttl == 600)
        #expect(
            message.android?.notification
                == [
                    "sound": .string("chime"), "notification_count": .number(3), "click_action": .string("OPEN_EVENT"),
                    "tag": .string("cam-1"),
                ])
        #expect(
            message.apns?["payload"]
                == .object([
                    "aps": .object([
                        "badge": .number(3), "sound": .string("chime"), "category": .string("OPEN_EVENT"),
                        "thread-id": .string("cam-1"), "mutable-content": .number(1),
                    ])
                ]))
    }

    @Test("A data message has no notification block; the expiry caps the TTL; sound off drops it; normal priority")
    func dataMessage() throws {
        let payload = NotificationPayload(sound: "chime", data: ["sync": .bool(true)], priority: .normal, ttl: 3600)
        let message = try Self.rendered(
            payload, sound: false, expiresAt: noon.addingTimeInterval(90))
        #expect(message.notification == nil)
        #expect(message.data == ["sync": "true", "herald_id": "n-1"])
        #expect(message.android?.priority == .normal)
        #expect(message.android?.ttl == 90)
        #expect(message.android?.notification == nil)
        #expect(message.apns == nil)
    }

    @Test("fcm overrides: notification fields replaced or removed, data, android fields, apns removed by null")
    func overrides() throws {
        let payload = NotificationPayload(
            title: "Hi", body: "There", data: ["keep": .string("k"), "drop": .string("d")],
            overrides: [
                "fcm": .object([
                    "notification": .object(["body": .null, "title": .string("Hello")]),
                    "data": .object(["drop": .null, "extra": .number(1)]),
                    "android": .object([
                        "collapse_key": .string("c"), "priority": .string("NORMAL"), "ttl": .string("30s"),
                        "restricted_package_name": .string("com.example"), "direct_boot_ok": .bool(true),
                        "notification": .object(["channel_id": .string("alerts")]),
                    ]),
                    "apns": .null, "webpush": .object(["headers": .object(["TTL": .string("60")])]),
                    "fcm_options": .object(["analytics_label": .string("l")]),
                ])
            ])
        let message = try Self.rendered(payload, badge: 1)
        #expect(message.notification?.title == "Hello")
        #expect(message.notification?.body == nil)
        #expect(message.data == ["keep": "k", "extra": "1", "herald_id": "n-1"])
        #expect(message.android?.collapseKey == "c")
        #expect(message.android?.priority == .normal)
        #expect(message.android?.ttl == 30)
        #expect(message.android?.restrictedPackageName == "com.example")
        #expect(message.android?.directBootOK == true)
        #expect(message.android?.notification?["channel_id"] == .string("alerts"))
        #expect(message.android?.notification?["notification_count"] == .number(1))
        #expect(message.apns == nil)
        #expect(message.webpush == ["headers": .object(["TTL": .string("60")])])
        #expect(message.fcmOptions == ["analytics_label": .string("l")])
        // A null notification override makes a data message.
        let silenced = NotificationPayload(title: "Hi", overrides: ["fcm": .object(["notification": .null])])
        #expect(try Self.rendered(silenced).notification == nil)
    }
}

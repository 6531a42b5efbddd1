import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldAPNs

/// 2026-03-10 12:00:00 UTC.
private let noon = Date(timeIntervalSince1970: 1_773_144_000)

@Suite("APNsRenderer: the aps dictionary, Herald's id, the headers and the apns overrides")
struct APNsRendererTests {
    static func rendered(
        _ payload: NotificationPayload, environment: PushEnvironment = .production,
        bundleID: String? = "com.example.app",
        defaultTopic: String? = nil, badge: Int? = nil, sound: Bool = true, expiresAt: Date? = nil
    ) throws -> (notification: APNsNotification, body: [String: JSONValue]) {
        let notification = PushNotification(
            id: "n-1", appID: "demo", target: NotificationTarget(audience: .all), payload: payload,
            expiresAt: expiresAt, createdAt: noon)
        let rendered = try APNsRenderer(defaultTopic: defaultTopic).render(
            notification, token: "ab12", environment: environment, bundleID: bundleID, badge: badge,
            soundEnabled: sound, now: noon)
        guard case .object(let body) = try JSONValue.parse(rendered.payload) else { throw TestFailure("not an object") }
        return (rendered, body)
    }

    @Test("An alert: aps from the payload, data beside it, herald.id, mutable-content for an image, headers")
    func alert() throws {
        var payload = NotificationPayload(
            title: "Front door", subtitle: "Person", body: "Someone is at the door", category: "DOORBELL",
            threadID: "cam-1", image: "https://cdn/x.jpg", deepLink: "app://events/1",
            data: ["event_id": .string("e1")],
            interruptionLevel: .timeSensitive, collapseID: "door", ttl: 600)
        payload.sound = "chime.caf"
        let (notification, body) = try Self.rendered(payload, badge: 4)
        #expect(
            body["aps"]
                == .object([
                    "alert": .object([
                        "title": .string("Front door"), "subtitle": .string("Person"),
                        "body": .string("Someone is at the door"),
                    ]),
                    "badge": .number(4), "sound": .string("chime.caf"), "category": .string("DOORBELL"),
                    "thread-id": .string("cam-1"), "mutable-content": .number(1),
                    "interruption-level": .string("time-sensitive"),
                ]))
        #expect(body["event_id"] == .string("e1"))
        #expect(body["image"] == .string("https://cdn/x.jpg"))
        #expect(body["deep_link"] == .string("app://events/1"))
        #expect(body["herald"] == .object(["id": .string("n-1")]))
        #expect(notification.pushType == .alert)
        #expect(notification.priority == .immediate)
        #expect(notification.bundleID == "com.example.app")
        #expect(notification.collapseID == "door")
        #expect(notification.expiration == noon.addingTimeInterval(600))
        #expect(notification.deviceToken == "ab12")
    }

    @Test("content-available alone is a background push; normal priority is 5; sound off drops the sound")
    func background() throws {
        var payload = NotificationPayload(data: ["sync": .bool(true)], contentAvailable: true, priority: .normal)
        let (silent, body) = try Self.rendered(payload)
        #expect(silent.pushType == .background)
        #expect(silent.priority == .considerate)
        #expect(body["aps"] == .object(["content-available": .number(1)]))
        payload = NotificationPayload(title: "Hi", sound: "default")
        #expect(try Self.rendered(payload, sound: false).body["aps"]?.objectValue?["sound"] == nil)
    }

    @Test("A critical alert's sound is the critical dictionary")
    func critical() throws {
        let payload = NotificationPayload(title: "Smoke", sound: "alarm.caf", interruptionLevel: .critical)
        #expect(
            try Self.rendered(payload).body["aps"]?.objectValue?["sound"]
                == .object(["critical": .number(1), "name": .string("alarm.caf"), "volume": .number(1)]))
    }

    @Test("apns overrides: aps merged, other keys set or removed by null, headers for type, priority, topic")
    func overrides() throws {
        let payload = NotificationPayload(
            title: "Call", body: "Ann is calling",
            overrides: [
                "apns": .object([
                    "aps": .object(["alert": .object(["body": .string("Incoming call")])]),
                    "herald": .null, "call_id": .string("c-9"),
                    "headers": .object([
                        "apns-push-type": .string("voip"), "apns-priority": .number(5),
                        "apns-topic": .string("com.example.app.voip"), "apns-expiration": .string("1773144060"),
                        "apns-collapse-id": .string("call"),
                    ]),
                ]),
                "apns_sandbox": .object(["aps": .object(["alert": .object(["body": .string("sandbox")])])]),
            ])
        let (notification, body) = try Self.rendered(payload)
        #expect(
            body["aps"]?.objectValue?["alert"]
                == .object(["title": .string("Call"), "body": .string("Incoming call")]))
        #expect(body["herald"] == nil)
        #expect(body["call_id"] == .string("c-9"))
        #expect(body["headers"] == nil)
        #expect(notification.pushType == .voip)
        #expect(notification.priority == .considerate)
        // The topic override with the type's suffix names the bundle: the type adds it back.
        #expect(notification.bundleID == "com.example.app")
        #expect(notification.expiration == Date(timeIntervalSince1970: 1_773_144_060))
        #expect(notification.collapseID == "call")
        // A sandbox recipient gets the apns_sandbox overrides instead.
        let (_, sandbox) = try Self.rendered(payload, environment: .sandbox)
        #expect(
            sandbox["aps"]?.objectValue?["alert"] == .object(["title": .string("Call"), "body": .string("sandbox")]))
    }

    @Test("The topic: the installation's bundle id, else the app's; neither is missing_topic; a bad header is refused")
    func topicAndErrors() throws {
        let payload = NotificationPayload(title: "Hi")
        #expect(
            try Self.rendered(payload, bundleID: nil, defaultTopic: "com.example.default").notification.bundleID
                == "com.example.default")
        #expect(
            try Self.rendered(payload, defaultTopic: "com.example.default").notification.bundleID == "com.example.app")
        #expect {
            try Self.rendered(payload, bundleID: nil)
        } throws: { ($0 as? HeraldError)?.code == "missing_topic" }
        let bad = NotificationPayload(
            title: "Hi", overrides: ["apns": .object(["headers": .object(["apns-push-type": .string("fax")])])])
        #expect {
            try Self.rendered(bad)
        } throws: { ($0 as? HeraldError)?.field == "payload.overrides.apns.headers.apns-push-type" }
    }
}

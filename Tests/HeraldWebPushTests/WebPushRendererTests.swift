import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldWebPush

/// 2026-03-10 12:00:00 UTC.
private let noon = Date(timeIntervalSince1970: 1_773_144_000)

@Suite("WebPushRenderer: the service worker's JSON and the RFC 8030 headers")
struct WebPushRendererTests {
    static func rendered(
        _ payload: NotificationPayload, expiresAt: Date? = nil, badge: Int? = nil, sound: Bool = true
    )
        throws -> (body: [String: JSONValue], headers: WebPushRenderer.Rendered)
    {
        let notification = PushNotification(
            id: "n-1", appID: "demo", target: NotificationTarget(audience: .all), payload: payload,
            expiresAt: expiresAt, createdAt: noon)
        let rendered = WebPushRenderer().render(
            notification, badge: badge, soundEnabled: sound, now: noon)
        guard case .object(let body) = try JSONValue.parse(rendered.body) else { throw TestFailure("not an object") }
        return (body, rendered)
    }

    @Test("Alert, image, deep link as url (top level and in data), tag from the collapse id, badge count")
    func alert() throws {
        var payload = NotificationPayload(
            title: "Front door", subtitle: "Person", body: "Someone is at the door", image: "https://cdn/x.jpg",
            deepLink: "https://app.example/events/1", data: ["event_id": .string("e1")], collapseID: "door")
        payload.sound = "default"
        let (body, headers) = try Self.rendered(payload, badge: 3)
        #expect(body["title"] == .string("Front door"))
        #expect(body["body"] == .string("Person\nSomeone is at the door"))
        #expect(body["image"] == .string("https://cdn/x.jpg"))
        #expect(body["url"] == .string("https://app.example/events/1"))
        #expect(
            body["data"]
                == .object([
                    "event_id": .string("e1"), "url": .string("https://app.example/events/1"),
                    "herald_id": .string("n-1"),
                ]))
        #expect(body["tag"] == .string("door"))
        #expect(body["renotify"] == .bool(true))
        #expect(body["badge_count"] == .number(3))
        #expect(body["silent"] == nil)
        #expect(body["timestamp"] == .number(JSONNumber(Int64(noon.timeIntervalSince1970 * 1000))))
        #expect(headers.topic == "door")
        #expect(headers.urgency == "high")
        #expect(headers.ttl == WebPushRenderer.defaultTTL)
    }

    @Test("TTL from the payload, capped by the expiry; urgency from priority; sound off is silent")
    func headers() throws {
        var payload = NotificationPayload(title: "Hi", priority: .normal, ttl: 3600)
        let (body, first) = try Self.rendered(payload, sound: false)
        #expect(first.ttl == 3600)
        #expect(first.urgency == "normal")
        #expect(body["silent"] == .bool(true))
        let (_, capped) = try Self.rendered(payload, expiresAt: noon.addingTimeInterval(60))
        #expect(capped.ttl == 60)
        payload = NotificationPayload(data: ["sync": .bool(true)], priority: .normal)
        #expect(try Self.rendered(payload).headers.urgency == "low")
    }

    @Test("webpush overrides are merged over the rendered members; null removes one")
    func overrides() throws {
        let payload = NotificationPayload(
            title: "Hi", body: "There", deepLink: "https://x",
            overrides: [
                "webpush": .object([
                    "icon": .string("/icon.png"), "body": .null,
                    "actions": .array([.object(["action": .string("open")])]),
                ])
            ])
        let (body, _) = try Self.rendered(payload)
        #expect(body["icon"] == .string("/icon.png"))
        #expect(body["body"] == nil)
        #expect(body["actions"] == .array([.object(["action": .string("open")])]))
        #expect(body["title"] == .string("Hi"))
    }
}

import Foundation
import HTTPTypes
import HeraldCore
import HeraldEngine
import HeraldProviderMocks
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

/// Changing and removing an updatable notification once it is out (docs/content.md, "Updating and
/// deleting"): `PATCH /v1/notifications/{id}` and `DELETE /v1/notifications/{id}/delivered`, each
/// change a revision with its own ledger, sent with the same replacement key and never after a later one.
@Suite("Updatable notifications: changed and removed on the devices, in revision order", .serialized)
struct NotificationRevisionTests {
    /// What each APNs token was sent, in the order the mock received it: the alert's body, or
    /// `remove:<key>` for a removal.
    static func apnsSent(_ harness: EngineHarness) -> [String: [String]] {
        var sent: [String: [String]] = [:]
        for request in harness.apns.requests {
            guard let token = request.token, let payload = request.json?.objectValue else { continue }
            if case .string(let key)? = payload[NotificationRevision.removalDataKey] {
                sent[token, default: []].append("remove:" + key)
            } else {
                sent[token, default: []].append(
                    payload["aps"]?.objectValue?["alert"]?.objectValue?["body"]?.stringValue ?? "?")
            }
        }
        return sent
    }

    /// The same for each FCM token.
    static func fcmSent(_ harness: EngineHarness) -> [String: [String]] {
        var sent: [String: [String]] = [:]
        for request in harness.fcm.requests {
            guard let message = request.json?.objectValue?["message"]?.objectValue,
                case .string(let token)? = message["token"]
            else { continue }
            if case .string(let key)? = message["data"]?.objectValue?[NotificationRevision.removalDataKey] {
                sent[token, default: []].append("remove:" + key)
            } else {
                sent[token, default: []].append(
                    message["notification"]?.objectValue?["body"]?.stringValue ?? "?")
            }
        }
        return sent
    }

    @Test(
        "Changed twice and removed: each a revision of its own to the devices it went to, same key, in order",
        arguments: ["sqlite", "postgres"])
    func changeAndRemove(_ storeKind: String) async throws {
        try await RangedFanoutTests.withHarness(storeKind) { harness, api in
            let iphone = Fixtures.apnsToken()
            let android = Fixtures.fcmToken()
            _ = try await api.register(#"{"platform":"ios","token":"\#(iphone)","channels":["match"]}"#)
            _ = try await api.register(#"{"platform":"android","token":"\#(android)","channels":["match"]}"#)
            let id = try await api.send(
                #"{"target":{"channels":["match"]},"updatable":true,"payload":{"title":"Score","body":"1:0"}}"#)
            try await harness.drain()
            let key = "herald-\(id)"
            // A device registered later is no recipient: a change does not reach it.
            let late = Fixtures.apnsToken()
            _ = try await api.register(#"{"platform":"ios","token":"\#(late)","channels":["match"]}"#)

            let changed = try await api.call(
                .patch, "/v1/notifications/\(id)", body: #"{"payload":{"title":"Score","body":"2:0"}}"#)
            #expect(changed.status == .accepted)
            let second = try #require(changed.string("id"))
            #expect(second != id)
            #expect(changed["revision"] == .object(["of": .string(id), "number": .number(2)]))
            #expect(changed["payload.collapse_id"] == .string(key))
            try await harness.drain()
            // Any revision's id names the notification.
            let third = try await api.call(
                .patch, "/v1/notifications/\(second)", body: #"{"payload":{"title":"Score","body":"3:0"}}"#)
            #expect(third.status == .accepted)
            #expect(third["revision.number"] == .number(3))
            try await harness.drain()

            // Each revision has its own ledger.
            let record = try await api.notification(second)
            #expect(record.int("counts.sent") == 2)
            #expect(record.string("status") == "done")
            #expect(try await api.notification(id)["revision"] == .object(["of": .string(id), "number": .number(1)]))

            let removed = try await api.call(.delete, "/v1/notifications/\(id)/delivered")
            #expect(removed.status == .accepted)
            #expect(
                removed["revision"]
                    == .object(["of": .string(id), "number": .number(4), "removal": .bool(true)]))
            try await harness.drain()
            #expect(try await api.notification(try #require(removed.string("id"))).int("counts.sent") == 2)

            #expect(Self.apnsSent(harness)[iphone] == ["1:0", "2:0", "3:0", "remove:" + key])
            #expect(Self.fcmSent(harness)[android] == ["1:0", "2:0", "3:0", "remove:" + key])
            #expect(Self.apnsSent(harness)[late] == nil)
            let apns = harness.apns.requests.filter { $0.token == iphone }
            #expect(apns.allSatisfy { $0.header("apns-collapse-id") == key }, "one replacement key throughout")
            let removal = try #require(apns.last)
            #expect(removal.header("apns-push-type") == "background")
            #expect(removal.header("apns-priority") == "5")
            #expect(removal.json?.objectValue?["aps"] == .object(["content-available": .number(1)]))
            let fcm = harness.fcm.requests.compactMap { $0.json?.objectValue?["message"]?.objectValue }
            #expect(fcm.dropLast().allSatisfy { $0["android"]?.objectValue?["notification"]?["tag"] == .string(key) })
            #expect(fcm.last?["notification"] == nil, "the removal is a data message")

            // Removed: no further change.
            for (method, path) in [
                (HTTPRequest.Method.patch, "/v1/notifications/\(id)"), (.delete, "/v1/notifications/\(id)/delivered"),
            ] {
                let refused = try await api.call(method, path, body: #"{"payload":{"body":"4:0"}}"#)
                #expect(refused.status == .conflict)
                #expect(refused.errorCode == "notification_removed")
            }
        }
    }

    @Test("Scheduled: a change replaces its content where it waits; a removal cancels it; neither sends anything early")
    func scheduled() async throws {
        let harness = try await EngineHarness()
        try await harness.run { api in
            let token = Fixtures.apnsToken()
            _ = try await api.register(#"{"platform":"ios","token":"\#(token)"}"#)
            let later = ISO8601DateFormatter().string(from: harness.server.clock.date.addingTimeInterval(3600))
            let id = try await api.send(
                #"{"target":{"all":true},"updatable":true,"push_time":"\#(later)","payload":{"body":"kick-off 18:00"}}"#
            )
            let changed = try await api.call(
                .patch, "/v1/notifications/\(id)", body: #"{"payload":{"title":"Moved","body":"kick-off 20:00"}}"#)
            #expect(changed.status == .ok)
            #expect(changed.string("id") == id)
            #expect(changed.string("status") == "scheduled")
            #expect(changed["payload.body"] == .string("kick-off 20:00"))
            #expect(changed["payload.collapse_id"] == .string("herald-\(id)"))
            #expect(try await api.notification(id)["payload.body"] == .string("kick-off 20:00"))
            try await harness.drain()
            #expect(harness.apns.requests.isEmpty)

            let other = try await api.send(
                #"{"target":{"all":true},"updatable":true,"push_time":"\#(later)","payload":{"body":"draw"}}"#)
            let canceled = try await api.call(.delete, "/v1/notifications/\(other)/delivered")
            #expect(canceled.status == .ok)
            #expect(canceled.string("status") == "canceled")
            let again = try await api.call(.patch, "/v1/notifications/\(other)", body: #"{"payload":{"body":"x"}}"#)
            #expect(again.status == .conflict)
            #expect(again.errorCode == "notification_final")

            harness.server.clock.advance(by: .seconds(3601))
            try await harness.drain()
            #expect(Self.apnsSent(harness)[token] == ["kick-off 20:00"], "the new content, once; the canceled never")
        }
    }

    @Test("A retry of revision 1 after revision 2 went is superseded, never sent after it")
    func retrySuperseded() async throws {
        let harness = try await EngineHarness()
        try await harness.run { api in
            let token = Fixtures.apnsToken()
            _ = try await api.register(#"{"platform":"ios","token":"\#(token)"}"#)
            harness.apns.script(token: token, .internalServerError, times: 1)
            let id = try await api.send(#"{"target":{"all":true},"updatable":true,"payload":{"body":"1:0"}}"#)
            try await harness.drain()
            #expect(try await api.notification(id).string("status") == "sending", "a retry waits")
            let changed = try await api.call(.patch, "/v1/notifications/\(id)", body: #"{"payload":{"body":"2:0"}}"#)
            #expect(changed.status == .accepted)
            // While the first is still being sent, the change goes to its target.
            #expect(changed["target"] == .object(["all": .bool(true)]))
            try await harness.drain()
            harness.server.clock.advance(by: .seconds(15))
            try await harness.drain()
            #expect(Self.apnsSent(harness)[token] == ["1:0", "2:0"])
            #expect(harness.apns.requests.map(\.status) == [500, 200])
            let first = try await api.call(.get, "/v1/notifications/\(id)/deliveries")
            #expect(String(describing: first.json).contains("superseded"))
            #expect(try await api.notification(id).string("status") == "done")
        }
    }

    @Test(
        "Every new route (templates, change, removal): malformed JSON, wrong types, unknown and oversized fields get a 4xx, nothing changed"
    )
    func everyRouteRefuses() async throws {
        let harness = try await EngineHarness()
        try await harness.run { api in
            _ = try await api.register(#"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
            #expect(
                try await api.call(.put, "/v1/templates/score", body: #"{"title":"{{home}}","body":"{{score}}"}"#)
                    .status == .created)
            let id = try await api.send(#"{"target":{"all":true},"updatable":true,"payload":{"body":"1:0"}}"#)
            let plain = try await api.send(#"{"target":{"all":true},"payload":{"body":"plain"}}"#)
            try await harness.drain()
            let long = String(repeating: "n", count: 200)
            let change = "/v1/notifications/\(id)"
            let cases: [(HTTPRequest.Method, String, String, String?, String?)] = [
                (.put, "/v1/templates/score", "{", nil, nil),
                (.put, "/v1/templates/score", "[]", nil, nil),
                (.put, "/v1/templates/score", #"{"title":5}"#, "title", nil),
                (.put, "/v1/templates/score", #"{"body":"x","colour":1}"#, "colour", nil),
                (.put, "/v1/templates/score", #"{"body":"{{#open}}"}"#, "body", nil),
                (.put, "/v1/templates/score", #"{"body":"x","strict":"yes"}"#, "strict", nil),
                (.put, "/v1/templates/score", #"{"body":"x","localizations":{"de":5}}"#, "localizations.de", nil),
                (.put, "/v1/templates/\(long)", #"{"body":"x"}"#, nil, nil),
                (.put, "/v1/templates/a%20b", #"{"body":"x"}"#, nil, nil),
                (.post, "/v1/templates/score/render", "{", nil, nil),
                (.post, "/v1/templates/score/render", #"{"variables":[]}"#, "variables", nil),
                (.post, "/v1/templates/score/render", #"{"locale":5}"#, "locale", nil),
                (.post, "/v1/templates/missing/render", "{}", nil, nil),
                (.delete, "/v1/templates/missing", "", nil, nil),
                (.patch, change, "{", nil, nil),
                (.patch, change, "[]", nil, nil),
                (.patch, change, "{}", "payload", nil),
                (.patch, change, #"{"payload":"x"}"#, "payload", nil),
                (.patch, change, #"{"payload":{"body":5}}"#, "payload.body", nil),
                (.patch, change, #"{"payload":{"body":"x","collapse_id":"other"}}"#, "payload.collapse_id", nil),
                (.patch, change, #"{"payload":{"body":"x"},"target":{"all":true}}"#, "target", nil),
                (.patch, change, #"{"template":{"name":"missing"}}"#, "template.name", "template_not_found"),
                (
                    .patch, change, #"{"template":{"name":"score"},"payload":{"body":"x"}}"#, "payload.body",
                    "template_conflict"
                ),
                (.patch, "/v1/notifications/\(plain)", #"{"payload":{"body":"x"}}"#, nil, "notification_not_updatable"),
                (.patch, "/v1/notifications/nope", #"{"payload":{"body":"x"}}"#, nil, "not_found"),
                (.delete, "/v1/notifications/\(plain)/delivered", "", nil, "notification_not_updatable"),
                (.delete, "/v1/notifications/nope/delivered", "", nil, "not_found"),
            ]
            let templates = try await api.call(.get, "/v1/templates").json
            let notifications = try await api.call(.get, "/v1/notifications").json
            for (method, path, body, field, code) in cases {
                let answer = try await api.call(method, path, body: body.isEmpty ? nil : body)
                #expect((400..<500).contains(Int(answer.status.code)), "\(method) \(path) \(body): \(answer.status)")
                #expect(answer.errorCode != nil, "\(path) \(body)")
                if let field { #expect(answer.errorField == field, "\(path) \(body): \(answer.errorField ?? "none")") }
                if let code { #expect(answer.errorCode == code, "\(path) \(body): \(answer.errorCode ?? "none")") }
            }
            let oversized = String(repeating: "d", count: 70_000)
            for (method, path) in [
                (HTTPRequest.Method.put, "/v1/templates/score"), (.post, "/v1/templates/score/render"),
                (.patch, change),
            ] {
                let answer = try await api.call(method, path, body: #"{"padding":"\#(oversized)"}"#)
                #expect(answer.status == .contentTooLarge, "\(path): \(answer.status)")
            }
            #expect(try await api.call(.get, "/v1/templates").json == templates, "the templates unchanged")
            #expect(try await api.call(.get, "/v1/notifications").json == notifications, "no revision made")
            #expect(harness.apns.requests.count == 2)
        }
    }
}

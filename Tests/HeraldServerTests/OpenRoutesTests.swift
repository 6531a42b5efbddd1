import Foundation
import HTTPTypes
import HeraldCore
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

@Suite("POST /v1/opens through the router")
struct OpenRoutesTests {
    /// A notification to `installations`, sent with the server key; its id.
    static func send(to installations: [String], _ api: API) async throws -> String {
        let ids = installations.map { #""\#($0)""# }.joined(separator: ",")
        let accepted = try await api.call(
            .post, "/v1/notifications", body: #"{"target":{"installation_ids":[\#(ids)]},"payload":{"title":"Hi"}}"#)
        return try #require(accepted.string("id"))
    }

    static func open(_ notification: String, _ installation: String, extra: String = "") -> String {
        #"{"notification_id":"\#(notification)","installation_id":"\#(installation)"\#(extra)}"#
    }

    @Test("Each installation's open counts once; the user, the client key and the server key may report")
    func countsOnce() async throws {
        let harness = try await ServerHarness()
        let ann = try await harness.userToken("ann")
        let earlier = harness.clock.date.addingTimeInterval(-90)
        try await harness.run { api in
            let annDevice = try #require(try await api.registerIOS(bearer: ann).string("id"))
            let shared = try #require(try await api.registerIOS(bearer: ServerHarness.clientKey).string("id"))
            let id = try await Self.send(to: [annDevice, shared], api)

            let first = try await api.call(.post, "/v1/opens", bearer: ann, body: Self.open(id, annDevice))
            #expect(first.status == .created)
            #expect(first.string("notification_id") == id)
            #expect(first.string("installation_id") == annDevice)
            let openedAt = try #require(first.string("opened_at"))
            let again = try await api.call(.post, "/v1/opens", bearer: ann, body: Self.open(id, annDevice))
            #expect(again.status == .ok)
            #expect(again.string("opened_at") == openedAt)
            let byServer = try await api.call(.post, "/v1/opens", body: Self.open(id, annDevice))
            #expect(byServer.status == .ok)

            let stamp = Date.ISO8601FormatStyle().format(earlier)
            let byClient = try await api.call(
                .post, "/v1/opens", bearer: ServerHarness.clientKey,
                body: Self.open(id, shared, extra: #","opened_at":"\#(stamp)""#))
            #expect(byClient.status == .created)
            let recorded = try #require(
                byClient.string("opened_at").flatMap {
                    try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse($0)
                })
            #expect(abs(recorded.timeIntervalSince(earlier)) < 1)

            let record = try await api.notification(id)
            #expect(record.int("counts.opened") == 2)
            #expect(record.int("counts.targeted") == 0)
        }
    }

    @Test("Another user's installation, another app's notification or installation: the same 404, nothing counted")
    func foreignRecordsAreNotFound() async throws {
        let harness = try await ServerHarness()
        let ann = try await harness.userToken("ann")
        let bob = try await harness.userToken("bob")
        let now = harness.clock.date
        let elsewhere = try await harness.store.register(
            InstallationRegistration(platform: .ios, service: .apns, token: .device(Fixtures.apnsToken())),
            appID: "other", now: now
        ).installation
        let theirs = PushNotification(
            id: Identifier.make(now: now), appID: "other", target: NotificationTarget(audience: .all),
            payload: NotificationPayload(title: "Hi"), status: .queued, createdAt: now)
        _ = try await harness.store.insertNotification(theirs, runAt: now, idempotencyWindow: .seconds(60))
        try await harness.run { api in
            let annDevice = try #require(try await api.registerIOS(bearer: ann).string("id"))
            let id = try await Self.send(to: [annDevice], api)

            let cases: [(bearer: String, body: String)] = [
                (bob, Self.open(id, annDevice)),
                (ann, Self.open(theirs.id, annDevice)),
                (ServerHarness.serverKey, Self.open(theirs.id, annDevice)),
                (ServerHarness.clientKey, Self.open(id, elsewhere.id)),
                (ServerHarness.serverKey, Self.open(id, "0193a5c0-0000-7000-8000-000000000000")),
            ]
            for (bearer, body) in cases {
                let response = try await api.call(.post, "/v1/opens", bearer: bearer, body: body)
                #expect(response.status == .notFound, "\(body)")
                #expect(response.errorCode == "not_found")
            }
            #expect(try await api.notification(id).int("counts.opened") == 0)
            #expect(try await harness.store.notification(appID: "other", id: theirs.id)?.counts.opened == 0)
        }
    }

    @Test("A bad body is 400 naming its field and counts nothing; no credential is 401")
    func badBodies() async throws {
        let harness = try await ServerHarness()
        let future = Date.ISO8601FormatStyle().format(harness.clock.date.addingTimeInterval(3600))
        try await harness.run { api in
            let device = try #require(try await api.registerIOS().string("id"))
            let id = try await Self.send(to: [device], api)
            let cases: [(body: String, code: String, field: String?)] = [
                (#"{"installation_id":"\#(device)"}"#, "missing_field", "notification_id"),
                (#"{"notification_id":"\#(id)","installation_id":null}"#, "missing_field", "installation_id"),
                (Self.open(id, device, extra: #","via":"tap""#), "unknown_field", "via"),
                (#"{"notification_id":7,"installation_id":"\#(device)"}"#, "invalid_type", "notification_id"),
                (Self.open(String(repeating: "a", count: 65), device), "invalid_length", "notification_id"),
                (Self.open(id, ""), "invalid_length", "installation_id"),
                (Self.open(id, device, extra: #","opened_at":"yesterday""#), "invalid_timestamp", "opened_at"),
                (
                    Self.open(id, device, extra: #","opened_at":"2026-11-25T10:00:00""#), "invalid_timestamp",
                    "opened_at"
                ),
                (Self.open(id, device, extra: #","opened_at":"\#(future)""#), "invalid_timestamp", "opened_at"),
                (#"["\#(id)"]"#, "invalid_body", nil),
            ]
            for (body, code, field) in cases {
                let response = try await api.call(.post, "/v1/opens", bearer: ServerHarness.clientKey, body: body)
                #expect(response.status == .badRequest, "\(body)")
                #expect(response.errorCode == code, "\(body)")
                #expect(response.errorField == field, "\(body)")
            }
            let anonymous = try await api.call(.post, "/v1/opens", bearer: nil, body: Self.open(id, device))
            #expect(anonymous.status == .unauthorized)
            #expect(try await api.notification(id).int("counts.opened") == 0)
        }
    }
}

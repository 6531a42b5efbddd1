import Foundation
import HTTPTypes
import HeraldAPNs
import HeraldCore
import HeraldEngine
import HeraldFCM
import HeraldProviderMocks
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

/// `POST /v1/notifications` checks a payload against the providers the app has credentials for:
/// one without them (here FCM, as `herald serve` builds it for an app with no `fcm` section)
/// delivers nothing, so its limit refuses nothing the others can deliver.
@Suite("Payload limits through the send API: only providers with credentials", .serialized)
struct PayloadLimitRoutesTests {
    /// A body of `length` bytes in the payload's data, rendered for a provider.
    static func body(_ length: Int) -> String {
        #"{"target":{"user_ids":["ann"]},"payload":{"title":"Hi","data":{"blob":"\#(String(repeating: "x", count: length))"}}}"#
    }

    /// The shortest blob that APNs takes and FCM does not (its message, token and all, is larger).
    static func betweenTheLimits() throws -> Int {
        let apns = APNsTransport(production: nil, sandbox: nil, topic: EngineHarness.topic)
        let fcm = FCMTransport(client: nil)
        func fits(_ transport: any Transport, _ length: Int) -> Bool {
            let notification = PushNotification(
                id: "n", appID: "demo", target: NotificationTarget(audience: .userIDs(["ann"])),
                payload: NotificationPayload(
                    title: "Hi", data: ["blob": .string(String(repeating: "x", count: length))]),
                createdAt: Date())
            return (try? transport.validate(notification, now: Date())) != nil
        }
        for length in stride(from: 3000, to: 4100, by: 2) where fits(apns, length) && !fits(fcm, length) {
            return length
        }
        throw TestFailure("no length fits APNs and not FCM")
    }

    @Test("A payload over FCM's limit and within APNs's is accepted and delivered when FCM has no credentials")
    func unconfiguredProviderRefusesNothing() async throws {
        let length = try Self.betweenTheLimits()
        let harness = try await EngineHarness(fcmCredentials: false)
        try await harness.run { api in
            _ = try await api.register(#"{"platform":"ios","user_id":"ann","token":"\#(Fixtures.apnsToken())"}"#)
            let id = try await api.send(Self.body(length))
            try await harness.drain()
            #expect(try await api.notification(id).string("status") == "done")
            #expect(harness.apns.requests.count == 1)
            #expect(harness.apns.requests.first?.json?.objectValue?["blob"]?.stringValue?.count == length)

            // With FCM's credentials the same payload is refused, as before.
            let withFCM = try await EngineHarness()
            try await withFCM.run { api in
                let refused = try await api.call(.post, "/v1/notifications", body: Self.body(length))
                #expect(refused.status == .badRequest)
                #expect(refused.errorCode == "payload_too_large")
                #expect(refused.string("error.message")?.contains("FCM") == true)
            }

            // APNs has credentials: its limit still refuses, and nothing is stored or sent.
            let tooLarge = try await api.call(.post, "/v1/notifications", body: Self.body(4200))
            #expect(tooLarge.status == .badRequest)
            #expect(tooLarge.errorCode == "payload_too_large")
            #expect(tooLarge.string("error.message")?.contains("APNs") == true)
            try await harness.drain()
            #expect(harness.apns.requests.count == 1)
        }
    }
}

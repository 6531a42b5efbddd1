import Foundation
import HTTPTypes
import HeraldCore
import HeraldEngine
import HeraldProviderMocks
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

@Suite("A target's APNs environment, through the send API and the mock APNs servers", .serialized)
struct APNsEnvironmentTargetTests {
    @Test("target.apns_environment sends every APNs recipient there, whatever its installation's")
    func override() async throws {
        let harness = try await EngineHarness(apnsSandbox: .separate)
        try await harness.run { api in
            let sandbox = try #require(harness.sandboxAPNs)
            let production = Fixtures.apnsToken()
            let development = Fixtures.apnsToken()
            _ = try await api.register(#"{"platform":"ios","token":"\#(production)"}"#)
            _ = try await api.register(#"{"platform":"ios","token":"\#(development)","environment":"sandbox"}"#)
            _ = try await api.send(
                #"{"target":{"all":true,"apns_environment":"sandbox"},"payload":{"body":"to the sandbox"}}"#)
            try await harness.drain()
            #expect(Set(sandbox.requests.compactMap(\.token)) == [production, development])
            #expect(harness.apns.requests.isEmpty)
            let id = try await api.send(#"{"target":{"all":true},"payload":{"body":"each its own"}}"#)
            try await harness.drain()
            #expect(harness.apns.requests.map(\.token) == [production])
            #expect(sandbox.requests.count == 3)
            let stored = try await api.notification(id)
            #expect(stored["target.apns_environment"] == nil)
            let bad = try await api.call(
                .post, "/v1/notifications",
                body: #"{"target":{"all":true,"apns_environment":"dev"},"payload":{"body":"x"}}"#)
            #expect(bad.status == .badRequest)
            #expect(bad.errorField == "target.apns_environment")
        }
    }

    @Test("A send that accepts being expired is stored and expires unsent; without it, it is refused")
    func acceptsExpired() async throws {
        let harness = try await EngineHarness()
        try await harness.run { api in
            _ = try await api.register(#"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
            let past = harness.server.clock.date.addingTimeInterval(-60)
            var request = SendRequest(
                target: NotificationTarget(audience: .all), payload: NotificationPayload(body: "stale"),
                expiration: .at(past))
            await #expect(throws: HeraldError.self) {
                try await harness.server.dispatcher.submit(request, appID: "demo")
            }
            request.acceptsExpired = true
            guard
                case .accepted(let notification, _) = try await harness.server.dispatcher.submit(request, appID: "demo")
            else { throw TestFailure("not accepted") }
            try await harness.drain()
            #expect(harness.apns.requests.isEmpty)
            #expect(try await api.notification(notification.id).string("status") == "expired")
        }
    }
}

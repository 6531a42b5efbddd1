import Foundation
import HTTPTypes
import HeraldCore
import HeraldProviderMocks
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

/// `overrides.apns_sandbox`: what SNS's `APNS_SANDBOX` key becomes natively — the APNs overrides of
/// sandbox recipients, in place of `overrides.apns`.
@Suite("APNs overrides per environment, through the send API and the mock APNs servers", .serialized)
struct APNsSandboxOverridesTests {
    @Test("Sandbox tokens take overrides.apns_sandbox, production ones overrides.apns; both must fit")
    func perEnvironment() async throws {
        let harness = try await EngineHarness(apnsSandbox: .separate)
        try await harness.run { api in
            let sandbox = try #require(harness.sandboxAPNs)
            _ = try await api.register(#"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
            _ = try await api.register(
                #"{"platform":"ios","token":"\#(Fixtures.apnsToken())","environment":"sandbox"}"#)
            let id = try await api.send(
                #"{"target":{"all":true},"payload":{"title":"Build","overrides":{"#
                    + #""apns":{"aps":{"alert":{"subtitle":"App Store"}},"herald":null},"#
                    + #""apns_sandbox":{"aps":{"alert":"development build"},"herald":null}}}}"#)
            try await harness.drain()
            #expect(
                harness.apns.requests.map(\.json)
                    == [
                        .object([
                            "aps": .object([
                                "alert": .object(["title": .string("Build"), "subtitle": .string("App Store")])
                            ])
                        ])
                    ])
            #expect(
                sandbox.requests.map(\.json) == [.object(["aps": .object(["alert": .string("development build")])])])
            #expect(
                try await api.notification(id)["payload.overrides.apns_sandbox.aps.alert"]
                    == .string("development build"))

            // Without apns_sandbox, both environments take apns.
            _ = try await api.send(
                #"{"target":{"all":true},"payload":{"body":"Both","overrides":{"apns":{"order":"7"}}}}"#)
            try await harness.drain()
            #expect(harness.apns.requests.last?.json?.objectValue?["order"] == .string("7"))
            #expect(sandbox.requests.last?.json?.objectValue?["order"] == .string("7"))

            let large = String(repeating: "x", count: 5000)
            let tooLarge = try await api.call(
                .post, "/v1/notifications",
                body:
                    #"{"target":{"all":true},"payload":{"body":"x","overrides":{"apns_sandbox":{"big":"\#(large)"}}}}"#)
            #expect(tooLarge.status == .badRequest)
            #expect(tooLarge.errorCode == "payload_too_large")
            let malformed = try await api.call(
                .post, "/v1/notifications",
                body: #"{"target":{"all":true},"payload":{"body":"x","overrides":{"apns_sandbox":"dev"}}}"#)
            #expect(malformed.status == .badRequest)
            #expect(malformed.errorField == "payload.overrides.apns_sandbox")
            #expect(sandbox.requests.count == 2)
        }
    }
}

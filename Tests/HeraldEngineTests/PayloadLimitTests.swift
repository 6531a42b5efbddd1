import Foundation
import HeraldAPNs
import HeraldCore
import HeraldFCM
import HeraldWebPush
import Testing

@testable import HeraldEngine

@Suite("Payload limits at intake: only the providers an app can deliver through")
struct PayloadLimitTests {
    /// A notification whose body no provider takes (5,000 bytes of text).
    static let tooLarge = PushNotification(
        id: "n-1", appID: "demo", target: NotificationTarget(audience: .all),
        payload: NotificationPayload(title: "Hi", body: String(repeating: "x", count: 5000)),
        createdAt: EngineFixtures.noon)

    @Test("a provider without credentials does not refuse a payload; the same check applies once configured")
    func unconfiguredProviders() throws {
        let unconfigured: [any Transport] = [
            APNsTransport(production: nil, sandbox: nil, topic: "com.example.app"), FCMTransport(client: nil),
            WebPushTransport(client: nil),
        ]
        for transport in unconfigured {
            #expect(!transport.isConfigured, "\(transport.service)")
            // The transport itself still knows its limit ...
            #expect(throws: HeraldError.self, "\(transport.service)") {
                try transport.validate(Self.tooLarge, now: EngineFixtures.noon)
            }
        }
        // ... but the app's intake does not ask it: nothing would be sent through it.
        try AppTransports(unconfigured).validate(
            Self.tooLarge, services: Set(PushService.allCases), now: EngineFixtures.noon)
    }
}

import Foundation
import HeraldCore
import Testing

@testable import HeraldEngine

/// Builders shared by the engine's unit tests.
enum EngineFixtures {
    /// 2026-03-10 12:00:00 UTC.
    static let noon = Date(timeIntervalSince1970: 1_773_144_000)

    static func notification(
        pushTime: String? = nil, expiresAt: Date? = nil, source: String? = nil, category: String? = nil,
        interruptionLevel: InterruptionLevel? = nil
    ) -> PushNotification {
        var payload = NotificationPayload(title: "Hello")
        payload.interruptionLevel = interruptionLevel
        return PushNotification(
            id: "n-1", appID: "demo", target: NotificationTarget(audience: .all), payload: payload, source: source,
            category: category, pushTime: pushTime, expiresAt: expiresAt, createdAt: noon)
    }

    static func recipient(
        _ id: String = "i-1", service: PushService = .apns, timezone: String? = nil, attempts: Int = 0
    ) -> Recipient {
        var recipient = Recipient(
            InstallationAddress(
                installationID: id, token: .device(String(repeating: "ab", count: 32)), platform: .ios,
                service: service, environment: .production, timezone: timezone, bundleID: nil))
        recipient.attempts = attempts
        return recipient
    }

    static func preferences(_ json: String) throws -> Preferences {
        try Preferences(stored: json)
    }
}

@Suite("DeliveryPlanner: send, wait or skip, without a store or a clock")
struct DeliveryPlannerTests {
    let noon = EngineFixtures.noon

    @Test("Nothing in the way: send with sound")
    func send() throws {
        let planner = try DeliveryPlanner(EngineFixtures.notification())
        #expect(
            planner.plan(for: EngineFixtures.recipient(), preferences: nil, pausedUntil: nil, now: noon)
                == .send(soundEnabled: true))
    }

    @Test("Expired before the recipient's turn, whatever else applies")
    func expired() throws {
        let planner = try DeliveryPlanner(EngineFixtures.notification(expiresAt: noon))
        let plan = planner.plan(
            for: EngineFixtures.recipient(), preferences: try EngineFixtures.preferences(#"{"muted_until":null}"#),
            pausedUntil: noon.addingTimeInterval(60), now: noon)
        #expect(plan == .expired)
    }

    @Test("A device-local push time waits in the device's zone, then sends")
    func localTime() throws {
        let planner = try DeliveryPlanner(EngineFixtures.notification(pushTime: "2026-03-10T09:00:00"))
        let tokyo = EngineFixtures.recipient(timezone: "Asia/Tokyo")
        let newYork = EngineFixtures.recipient(timezone: "America/New_York")
        // 09:00 in Tokyo was 00:00 UTC: past. 09:00 in New York (EDT from 8 March) is 13:00 UTC.
        #expect(planner.plan(for: tokyo, preferences: nil, pausedUntil: nil, now: noon) == .send(soundEnabled: true))
        #expect(
            planner.plan(for: newYork, preferences: nil, pausedUntil: nil, now: noon)
                == .wait(until: noon.addingTimeInterval(3600), .localTime))
    }

    @Test("Preferences: a disabled source skips, quiet hours defer, sound off sends silently")
    func preferences() throws {
        let planner = try DeliveryPlanner(EngineFixtures.notification(source: "cam-1", category: "person"))
        let recipient = EngineFixtures.recipient()
        #expect(
            planner.plan(
                for: recipient, preferences: try EngineFixtures.preferences(#"{"enabled_sources":["cam-2"]}"#),
                pausedUntil: nil, now: noon) == .skip(reason: PreferenceDecision.SkipReason.sourceDisabled))
        let quiet = try EngineFixtures.preferences(
            #"{"quiet_hours":{"start":"11:00","end":"13:00","timezone":"UTC"},"quiet_hours_mode":"defer"}"#)
        #expect(
            planner.plan(for: recipient, preferences: quiet, pausedUntil: nil, now: noon)
                == .wait(until: noon.addingTimeInterval(3600), .quietHours))
        #expect(
            planner.plan(
                for: recipient, preferences: try EngineFixtures.preferences(#"{"sound_enabled":false}"#),
                pausedUntil: nil, now: noon) == .send(soundEnabled: false))
    }

    @Test("Critical notifications go through quiet hours; a paused provider makes them wait all the same")
    func criticalAndPaused() throws {
        let planner = try DeliveryPlanner(EngineFixtures.notification(interruptionLevel: .critical))
        let quiet = try EngineFixtures.preferences(#"{"quiet_hours":{"start":"11:00","end":"13:00","timezone":"UTC"}}"#)
        let recipient = EngineFixtures.recipient()
        #expect(
            planner.plan(for: recipient, preferences: quiet, pausedUntil: nil, now: noon) == .send(soundEnabled: true))
        let resume = noon.addingTimeInterval(30)
        #expect(
            planner.plan(for: recipient, preferences: quiet, pausedUntil: resume, now: noon)
                == .wait(until: resume, .providerPaused))
    }
}

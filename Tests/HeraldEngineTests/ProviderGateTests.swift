import Foundation
import HeraldCore
import Testing

@testable import HeraldEngine

/// The provider gate's pauses and probes, on a given clock: no store, no socket.
@Suite("Provider gate")
struct ProviderGateTests {
    let now = EngineFixtures.noon
    let base = Duration.seconds(1)

    func admission(
        _ gate: ProviderGate, at offset: TimeInterval, probe: ProviderGate.Probe, scope: String = ""
    ) -> ProviderGate.Admission {
        gate.admission(
            appID: "demo", service: .apns, scope: scope, now: now.addingTimeInterval(offset), probe: probe, base: base)
    }

    @Test("A provider never left unanswered is open to every batch")
    func open() {
        let gate = ProviderGate()
        #expect(admission(gate, at: 0, probe: .never) == .open)
        #expect(admission(gate, at: 0, probe: .allowed) == .open)
    }

    @Test("An unreachable provider is paused, base doubled with each batch in a row it left unanswered")
    func pausesDouble() {
        let gate = ProviderGate()
        for streak in 1...3 {
            let until = gate.unreachable(appID: "demo", service: .apns, now: now, base: base, cap: .seconds(30))
            #expect(until == now.addingTimeInterval(pow(2, Double(streak - 1))))
        }
        #expect(admission(gate, at: 3, probe: .allowed) == .paused(until: now.addingTimeInterval(4)))
        #expect(
            gate.admission(appID: "demo", service: .fcm, now: now.addingTimeInterval(3), probe: .never, base: base)
                == .open, "the other providers go on")
    }

    @Test("When the pause ends, one retry batch probes; a pipeline batch and the other retries wait one more base")
    func oneProbe() {
        let gate = ProviderGate()
        _ = gate.unreachable(appID: "demo", service: .apns, now: now, base: base, cap: .seconds(30))
        let later = now.addingTimeInterval(2)
        #expect(admission(gate, at: 2, probe: .never) == .paused(until: later.addingTimeInterval(1)))
        #expect(admission(gate, at: 2, probe: .allowed) == .probe(scope: ""))
        #expect(admission(gate, at: 2, probe: .allowed) == .paused(until: later.addingTimeInterval(1)))
        #expect(admission(gate, at: 2, probe: .never) == .paused(until: later.addingTimeInterval(1)))
    }

    @Test("A probe answered opens the provider; one unanswered pauses it longer; one that failed first frees the next")
    func probeEnds() {
        let gate = ProviderGate()
        _ = gate.unreachable(appID: "demo", service: .apns, now: now, base: base, cap: .seconds(30))
        #expect(admission(gate, at: 2, probe: .allowed) == .probe(scope: ""))
        gate.endProbe(appID: "demo", service: .apns, scope: "")
        #expect(admission(gate, at: 2, probe: .allowed) == .probe(scope: ""))
        let until = gate.unreachable(
            appID: "demo", service: .apns, now: now.addingTimeInterval(2), base: base, cap: .seconds(30))
        #expect(until == now.addingTimeInterval(4))
        #expect(admission(gate, at: 3, probe: .allowed) == .paused(until: until))
        #expect(admission(gate, at: 5, probe: .allowed) == .probe(scope: ""))
        gate.answered(appID: "demo", service: .apns)
        #expect(admission(gate, at: 5, probe: .never) == .open)
        #expect(admission(gate, at: 5, probe: .allowed) == .open)
    }

    @Test("A Web Push service left unanswered is probed alone: the app's other push services stay open")
    func webPushScope() {
        let gate = ProviderGate()
        let mozilla = "https://updates.push.services.mozilla.com"
        _ = gate.unreachable(
            appID: "demo", service: .webpush, scope: mozilla, now: now, base: base, cap: .seconds(30))
        func admission(_ scope: String, probe: ProviderGate.Probe) -> ProviderGate.Admission {
            gate.admission(
                appID: "demo", service: .webpush, scope: scope, now: now.addingTimeInterval(2), probe: probe,
                base: base)
        }
        #expect(admission("https://fcm.googleapis.com", probe: .never) == .open)
        #expect(admission(mozilla, probe: .allowed) == .probe(scope: mozilla))
        #expect(admission("https://fcm.googleapis.com", probe: .allowed) == .open)
        #expect(admission(mozilla, probe: .allowed) == .paused(until: now.addingTimeInterval(3)))
    }
}

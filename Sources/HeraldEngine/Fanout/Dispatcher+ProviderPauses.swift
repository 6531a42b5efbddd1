import Foundation
import HeraldCore
import Logging

// Provider pauses: the providers' answers that pause a provider for every sender.
extension Dispatcher {
    /// Records the providers' answers, pausing a provider that asked every sender to slow down, or
    /// that answered none of the batch's pushes (see ``EngineConfiguration/unreachablePause``).
    /// - Returns: The pauses that are new on this node, for the store (and so the other nodes).
    func record(
        _ results: [TransportResult], of pushes: [OutgoingPush], recorder: OutcomeRecorder,
        into commit: inout PageCommit, now: Date
    ) -> [(service: PushService, until: Date)] {
        let appID = recorder.notification.appID
        var pauses: [(service: PushService, until: Date)] = []
        var answered: Set<PushService> = []
        var unanswered: Set<PushService> = []
        for (push, result) in zip(pushes, results) {
            if let pause = recorder.record(result, of: push.recipient, into: &commit, now: now),
                gate.pause(appID: appID, service: pause.service, until: pause.until)
            {
                pauses.append((pause.service, pause.until))
            }
            if result.unreachable {
                unanswered.insert(push.recipient.service)
            } else if case .configurationFailure = result.outcome {
                continue  // Nothing was asked of the provider.
            } else {
                answered.insert(push.recipient.service)
            }
        }
        for service in answered { gate.answered(appID: appID, service: service) }
        for service in unanswered.subtracting(answered) {
            let until = gate.unreachable(
                appID: appID, service: service, now: now, base: configuration.unreachablePause.base,
                cap: configuration.unreachablePause.cap)
            pauses.append((service, until))
            logger.warning(
                "provider unreachable: its deliveries wait",
                metadata: [
                    "herald.app": "\(appID)", "herald.service": "\(service.rawValue)",
                    "herald.until": "\(until.formatted(.iso8601))",
                ])
        }
        return pauses
    }
}

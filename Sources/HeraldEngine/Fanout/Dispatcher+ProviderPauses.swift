import Foundation
import HeraldCore
import Logging

// Provider pauses: the providers' answers that pause a provider for every sender.
extension Dispatcher {
    /// What an unreachable pause holds back: a provider, or one Web Push service (its origin).
    struct PauseTarget: Hashable {
        var service: PushService
        var scope: String

        init(_ recipient: Recipient) {
            service = recipient.service
            scope = recipient.service == .webpush ? recipient.token.pauseScope : ""
        }
    }

    /// Records the providers' answers, pausing a provider that asked every sender to slow down, or
    /// that answered none of the batch's pushes (see ``EngineConfiguration/unreachablePause``); for
    /// Web Push, the push service (origin) that answered none of its pushes, and only it.
    /// - Returns: The pauses that are new on this node, for the store (and so the other nodes).
    func record(
        _ results: [TransportResult], of pushes: [OutgoingPush], recorder: OutcomeRecorder,
        into commit: inout PageCommit, now: Date
    ) -> [ProviderPause] {
        let appID = recorder.notification.appID
        var pauses: [ProviderPause] = []
        var answered: Set<PauseTarget> = []
        var unanswered: Set<PauseTarget> = []
        for (push, result) in zip(pushes, results) {
            if let pause = recorder.record(result, of: push.recipient, into: &commit, now: now),
                gate.pause(appID: appID, service: pause.service, until: pause.until)
            {
                pauses.append(ProviderPause(appID: appID, service: pause.service, until: pause.until))
            }
            if result.unreachable {
                unanswered.insert(PauseTarget(push.recipient))
            } else if case .configurationFailure = result.outcome {
                continue  // Nothing was asked of the provider.
            } else {
                answered.insert(PauseTarget(push.recipient))
            }
        }
        for target in answered { gate.answered(appID: appID, service: target.service, scope: target.scope) }
        for target in unanswered.subtracting(answered) {
            let until = gate.unreachable(
                appID: appID, service: target.service, scope: target.scope, now: now,
                base: configuration.unreachablePause.base, cap: configuration.unreachablePause.cap)
            pauses.append(ProviderPause(appID: appID, service: target.service, scope: target.scope, until: until))
            var metadata: Logger.Metadata = [
                "herald.app": "\(appID)", "herald.service": "\(target.service.rawValue)",
                "herald.until": "\(until.formatted(.iso8601))",
            ]
            if !target.scope.isEmpty { metadata["herald.push_service"] = "\(target.scope)" }
            logger.warning("provider unreachable: its deliveries wait", metadata: metadata)
        }
        return pauses
    }
}

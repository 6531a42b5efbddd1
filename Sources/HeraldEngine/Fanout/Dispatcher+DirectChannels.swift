import Foundation
import HeraldCore

// The direct channel inside a page: pushes to connected devices, and what their outcomes record.
extension Dispatcher {
    /// Sends each push over its device's direct channel, all at once.
    /// - Parameter holders: The nodes holding channels elsewhere, as the caller read them.
    func sendOverChannels(
        _ pushes: [OutgoingPush], of notification: PushNotification, holders: [String: String]
    ) async -> [DirectChannels.Outcome] {
        await withTaskGroup(of: (Int, DirectChannels.Outcome).self) { group in
            for (index, push) in pushes.enumerated() {
                guard let installationID = push.recipient.installationID else { continue }
                let event = ChannelEvent.render(notification, badge: push.badge)
                let holder = holders[installationID]
                group.addTask { (index, await self.channels.deliver(event, to: installationID, holder: holder)) }
            }
            var outcomes = [DirectChannels.Outcome](repeating: .notConnected, count: pushes.count)
            for await (index, outcome) in group { outcomes[index] = outcome }
            return outcomes
        }
    }

    /// Records what the direct channels did: delivered, or fell back (a ledger row) to the cloud
    /// route — returned, to be sent once — or, for a device with no cloud route, to waiting for
    /// it to connect, until the notification expires (or waited ``EngineConfiguration/channelMaxWait``).
    func record(
        _ outcomes: [DirectChannels.Outcome], of pushes: [OutgoingPush], notification: PushNotification,
        into commit: inout PageCommit, now: Date
    ) -> [OutgoingPush] {
        let recorder = outcomeRecorder(for: notification)
        defer { recorder.tally.emit(appID: notification.appID) }
        var fallbacks: [OutgoingPush] = []
        for (push, outcome) in zip(pushes, outcomes) {
            var viaChannel = push.recipient
            viaChannel.service = .direct
            switch outcome {
            case .delivered(let confirmed):
                _ = recorder.record(
                    TransportResult(.delivered(providerID: confirmed ? "direct:confirmed" : "direct")), of: viaChannel,
                    into: &commit, now: now)
                continue
            case .fellBack(let reason):
                commit.ledger.append(
                    recorder.record(
                        viaChannel, .fellBack, reason: reason, attempts: push.recipient.attempts + 1, at: now))
            case .notConnected: break
            }
            guard push.recipient.service == .direct else {
                fallbacks.append(push)
                continue
            }
            let giveUp =
                notification.expiresAt
                ?? notification.createdAt.addingTimeInterval(
                    configuration.channelMaxWait.timeInterval)
            if now >= giveUp {
                commit.counts.skippedExpired += 1
                commit.ledger.append(
                    recorder.record(viaChannel, .expired, reason: "the device did not connect in time", at: now))
            } else {
                let recheck = now.addingTimeInterval(configuration.channelRecheck.timeInterval)
                commit.pending.append(recorder.wait(push.recipient, until: min(giveUp, recheck), .offline))
            }
        }
        return fallbacks
    }
}

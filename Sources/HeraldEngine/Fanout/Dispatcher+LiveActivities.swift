import Foundation
import HeraldCore

// A Live Activity push's part of sending a page (docs/live-activities.md): each installation's
// claim on the revision (``LiveActivityClaimRule``), its activity or push-to-start token standing in
// for its device token, and the tokens a provider refused dropped alone.
extension Dispatcher {
    /// The store's Live Activity records, when it keeps them (both SQL stores do; `MemoryStore` not).
    var liveActivityStore: (any LiveActivityStore)? { store as? any LiveActivityStore }

    /// How long a claim holds an installation for a revision's sends before another revision may
    /// go: the lease, after which a dead node's sends are over.
    var liveActivityClaim: TimeInterval { configuration.lease.timeInterval }

    /// The longest a later revision waits before it looks again at an earlier one's claim.
    static let liveActivityRecheck: TimeInterval = 1

    /// Claims the revision for the page's recipients and gives each its activity token: returns
    /// those to send; records the others (superseded, no token, waiting for an earlier revision, or
    /// a service that carries no Live Activities) in `commit`.
    func claimLiveActivity(
        _ recipients: [Recipient], _ live: LiveActivityPush, of notification: PushNotification,
        into commit: inout PageCommit, now: Date
    ) async throws -> (send: [Recipient], claimed: [String]) {
        let recorder = outcomeRecorder(for: notification)
        defer { recorder.tally.emit(appID: notification.appID) }
        guard live.channel == nil else { return (recipients, []) }
        var candidates: [Recipient] = []
        for recipient in recipients {
            if recipient.installationID == nil || recipient.service == .webpush {
                recorder.record(.skip(reason: "live_activity_unsupported"), of: recipient, into: &commit, now: now)
            } else {
                candidates.append(recipient)
            }
        }
        guard let store = liveActivityStore else {
            for recipient in candidates {
                recorder.record(.skip(reason: "live_activity_unsupported"), of: recipient, into: &commit, now: now)
            }
            return ([], [])
        }
        let ids = candidates.compactMap(\.installationID)
        var services: [String: PushService] = [:]
        for recipient in candidates { services[recipient.key] = recipient.service }
        let claims = try await store.claimLiveActivitySends(
            appID: notification.appID, activityID: live.activityID, attributesType: live.attributesType,
            revision: live.revision, start: live.event == .start, installationIDs: ids, services: services, now: now,
            until: now.addingTimeInterval(liveActivityClaim))
        var send: [Recipient] = []
        var claimed: [String] = []
        for var recipient in candidates {
            switch claims[recipient.key] ?? .noToken {
            case .send(let token):
                claimed.append(recipient.key)
                if let token {
                    recipient.token = .device(token)
                    recipient.activityToken = true
                }
                send.append(recipient)
            case .superseded:
                recorder.record(.skip(reason: "superseded"), of: recipient, into: &commit, now: now)
            case .busy(let until):
                let wait = min(until, now.addingTimeInterval(Self.liveActivityRecheck))
                recorder.record(.wait(until: wait, .ordering), of: recipient, into: &commit, now: now)
            case .noToken:
                let reason = live.event == .start ? "no_push_to_start_token" : "no_activity_token"
                recorder.record(.skip(reason: reason), of: recipient, into: &commit, now: now)
            }
        }
        return (send, claimed)
    }

    /// Ends the page's claims once its sends are answered, and drops the activity tokens the
    /// provider refused (the installation's own token is untouched).
    func settleLiveActivity(
        _ live: LiveActivityPush, of notification: PushNotification, claimed: [String],
        results: [(Recipient, TransportResult)]
    ) async throws {
        guard let store = liveActivityStore else { return }
        var drops: [LiveActivityTokenDrop] = []
        for (recipient, result) in results where recipient.activityToken {
            switch result.outcome {
            case .invalidToken, .rejectedToken:
                guard let id = recipient.installationID else { continue }
                drops.append(
                    LiveActivityTokenDrop(
                        installationID: id, activityID: live.event == .start ? nil : live.activityID,
                        attributesType: live.attributesType))
            default: break
            }
        }
        try await store.dropLiveActivityTokens(drops)
        try await store.releaseLiveActivitySends(
            appID: notification.appID, activityID: live.activityID, revision: live.revision, installationIDs: claimed)
    }
}

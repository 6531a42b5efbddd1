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

    /// What a page of `notification` claims for its recipients: the revision of its Live Activity
    /// or of the updatable notification it belongs to (docs/content.md, "Updating and deleting");
    /// nil for any other notification, and for a broadcast channel's push (APNs orders those).
    func revisionClaim(of notification: PushNotification) -> RevisionClaim? {
        if let live = notification.liveActivity {
            guard live.channel == nil else { return nil }
            return RevisionClaim(
                counterID: live.activityID, attributesType: live.attributesType, revision: live.revision,
                tokens: live.event == .start ? .pushToStart : .activity, liveActivity: live)
        }
        guard let revision = notification.revision else { return nil }
        let toMembers = notification.target.audience == .liveActivity(revision.counterID)
        return RevisionClaim(
            counterID: revision.counterID, attributesType: "", revision: revision.number,
            tokens: .installation(joining: !toMembers), liveActivity: nil)
    }

    /// Claims the revision for the page's recipients and gives each its token: returns those to
    /// send; records the others (superseded, no token, waiting for an earlier revision, or a
    /// service that carries no Live Activities) in `commit`. A raw token of an updatable
    /// notification goes unclaimed: it is no installation, so no later revision reaches it.
    func claimRevision(
        _ recipients: [Recipient], _ claim: RevisionClaim, of notification: PushNotification,
        into commit: inout PageCommit, now: Date
    ) async throws -> (send: [Recipient], claimed: [String]) {
        let recorder = outcomeRecorder(for: notification)
        defer { recorder.tally.emit(appID: notification.appID) }
        var candidates: [Recipient] = []
        var unclaimed: [Recipient] = []
        for recipient in recipients {
            if claim.liveActivity == nil, recipient.installationID == nil {
                unclaimed.append(recipient)
            } else if recipient.installationID == nil || (claim.liveActivity != nil && recipient.service == .webpush) {
                recorder.record(.skip(reason: "live_activity_unsupported"), of: recipient, into: &commit, now: now)
            } else {
                candidates.append(recipient)
            }
        }
        guard let store = liveActivityStore else {
            if claim.liveActivity == nil { return (recipients, []) }
            for recipient in candidates {
                recorder.record(.skip(reason: "live_activity_unsupported"), of: recipient, into: &commit, now: now)
            }
            return ([], [])
        }
        let ids = candidates.compactMap(\.installationID)
        var services: [String: PushService] = [:]
        for recipient in candidates { services[recipient.key] = recipient.service }
        let claims = try await store.claimLiveActivitySends(
            appID: notification.appID, activityID: claim.counterID, attributesType: claim.attributesType,
            revision: claim.revision, tokens: claim.tokens, installationIDs: ids, services: services, now: now,
            until: now.addingTimeInterval(liveActivityClaim))
        var send = unclaimed
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
                let reason =
                    switch claim.tokens {
                    case .pushToStart: "no_push_to_start_token"
                    case .activity: "no_activity_token"
                    case .installation: "not_a_recipient"
                    }
                recorder.record(.skip(reason: reason), of: recipient, into: &commit, now: now)
            }
        }
        return (send, claimed)
    }

    /// Ends the page's claims once its sends are answered, and drops the activity tokens the
    /// provider refused (the installation's own token is untouched).
    func settleRevision(
        _ claim: RevisionClaim, of notification: PushNotification, claimed: [String],
        results: [(Recipient, TransportResult)]
    ) async throws {
        guard let store = liveActivityStore else { return }
        if let live = claim.liveActivity {
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
        }
        try await store.releaseLiveActivitySends(
            appID: notification.appID, activityID: claim.counterID, revision: claim.revision, installationIDs: claimed)
    }
}

/// One revision a page claims for its recipients (``Dispatcher/revisionClaim(of:)``).
struct RevisionClaim: Sendable {
    /// The record counting the revisions: the activity, or the updatable notification's counter.
    var counterID: String
    var attributesType: String
    var revision: Int
    var tokens: LiveActivityClaimTokens
    /// The Live Activity push, when it is one.
    var liveActivity: LiveActivityPush?
}

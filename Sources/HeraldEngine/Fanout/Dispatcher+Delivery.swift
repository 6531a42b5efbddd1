import Foundation
import HeraldCore
import Logging

// Sending one page: what each recipient is due (expiry, local time, preferences, provider
// pauses), badges, and the sends, with every outcome recorded in the page's commit.
extension Dispatcher {
    /// Applies expiry, local push time, preferences and provider pauses, sends what is left, and
    /// records every outcome in `commit`.
    /// - Parameters:
    ///   - preferences: the recipients' stored preferences when the caller read them; nil reads them here.
    ///   - probe: Whether the batch may try a provider left unanswered whose pause has ended
    ///     (``ProviderGate/Probe``): not a batch of a fan-out's pipeline.
    func deliver(
        _ recipients: [Recipient], of notification: PushNotification, preferences: [String: Preferences]? = nil,
        probe: ProviderGate.Probe = .allowed, into commit: inout PageCommit
    )
        async throws
    {
        let now = self.now()
        try await gate.refresh(from: store, now: now)
        let planner = try DeliveryPlanner(notification)
        let recorder = outcomeRecorder(for: notification)
        defer { recorder.tally.emit(appID: notification.appID) }
        var recipients = await recordSettlements(recipients, of: notification, into: &commit, now: now)
        var claimed: [String] = []
        let claim = revisionClaim(of: notification)
        if let claim {
            (recipients, claimed) = try await claimRevision(
                recipients, claim, of: notification, into: &commit, now: now)
        }
        var stored = preferences ?? [:]
        if preferences == nil, notification.respectPreferences {
            stored = try await store.preferences(installationIDs: recipients.compactMap(\.installationID))
        }
        // One admission per provider (a Web Push service) for the whole batch: a probe is the batch's.
        var admissions: [PauseTarget: ProviderGate.Admission] = [:]
        defer {
            for case (let target, .probe(let scope)) in admissions {
                gate.endProbe(appID: notification.appID, service: target.service, scope: scope)
            }
        }
        var outgoing: [OutgoingPush] = []
        for recipient in recipients {
            let pause = PauseTarget(recipient)
            let admission =
                admissions[pause]
                ?? gate.admission(
                    appID: notification.appID, service: pause.service, scope: pause.scope, now: now, probe: probe,
                    base: configuration.unreachablePause.base)
            admissions[pause] = admission
            let plan = planner.plan(
                for: recipient, preferences: recipient.installationID.flatMap { stored[$0] },
                pausedUntil: admission.pausedUntil, now: now)
            guard case .send(let soundEnabled) = plan else {
                recorder.record(plan, of: recipient, into: &commit, now: now)
                continue
            }
            outgoing.append(OutgoingPush(recipient: recipient, badge: nil, soundEnabled: soundEnabled))
        }
        guard !outgoing.isEmpty else {
            if let claim { try await settleRevision(claim, of: notification, claimed: claimed, results: []) }
            return
        }

        switch notification.payload.badge {
        case .set(let value)?:
            for index in outgoing.indices { outgoing[index].badge = value }
        case .increment?:
            // Each installation counts a notification once, on its first attempt: a retry sends the
            // badge that attempt stored.
            let first = outgoing.filter { $0.recipient.countedBadge == nil }.compactMap(\.recipient.installationID)
            let badges = first.isEmpty ? [:] : try await store.incrementBadges(installationIDs: first, now: now)
            for index in outgoing.indices {
                let recipient = outgoing[index].recipient
                outgoing[index].badge = recipient.countedBadge ?? recipient.installationID.flatMap { badges[$0] } ?? 1
            }
        case nil: break
        }

        // Devices with a direct channel open — on this node or another — (and direct-only ones) are
        // offered to it first, while the rest go to their providers.
        let (sent, results) = try await sendLocalized(outgoing, of: notification, into: &commit, now: now)
        if let claim {
            try await settleRevision(
                claim, of: notification, claimed: claimed, results: Array(zip(sent.map(\.recipient), results)))
        }
        for pause in record(results, of: sent, recorder: recorder, into: &commit, now: now) {
            do {
                try await store.pauseProvider(
                    appID: pause.appID, service: pause.service, scope: pause.scope, until: pause.until)
            } catch {
                logger.warning(
                    "provider pause not shared",
                    metadata: ["herald.service": "\(pause.service.rawValue)", "error": "\(error)"])
            }
        }
    }

    /// The recorder of a notification's outcomes, with the engine's retry and failure rules.
    func outcomeRecorder(for notification: PushNotification) -> OutcomeRecorder {
        OutcomeRecorder(
            notification: notification, retryPolicy: configuration.retryPolicy, maxFailures: configuration.maxFailures,
            rejectedTokens: configuration.rejectedTokens[notification.appID] ?? .invalidate,
            logsSuccesses: logsSuccesses(appID: notification.appID), random: { Double.random(in: $0) })
    }
}

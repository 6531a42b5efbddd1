import Foundation
import HeraldCore
import Logging
import Synchronization

// The direct channel inside a page: what its results record, and how confirming deliveries settle.
extension Dispatcher {
    /// Offers the pushes the direct channel takes first (``DirectTransport/route(_:now:)``) to it,
    /// while the rest go to their providers, and records what the channel did; what it handed back
    /// goes to the cloud routes once.
    /// - Returns: The pushes sent to providers and their results, in order.
    func sendWithChannels(
        _ outgoing: [OutgoingPush], of notification: PushNotification, into commit: inout PageCommit, now: Date
    ) async -> (sent: [OutgoingPush], results: [TransportResult]) {
        let cloudRoutes = transports(of: notification.appID)
        // A Live Activity's own token goes to APNs, whatever channel its device holds open.
        if outgoing.contains(where: \.recipient.activityToken) {
            let viaTokens = outgoing.filter(\.recipient.activityToken)
            async let tokenResults = cloudRoutes.send(viaTokens, of: notification, now: now)
            let (sent, results) = await sendWithChannels(
                outgoing.filter { !$0.recipient.activityToken }, of: notification, into: &commit, now: now)
            return (viaTokens + sent, await tokenResults + results)
        }
        let channelOnly = notification.waitsForChannel ? cloudRoutes.tooSmall(for: notification, now: now) : []
        guard let (viaChannel, holders) = await direct.route(outgoing, channelOnly: channelOnly, now: now) else {
            return (outgoing, await cloudRoutes.send(outgoing, of: notification, now: now))
        }
        let pushes = zip(outgoing, viaChannel).filter(\.1).map(\.0)
        var sent = zip(outgoing, viaChannel).filter { !$0.1 }.map(\.0)
        let keys = pushes.map { ChannelSettlements.Key(notificationID: notification.id, recipient: $0.recipient.key) }
        settlements.withLock { $0.expect(keys) }
        // The channel sends run while the cloud ones do.
        async let channelResults = direct.send(pushes, of: notification, holders: holders)
        var results = await cloudRoutes.send(sent, of: notification, now: now)
        let fallbacks = recordChannel(
            await channelResults, of: pushes, notification: notification, channelOnly: channelOnly, into: &commit,
            now: now)
        // Only those recorded as confirming stay expected, until their page commits.
        let confirming = Set(commit.pending.filter { $0.reason == .confirming }.map(\.recipient))
        settlements.withLock { $0.written(keys, confirming: confirming) }
        if !fallbacks.isEmpty {
            sent += fallbacks
            results += await cloudRoutes.send(fallbacks, of: notification, now: now)
        }
        return (sent, results)
    }

    /// Records what the direct channel did: delivered; waiting for the device's confirmation
    /// (pending `confirming` until just after the window); or fell back (a ledger row) to the cloud
    /// route — returned, to be sent once — or, for a device with no cloud route, to waiting for it
    /// to connect, until the notification expires (or waited ``EngineConfiguration/channelMaxWait``).
    /// - Parameter channelOnly: The services whose route is too small for the notification: their
    ///   pushes wait for the channel as a direct-only device's do.
    func recordChannel(
        _ results: [TransportResult], of pushes: [OutgoingPush], notification: PushNotification,
        channelOnly: Set<PushService>, into commit: inout PageCommit, now: Date
    ) -> [OutgoingPush] {
        let recorder = outcomeRecorder(for: notification)
        defer { recorder.tally.emit(appID: notification.appID) }
        var fallbacks: [OutgoingPush] = []
        for (push, result) in zip(pushes, results) {
            var viaChannel = push.recipient
            viaChannel.service = .direct
            switch result.handback {
            case nil:
                _ = recorder.record(result, of: viaChannel, into: &commit, now: now)
            case .confirming(let until):
                // Settled by the confirmation, the window's end or the close; the margin lets a
                // settlement relayed from another node arrive before the job looks again.
                commit.pending.append(
                    recorder.wait(push.recipient, until: until.addingTimeInterval(Self.settlementMargin), .confirming))
            case .fellBack(let reason):
                if let reason {
                    commit.ledger.append(
                        recorder.record(
                            viaChannel, .fellBack, reason: reason, attempts: push.recipient.attempts + 1, at: now))
                }
                if let fallback = waitForChannel(
                    push, of: notification, channelOnly: channelOnly, recorder: recorder, into: &commit, now: now)
                {
                    fallbacks.append(fallback)
                }
            }
        }
        return fallbacks
    }

    /// How long after a confirm window's end a delivery still waiting for it is looked at again.
    static var settlementMargin: TimeInterval { 1 }

    /// A push the channel did not take: returned for its cloud route, or — a direct-only device, or
    /// one whose cloud route is too small for it — recorded as waiting for its channel (nil).
    private func waitForChannel(
        _ push: OutgoingPush, of notification: PushNotification, channelOnly: Set<PushService>,
        recorder: OutcomeRecorder, into commit: inout PageCommit, now: Date
    ) -> OutgoingPush? {
        guard push.recipient.service == .direct || channelOnly.contains(push.recipient.service) else { return push }
        let giveUp =
            notification.expiresAt
            ?? notification.createdAt.addingTimeInterval(configuration.channelMaxWait.timeInterval)
        if now >= giveUp {
            commit.counts.skippedExpired += 1
            var viaChannel = push.recipient
            viaChannel.service = .direct
            commit.ledger.append(
                recorder.record(viaChannel, .expired, reason: "the device did not connect in time", at: now))
        } else {
            let recheck = now.addingTimeInterval(configuration.channelRecheck.timeInterval)
            commit.pending.append(recorder.wait(push.recipient, until: min(giveUp, recheck), .offline))
        }
        return nil
    }

    /// Records the deliveries that waited for a channel's confirmation and settled (or whose window
    /// passed): delivered when confirmed; otherwise a `fell_back` row, and they go on to their
    /// cloud route (returned, with the rest).
    func recordSettlements(
        _ recipients: [Recipient], of notification: PushNotification, into commit: inout PageCommit, now: Date
    ) async -> [Recipient] {
        guard recipients.contains(where: { $0.channelSettlement != nil }) else { return recipients }
        if recipients.contains(where: { $0.channelSettlement == .confirming }) {
            // Past its window with no word: the channel that missed it is torn down first.
            await channels.expireMissed()
        }
        let recorder = outcomeRecorder(for: notification)
        defer { recorder.tally.emit(appID: notification.appID) }
        var rest: [Recipient] = []
        for recipient in recipients {
            guard let settlement = recipient.channelSettlement else {
                rest.append(recipient)
                continue
            }
            var viaChannel = recipient
            viaChannel.service = .direct
            if settlement == .confirmed {
                _ = recorder.record(
                    TransportResult(.delivered(providerID: "direct:confirmed")), of: viaChannel, into: &commit, now: now
                )
                continue
            }
            commit.ledger.append(
                recorder.record(
                    viaChannel, .fellBack, reason: channels.fallbackReason(settlement),
                    attempts: recipient.attempts + 1, at: now))
            rest.append(recipient)
        }
        return rest
    }

    /// A confirming delivery settled (``DirectChannels/onSettle(_:)``): its pending row takes the
    /// settlement and is due now — at once, or, when its page has not committed yet, once it has.
    func settle(notificationID: String, installationID: String, as reason: PendingDelivery.Reason) async {
        let key = ChannelSettlements.Key(notificationID: notificationID, recipient: installationID)
        guard !settlements.withLock({ $0.keep(reason, for: key) }) else { return }
        do {
            if try await store.settleConfirming(
                notificationID: notificationID, recipient: installationID, as: reason, now: now())
            {
                wake()
            }
        } catch {
            logger.warning(
                "channel confirmation not recorded; the delivery falls back after its window",
                metadata: ["herald.notification": "\(notificationID)", "error": "\(error)"])
        }
    }

    /// Commits a page, then applies the settlements that came for its `confirming` deliveries
    /// before it was committed, wakes its `offline` deliveries whose device connected meanwhile, and
    /// tells the observer of the notification's source (``observeCommits(source:_:)``).
    func commitPage(_ page: PageCommit, of notification: PushNotification) async throws -> Bool {
        let confirming = page.pending.filter { $0.reason == .confirming }
        guard !confirming.isEmpty else {
            let committed = try await store.commit(page)
            if committed {
                await wakeConnected(page)
                await self.committed(page, of: notification)
            }
            return committed
        }
        let committed: Bool
        do {
            committed = try await store.commit(page)
        } catch {
            await applyEarlySettlements(confirming)
            throw error
        }
        await applyEarlySettlements(confirming)
        if committed {
            await wakeConnected(page)
            await self.committed(page, of: notification)
        }
        return committed
    }

    /// Wakes the page's deliveries left waiting for a device's channel (`offline`) when the device
    /// has connected since the page found it away. A channel wakes what waits for it when it opens
    /// (``init(store:transports:configuration:logger:now:clock:channels:)``), but one that opened
    /// while the page was being sent found nothing committed to wake; the channel is open (here or,
    /// with a relay, held elsewhere) before that wake runs, so the page, committed, sees it here.
    private func wakeConnected(_ page: PageCommit) async {
        let offline = page.pending.filter { $0.reason == .offline }.map(\.recipient)
        guard !offline.isEmpty else { return }
        let now = now()
        let away = offline.filter { !channels.isOpen($0) }
        let held = await channels.remoteHolders(of: away, now: now)
        var woken = 0
        for recipient in offline where channels.isOpen(recipient) || held[recipient] != nil {
            do {
                woken += try await store.wakeOfflineDeliveries(recipient: recipient, now: now)
            } catch {
                logger.warning(
                    "waiting deliveries not woken", metadata: ["herald.installation": "\(recipient)"])
            }
        }
        if woken > 0 { wake() }
    }

    private func applyEarlySettlements(_ confirming: [PendingDelivery]) async {
        for (key, reason) in settlements.withLock({ $0.pageDone(confirming) }) {
            await settle(notificationID: key.notificationID, installationID: key.recipient, as: reason)
        }
    }
}

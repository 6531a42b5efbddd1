import Foundation
import HeraldCore

// The pages of a target: the batches the fan-out sends, and the recipients of pending deliveries.
extension Dispatcher {
    /// Where the range of ``EngineConfiguration/rangeSize`` recipients after `after` ends (for
    /// everyone, of the app's installations); nil when the rest is smaller.
    func rangeBoundary(of notification: PushNotification, after: String?) async throws -> String? {
        try await store.rangeBoundary(
            pageTarget(of: notification).target, appID: notification.appID, after: after,
            skip: configuration.rangeSize)
    }

    /// A batch of the target to send: its recipients, its last key and, when the notification
    /// respects preferences, their stored preferences (read with it, so the batch can go out at once).
    struct Batch: Sendable {
        var recipients: [Recipient] = []
        var last: String?
        var preferences: [String: Preferences]?
        /// Whether the target has nothing after this batch.
        var exhausted = true
    }

    /// The batch after a key (nil: from the start) up to `through` (a range's end; nil: the
    /// target's), or an empty one when it is exhausted.
    func readBatch(
        of notification: PushNotification, after key: String?, through: String? = nil, exhausted: Bool = false
    ) async throws -> Batch {
        guard !exhausted else { return Batch() }
        let page = try await nextPage(of: notification, after: key, through: through)
        let preferences =
            notification.respectPreferences
            ? try await store.preferences(installationIDs: page.recipients.compactMap(\.installationID)) : [:]
        return Batch(recipients: page.recipients, last: page.last, preferences: preferences, exhausted: page.exhausted)
    }

    /// The next page of the target after the cursor, the page's last key (nil: the target is
    /// exhausted), and whether the target ends with this page.
    func nextPage(
        of notification: PushNotification, after cursor: String?, through: String? = nil
    ) async throws -> (recipients: [Recipient], last: String?, exhausted: Bool) {
        if let page = tokenPage(of: notification, after: cursor) { return page }
        let (target, broadcast) = pageTarget(of: notification)
        var page = try await store.resolve(
            target, appID: notification.appID, after: cursor, through: through, limit: configuration.batchSize
        ).map { Recipient($0).routed(by: notification.target) }
        // Keyset pages: a short one is the last.
        let exhausted = page.count < configuration.batchSize
        if cursor == nil, let broadcast { page.insert(broadcast, at: 0) }
        return (page, page.last?.key, exhausted)
    }

    /// The target the store resolves pages of, and the broadcast route's recipient: a broadcast
    /// route takes its service's installations in one send, first (on the first page).
    func pageTarget(of notification: PushNotification) -> (target: NotificationTarget, broadcast: Recipient?) {
        var target = notification.target
        let broadcast = transports(of: notification.appID).broadcastRecipient(for: notification)
        if let broadcast {
            target.services = (target.services ?? Set(PushService.allCases)).subtracting([broadcast.service])
        }
        return (target, broadcast)
    }

    /// The next page of a target of raw tokens (nil for a target of installations): read from the
    /// notification itself, no store.
    func tokenPage(
        of notification: PushNotification, after cursor: String?
    ) -> (recipients: [Recipient], last: String?, exhausted: Bool)? {
        guard case .tokens(let tokens) = notification.target.audience else { return nil }
        let start = cursor.flatMap(Recipient.tokenIndex(of:)).map { $0 + 1 } ?? 0
        guard start < tokens.count else { return ([], nil, true) }
        let end = min(tokens.count, start + configuration.batchSize)
        let recipients = (start..<end).compactMap { index -> Recipient? in
            let token = tokens[index]
            return notification.target.admits(token) ? Recipient(rawToken: token, index: index) : nil
        }
        return (recipients, Recipient.key(tokenIndex: end - 1), end == tokens.count)
    }

    /// The recipients of pending deliveries; deleted or invalidated installations drop out.
    func recipients(for due: [PendingDelivery], of notification: PushNotification) async throws -> [Recipient] {
        var result: [Recipient] = []
        let ids = due.filter { Recipient.tokenIndex(of: $0.recipient) == nil }.map(\.recipient)
        var installations: [String: Installation] = [:]
        for installation in try await store.installations(appID: notification.appID, ids: ids) where installation.valid
        {
            installations[installation.id] = installation
        }
        let tokens: [NotificationTarget.RawToken]
        if case .tokens(let list) = notification.target.audience { tokens = list } else { tokens = [] }
        for pending in due {
            var recipient: Recipient?
            if let broadcast = transports(of: notification.appID).broadcastRecipient(for: notification),
                broadcast.key == pending.recipient
            {
                recipient = broadcast
            } else if let index = Recipient.tokenIndex(of: pending.recipient), index < tokens.count {
                recipient = Recipient(rawToken: tokens[index], index: index)
            } else if let installation = installations[pending.recipient] {
                recipient = Recipient(InstallationAddress(installation)).routed(by: notification.target)
            }
            if var recipient {
                recipient.attempts = pending.attempts
                // What waited for a direct channel's confirmation comes back with its settlement.
                if pending.reason == .confirming || PendingDelivery.Reason.settlements.contains(pending.reason) {
                    recipient.channelSettlement = pending.reason
                }
                // A delivery tried before (or handed to a direct channel that has not taken or
                // confirmed it) already counted this notification in its installation's badge.
                if pending.attempts > 0 || pending.reason == .offline || recipient.channelSettlement != nil,
                    let installation = recipient.installationID.flatMap({ installations[$0] })
                {
                    recipient.countedBadge = installation.badge
                }
                result.append(recipient)
            }
        }
        return result
    }

}

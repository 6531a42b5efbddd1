import HeraldCore

/// Settlements of deliveries that waited for a direct channel's confirmation, as the engine tracks
/// them between the write to the socket and the commit of the page that records them waiting: a
/// settlement that comes before that commit has no pending row to move yet, so it is kept and
/// applied once the page has committed. No I/O: the dispatcher holds one behind a lock.
struct ChannelSettlements {
    /// A delivery: its notification and recipient.
    struct Key: Hashable {
        var notificationID: String
        var recipient: String
    }

    /// Deliveries being written to a channel, or recorded as `confirming` in a page not yet committed.
    private var expected: Set<Key> = []
    /// Settlements that came while their delivery was expected.
    private var early: [Key: PendingDelivery.Reason] = [:]

    /// Deliveries about to be written to a channel.
    mutating func expect(_ keys: [Key]) {
        expected.formUnion(keys)
    }

    /// The channel's writes are done: only the deliveries its page records as confirming (by
    /// recipient) stay expected, until that page commits.
    mutating func written(_ keys: [Key], confirming: Set<String>) {
        for key in keys where !confirming.contains(key.recipient) { expected.remove(key) }
    }

    /// A delivery settled: kept for its page's commit when it is expected (true); false when it is
    /// not (its pending row is stored: settle it now).
    mutating func keep(_ reason: PendingDelivery.Reason, for key: Key) -> Bool {
        guard expected.contains(key) else { return false }
        early[key] = reason
        return true
    }

    /// The page recording these confirming deliveries committed (or failed to): they are no longer
    /// expected. Returns the settlements that came for them meanwhile, to apply now.
    mutating func pageDone(_ confirming: [PendingDelivery]) -> [(key: Key, reason: PendingDelivery.Reason)] {
        confirming.compactMap { pending in
            let key = Key(notificationID: pending.notificationID, recipient: pending.recipient)
            expected.remove(key)
            return early.removeValue(forKey: key).map { (key, $0) }
        }
    }
}

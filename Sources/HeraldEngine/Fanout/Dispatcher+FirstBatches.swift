import Foundation
import HeraldCore

extension Dispatcher {
    /// The first batch of each of several notifications handed over together (``LocalHandoff``),
    /// in the notifications' order: their pages and their recipients' preferences in one trip to
    /// the store (``DispatchLedger/resolveFirstPages(_:)``: one read transaction on SQLite), where
    /// each notification alone takes two (its page, then its recipients' preferences). A target
    /// of raw tokens needs no read, nor one whose intake read its installations (`known`, in the
    /// notifications' order; ``SendRequest/knownAddresses``).
    func firstBatches(
        of notifications: [PushNotification], known: [[InstallationAddress]?] = []
    ) async throws
        -> [Batch]
    {
        var batches = [Batch](repeating: Batch(), count: notifications.count)
        var requests: [FirstPageRequest] = []
        var requested: [Int] = []
        for (index, notification) in notifications.enumerated() {
            if index < known.count, let addresses = known[index] {
                let recipients = addresses.map { Recipient($0).routed(by: notification.target) }
                batches[index] = Batch(
                    recipients: recipients, last: recipients.last?.key, preferences: [:], exhausted: true)
            } else if let page = tokenPage(of: notification, after: nil) {
                batches[index] = Batch(
                    recipients: page.recipients, last: page.last, preferences: [:], exhausted: page.exhausted)
            } else if transports(of: notification.appID).broadcastRecipient(for: notification) != nil {
                // A broadcast route's first page is not the store's alone.
                batches[index] = try await readBatch(of: notification, after: nil)
            } else {
                requests.append(
                    FirstPageRequest(
                        target: notification.target, appID: notification.appID, limit: configuration.batchSize,
                        withPreferences: notification.respectPreferences))
                requested.append(index)
            }
        }
        guard !requests.isEmpty else { return batches }
        let read = try await store.resolveFirstPages(requests)
        for (index, page) in zip(requested, read.pages) {
            let notification = notifications[index]
            let recipients = page.map { Recipient($0).routed(by: notification.target) }
            batches[index] = Batch(
                recipients: recipients, last: recipients.last?.key,
                preferences: notification.respectPreferences ? read.preferences : [:],
                exhausted: page.count < configuration.batchSize)
        }
        return batches
    }
}

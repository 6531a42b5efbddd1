import Foundation

/// What the API and the dialects read and change of notifications beside dispatch
/// (``DispatchLedger``): listings, a notification's ledger, cancelling, opens. The engine does not
/// use it.
public protocol NotificationRecords: Sendable {
    /// A page of an app's notifications, newest first, optionally with one status.
    func notifications(
        appID: String, status: NotificationStatus?, page: PageRequest
    ) async throws -> [PushNotification]

    /// An app's notifications that a query selects, compiled to the store's own query: sorted by
    /// `order` (see ``QueryOrder``), then by id; the first `skip` left out, at most `limit`
    /// returned. A dialect's listing of its pushes (`GET /1.1/classes/_Notification`) reads them so.
    /// - Throws: What the store throws.
    func notifications(
        appID: String, matching query: NotificationQuery, order: [QueryOrder<NotificationQuery.Field>], skip: Int,
        limit: Int
    ) async throws -> [PushNotification]

    /// How many of an app's notifications a query selects.
    /// - Throws: What the store throws.
    func countNotifications(appID: String, matching query: NotificationQuery) async throws -> Int

    /// Cancels a notification that is not final: its job and pending deliveries go, its status
    /// becomes `canceled`. Returns the notification as stored afterwards, nil when there is none.
    func cancelNotification(appID: String, id: String, now: Date) async throws -> PushNotification?

    /// The app's notification stored with an idempotency key (a dialect that keys its messages by
    /// one of its own ids: ntfy's sequence ids), whatever its age.
    func notification(appID: String, idempotencyKey: String) async throws -> PushNotification?

    /// Stores new content for a notification still waiting for its push time (status `scheduled`):
    /// its target, payload and template as `notification` has them. Returns false, changing
    /// nothing, when it is no longer scheduled or a worker holds its job (its time came).
    func replaceScheduledNotification(_ notification: PushNotification) async throws -> Bool

    /// A page of a notification's ledger in order of record, optionally with one outcome.
    func deliveries(
        notificationID: String, outcome: DeliveryRecord.Outcome?, page: PageRequest
    ) async throws -> [LedgerEntry]

    /// Records that an installation of the app opened one of the app's notifications, in one
    /// transaction: the first report for the pair is kept with `openedAt` and adds one to the
    /// notification's `opened` count; a repeat changes nothing. With `userID`, the installation
    /// must be that user's (another user's is unknown).
    func recordOpen(
        appID: String, notificationID: String, installationID: String, userID: String?, openedAt: Date
    ) async throws -> OpenRecording
}

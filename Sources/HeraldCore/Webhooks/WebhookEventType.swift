/// The facts Herald tells an app's backend about, each the `type` of a webhook event
/// (docs/webhooks.md has the contract: each type's `data`, version 1).
public enum WebhookEventType: String, Sendable, CaseIterable, Codable, Comparable {
    /// A notification reached a final status with recipients handled (`done` or `failed`): its counts.
    case notificationCompleted = "notification.completed"
    /// A notification expired before every recipient was served.
    case notificationExpired = "notification.expired"
    /// A notification was canceled.
    case notificationCanceled = "notification.canceled"
    /// An installation reported opening a notification (`POST /v1/opens`).
    case notificationOpened = "notification.opened"
    /// A delivery to one installation failed: for good, or with another attempt scheduled.
    case deliveryFailed = "delivery.failed"
    /// The provider said an installation's token is no longer valid: Herald stops sending to it.
    case installationInvalidated = "installation.invalidated"
    /// Clean-up deleted an installation.
    case installationRemoved = "installation.removed"
    /// Sent on request (`POST /v1/webhooks/{id}/test`) to check an endpoint; never by a fact.
    case webhookTest = "webhook.test"

    /// The types an endpoint can subscribe to (every type but the test event, which goes to the endpoint asked).
    public static let subscribable: [WebhookEventType] = allCases.filter { $0 != .webhookTest }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

import Foundation

/// What became of one push to one device, whatever the provider: every provider answer maps to
/// exactly one of these, and the engine acts on it.
public enum DeliveryOutcome: Sendable, Equatable {
    /// The provider accepted the push; `providerID` is its id for it (apns-id, FCM message name).
    case delivered(providerID: String?)
    /// The token is gone (APNs 410 `Unregistered`/`ExpiredToken`, FCM `UNREGISTERED`, Web Push
    /// 404/410, SNS `EndpointDisabled`): the installation is invalidated, and deleted where its
    /// registration asked for that. `since` is the provider's time of invalidation when it gives
    /// one (APNs 410 `timestamp`).
    case invalidToken(reason: String, since: Date?)
    /// The provider rejected the token as malformed or not for this app (APNs 400
    /// `BadDeviceToken`/`DeviceTokenNotForTopic`, FCM `INVALID_ARGUMENT` on `message.token`): it may
    /// be a sandbox token sent to production, so whether it invalidates the installation or counts
    /// as one of its failures is the app's rule (``RejectedTokenRule``); it never deletes one.
    case rejectedToken(reason: String)
    /// A transient failure: try again later, not before `after` when the provider says so.
    case retry(reason: String, after: Duration?)
    /// Herald's credentials or settings for this provider are wrong; retrying will not help until
    /// an operator fixes them.
    case configurationFailure(reason: String)
    /// The provider refused this push for a reason of its own (kept verbatim).
    case rejected(reason: String)

    /// The provider's reason, when there is one.
    public var reason: String? {
        switch self {
        case .delivered: nil
        case .invalidToken(let reason, _), .rejectedToken(let reason), .retry(let reason, _),
            .configurationFailure(let reason), .rejected(let reason):
            reason
        }
    }
}

extension DeliveryOutcome {
    /// Whether the outcome is a transient failure, to be tried again.
    public var isRetry: Bool {
        if case .retry = self { return true }
        return false
    }
}

/// What a token the provider rejected (``DeliveryOutcome/rejectedToken(reason:)``) does to its
/// installation.
public enum RejectedTokenRule: String, Sendable, CaseIterable {
    /// It invalidates the installation at once, like a token that is gone (Herald's default).
    case invalidate
    /// It counts as one of the installation's failures (`failure_count`, `last_failure_reason`):
    /// `engine.max_failures` in a row deactivate it. The rule of installations registered with
    /// `delete_when_invalid` (ArgusAI's: "Log but don't delete on other failures"), whatever the app's.
    case count
}

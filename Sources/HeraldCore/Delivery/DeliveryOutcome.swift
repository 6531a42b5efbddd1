import Foundation

/// What became of one push to one device, whatever the provider: every provider answer maps to
/// exactly one of these, and the engine acts on it.
public enum DeliveryOutcome: Sendable, Equatable {
    /// The provider accepted the push; `providerID` is its id for it (apns-id, FCM message name).
    case delivered(providerID: String?)
    /// The token is no longer valid and the installation must be invalidated. `since` is the
    /// provider's time of invalidation when it gives one (APNs 410 `timestamp`).
    case invalidToken(reason: String, since: Date?)
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
        case .invalidToken(let reason, _), .retry(let reason, _), .configurationFailure(let reason),
            .rejected(let reason):
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

import Foundation

/// One push token's use of a push relay in one UTC day. The relay counts a request when it answers
/// (``accepted`` or ``refused``), and the provider's answer to an accepted one when the engine
/// records it, usually after the relay answered (``delivered`` or ``failed``). The record lives
/// here, beside the stores that build it; the protocol of its store is the dialect's
/// (`RelayUsageStore` in `HeraldHomeAssistant`).
public struct RelayUsage: Sendable, Equatable {
    /// Notifications the relay accepted (queued): what the daily maximum counts, so a refusal
    /// (`429`) never depends on how fast the provider answers.
    public var accepted: Int
    /// Requests the relay refused after the token was known: over the limit, too large, misconfigured.
    public var refused: Int
    /// Accepted notifications the provider (or the device's direct channel) took.
    public var delivered: Int
    /// Accepted notifications the provider refused, or that never reached it (retries exhausted).
    public var failed: Int

    /// Creates a day's usage.
    public init(accepted: Int = 0, refused: Int = 0, delivered: Int = 0, failed: Int = 0) {
        self.accepted = accepted
        self.refused = refused
        self.delivered = delivered
        self.failed = failed
    }

    /// Every request counted: accepted and refused.
    public var total: Int { accepted + refused }
}

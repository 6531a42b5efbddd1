import Foundation

/// One push token's use of a push relay in one UTC day: the notifications accepted for it and the
/// requests refused (rate-limited or failed).
public struct RelayUsage: Sendable, Equatable {
    /// Notifications accepted for delivery.
    public var successful: Int
    /// Requests refused: over the limit, or failed after the token was known.
    public var errors: Int

    /// Creates a day's usage.
    public init(successful: Int = 0, errors: Int = 0) {
        self.successful = successful
        self.errors = errors
    }

    /// Every request counted: accepted and refused.
    public var total: Int { successful + errors }
}

/// The durable per-token, per-UTC-day counters of a push relay (the Home Assistant `push_url`
/// relay). Counters are keyed by the token's keyed hash (``TokenCipher/index(_:service:)``), never
/// the token itself, and a day is its UTC date (`2026-11-25`), so a restart keeps everyone's day and
/// a new date starts from zero.
public protocol RelayUsageStore: Sendable {
    /// Claims one send for the token's day: when fewer than `maximum` were accepted it is counted
    /// as accepted and granted; otherwise it is counted as an error and refused. One atomic step, so
    /// concurrent requests never accept more than `maximum`.
    /// - Returns: Whether the send was granted, and the day's usage after counting it.
    func claimRelaySend(
        appID: String, service: PushService, token: String, day: String, maximum: Int
    ) async throws -> (granted: Bool, usage: RelayUsage)

    /// Counts an error for the token's day; `releasingClaim` first takes back an accepted send that
    /// a claim counted (the send failed after its claim).
    /// - Returns: The day's usage after counting.
    func countRelayError(
        appID: String, service: PushService, token: String, day: String, releasingClaim: Bool
    ) async throws -> RelayUsage

    /// The token's usage of the day, zero when nothing was counted.
    func relayUsage(appID: String, service: PushService, token: String, day: String) async throws -> RelayUsage
}

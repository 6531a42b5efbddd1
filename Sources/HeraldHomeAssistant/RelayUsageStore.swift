import Foundation
import HeraldCore

/// The durable per-token state of a push relay (the Home Assistant `push_url` relay): per-UTC-day
/// counters, the claims that pace retries of invalidated tokens, and which installations the relay
/// registered itself. Tokens are keyed by their keyed hash (``TokenCipher/index(_:service:)``), never
/// the token itself; a day is its UTC date (`2026-11-25`), so a restart keeps everyone's day and a new
/// date starts from zero.
///
/// Its records are `HeraldCore`'s (``RelayUsage``), as the stores build them; each store implements the
/// methods in its own module and conforms in `HeraldServer` (`DialectStores.swift`), where the stores
/// meet the dialects.
public protocol RelayUsageStore: Sendable {
    /// Claims one send for the token's day: when fewer than `maximum` were accepted it is counted
    /// as accepted and granted; otherwise it is counted as refused. One atomic step, so concurrent
    /// requests never accept more than `maximum`.
    /// - Returns: Whether the send was granted, and the day's usage after counting it.
    func claimRelaySend(
        appID: String, service: PushService, token: String, day: String, maximum: Int
    ) async throws -> (granted: Bool, usage: RelayUsage)

    /// Counts a refusal for the token's day; `releasingClaim` first takes back an accepted send that
    /// a claim counted (the send failed after its claim).
    /// - Returns: The day's usage after counting.
    func countRelayError(
        appID: String, service: PushService, token: String, day: String, releasingClaim: Bool
    ) async throws -> RelayUsage

    /// Counts the provider's answers to accepted sends of the token's day: `delivered` taken,
    /// `failed` refused. Counts nothing when the day has no counters (a later day's claim removed
    /// them: that day is over).
    func countRelayOutcome(
        appID: String, service: PushService, token: String, day: String, delivered: Int, failed: Int
    ) async throws

    /// The token's usage of the day, zero when nothing was counted.
    func relayUsage(appID: String, service: PushService, token: String, day: String) async throws -> RelayUsage

    /// Claims the retry of an invalidated token: granted when its retries are due — the token's
    /// earlier claim was `interval` ago or more (or ``resetRelayRetries(appID:)`` made it due), or,
    /// with no claim yet, when it was invalidated `interval` ago or more (`invalidatedAt`). A grant
    /// makes the next one due `interval` after `now`. One atomic step: of several nodes, one wins.
    func claimRelayRetry(
        appID: String, service: PushService, token: String, invalidatedAt: Date?, interval: TimeInterval, now: Date
    ) async throws -> Bool

    /// Makes the retry of every invalidated installation of the app due now (its credentials or
    /// environment changed), and forgets the claims of tokens no installation holds invalidated.
    func resetRelayRetries(appID: String) async throws

    /// Records that the relay registered the installation itself (it follows the relay's APNs
    /// environment); the record goes with the installation.
    func markRelayAdopted(appID: String, installationID: String) async throws

    /// Moves the app's APNs installations the relay registered from one environment to another.
    /// - Returns: How many moved.
    func moveRelayAdopted(appID: String, from: PushEnvironment, to: PushEnvironment, now: Date) async throws -> Int
}

import Foundation

/// The part of the device registry the engine uses: registering, changing and deleting
/// installations (the engine's `Registrations` tells the transports of each change), reading installations
/// by id for pending deliveries, and the clean-up job. ``InstallationRegistry`` refines it with
/// what the API and the dialects read and change besides.
public protocol DispatchRegistry: Sendable {
    /// Creates or updates an installation by its identity: `(app, device_id, service)` when the
    /// registration has a device id, else `(app, service, token)`. A token held by another
    /// installation moves to this one (one token belongs to one installation). Updating
    /// re-validates an invalidated installation and resets its failure count.
    func register(
        _ registration: InstallationRegistration, appID: String, now: Date
    ) async throws
        -> RegistrationResult

    /// Replaces an installation's writable fields; a changed token moves as in ``register(_:appID:now:)``.
    /// - Returns: The stored installation, or nil when it no longer exists.
    /// - Throws: `HeraldError` (`device_id_in_use`) when another installation of the service has its device id.
    func update(_ installation: Installation, now: Date) async throws -> Installation?

    /// Deletes an installation; false when there was none.
    func deleteInstallation(appID: String, id: String) async throws -> Bool

    /// Deletes every installation of one user of an app, with their preferences (an account
    /// deletion), in one transaction.
    /// - Returns: How many installations went, and those with provider-side state to remove too.
    func deleteInstallations(appID: String, userID: String) async throws -> InstallationRemoval

    /// Installations by id (valid or not), for pending deliveries.
    func installations(appID: String, ids: [String]) async throws -> [Installation]

    /// Deletes dead installations and old notifications (and invalidates stale installations), each
    /// app's as its policy in the plan says, in one transaction; also drops what has expired of the
    /// state nodes share (full rate buckets, past pauses, revoked console sessions past their expiry).
    func cleanup(_ plan: CleanupPlan, now: Date) async throws -> CleanupReport
}

extension DispatchRegistry {
    /// Cleans up every app with the same policy.
    public func cleanup(_ policy: CleanupPolicy, now: Date) async throws -> CleanupReport {
        try await cleanup(CleanupPlan(default: policy), now: now)
    }
}

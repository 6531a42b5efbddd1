import Foundation
import HeraldCore
import Logging

/// The one way routes and dialects change installations: each change is stored and told to the
/// transport of the installation's service (``InstallationLifecycle``: an SNS platform endpoint is
/// created, moved or deleted with its installation), so no path can miss the hook. Nothing else
/// writes the registry but bulk import, which runs without transports (its installations get their
/// provider state at their first send).
public struct Registrations: Sendable {
    let dispatcher: Dispatcher

    /// Registers (or re-registers) a device and tells its transport.
    /// - Parameter previous: The installation as it was, when the caller read it (a provider
    ///   endpoint is moved only when its token changed).
    /// - Returns: The store's result, its installation as stored after the transport's answer.
    public func register(
        _ registration: InstallationRegistration, appID: String, now: Date, previous: Installation? = nil
    ) async throws -> RegistrationResult {
        var result = try await dispatcher.store.register(registration, appID: appID, now: now)
        result.installation = await changed(result.installation, previous: previous)
        return result
    }

    /// Stores a changed installation and tells its transport.
    /// - Parameter previous: The installation as the caller read it before changing it.
    /// - Returns: The installation as stored, nil when it is gone.
    public func update(
        _ installation: Installation, from previous: Installation, now: Date
    ) async throws
        -> Installation?
    {
        guard let stored = try await dispatcher.store.update(installation, now: now) else { return nil }
        return await changed(stored, previous: previous)
    }

    /// Deletes an installation (with its preferences) and tells its transport.
    /// - Returns: False when it was already gone.
    public func delete(_ installation: Installation) async throws -> Bool {
        guard try await dispatcher.store.deleteInstallation(appID: installation.appID, id: installation.id) else {
            return false
        }
        await removed(installation)
        return true
    }

    /// Deletes every installation of a user and tells their transports.
    /// - Returns: The store's account of what went.
    public func deleteUser(appID: String, userID: String) async throws -> InstallationRemoval {
        let removal = try await dispatcher.store.deleteInstallations(appID: appID, userID: userID)
        for installation in removal.withEndpoints { await removed(installation) }
        return removal
    }

    /// Tells the transport of an installation's service that it was registered or changed; a
    /// transport that keeps a provider-side endpoint (SNS) creates or updates it, and the
    /// endpoint's id is stored (`sns_endpoint_arn`).
    /// - Returns: The installation as stored afterwards.
    private func changed(_ installation: Installation, previous: Installation?) async -> Installation {
        guard
            let lifecycle = dispatcher.transports(of: installation.appID).transports[installation.service]
                as? any InstallationLifecycle,
            let endpoint = await lifecycle.registered(installation, previous: previous),
            endpoint != installation.snsEndpointARN
        else { return installation }
        var changed = installation
        changed.snsEndpointARN = endpoint
        do {
            return try await dispatcher.store.update(changed, now: dispatcher.now()) ?? installation
        } catch {
            dispatcher.logger.warning(
                "provider endpoint not stored",
                metadata: ["herald.installation": "\(installation.id)", "herald.error": "\(type(of: error))"])
            return installation
        }
    }

    /// Tells the transport of a deleted installation's service, so its provider-side endpoint goes too.
    func removed(_ installation: Installation) async {
        guard
            let lifecycle = dispatcher.transports(of: installation.appID).transports[installation.service]
                as? any InstallationLifecycle
        else { return }
        await lifecycle.removed(installation)
    }
}

extension Dispatcher {
    /// How routes and dialects change installations (see ``Registrations``).
    public var registrations: Registrations { Registrations(dispatcher: self) }
}

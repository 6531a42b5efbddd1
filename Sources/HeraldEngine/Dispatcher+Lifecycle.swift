import Foundation
import HeraldCore
import Logging

extension Dispatcher {
    /// Tells the transport of an installation's service that it was registered or changed; a
    /// transport that keeps a provider-side endpoint (SNS) creates or updates it, and the
    /// endpoint's id is stored (`sns_endpoint_arn`).
    /// - Returns: The installation as stored afterwards.
    public func installationChanged(_ installation: Installation, previous: Installation?) async -> Installation {
        guard
            let lifecycle = transports(of: installation.appID).transports[installation.service]
                as? any InstallationLifecycle,
            let endpoint = await lifecycle.registered(installation, previous: previous),
            endpoint != installation.snsEndpointARN
        else { return installation }
        var changed = installation
        changed.snsEndpointARN = endpoint
        do {
            return try await store.update(changed, now: now()) ?? installation
        } catch {
            logger.warning(
                "provider endpoint not stored",
                metadata: ["herald.installation": "\(installation.id)", "herald.error": "\(type(of: error))"])
            return installation
        }
    }

    /// Tells the transport of a deleted installation's service, so its provider-side endpoint goes too.
    public func installationRemoved(_ installation: Installation) async {
        guard
            let lifecycle = transports(of: installation.appID).transports[installation.service]
                as? any InstallationLifecycle
        else { return }
        await lifecycle.removed(installation)
    }
}

import Foundation
import HeraldAPI
import HeraldCore
import Logging

/// Writes the configured webhook endpoints (`app.<id>.webhooks`) to the store, at start and on each
/// reload: the configuration wins. A configured endpoint replaces one of the same id the API made;
/// one already configured keeps its health (when it last succeeded, since when it fails, and its
/// disabling by a `410` or by failing, while its URL stays the same); a configured endpoint whose
/// name left the configuration is deleted. Endpoints the API made under other ids are left alone.
public enum ConfiguredWebhooks {
    /// Applies the configured endpoints of the apps `appIDs` names.
    public static func apply(
        _ configured: [ConfiguredWebhook], appIDs: [String], store: any WebhookStore, now: Date, logger: Logger
    ) async throws {
        for appID in appIDs {
            let wanted = configured.filter { $0.appID == appID }
            let stored = Dictionary(
                uniqueKeysWithValues: try await store.webhookEndpoints(appID: appID).map { ($0.id, $0) })
            for endpoint in wanted {
                let existing = stored[endpoint.id]
                var record = WebhookEndpoint(
                    id: endpoint.id, appID: appID, url: endpoint.url, events: endpoint.events,
                    description: endpoint.description, secrets: endpoint.secrets, configured: true,
                    disabledReason: endpoint.enabled ? nil : .manual, createdAt: existing?.createdAt ?? now,
                    updatedAt: now)
                if let existing, existing.configured, existing.url == endpoint.url {
                    record.failingSince = existing.failingSince
                    record.lastSuccessAt = existing.lastSuccessAt
                    if endpoint.enabled, existing.disabledReason != .manual {
                        record.disabledReason = existing.disabledReason
                    }
                }
                if let existing {
                    guard existing != record.with(updatedAt: existing.updatedAt) else { continue }
                    if !existing.configured {
                        logger.notice(
                            "a configured webhook endpoint replaces the one the API made with its id",
                            metadata: ["herald.app": "\(appID)", "herald.webhook": "\(endpoint.id)"])
                    }
                    _ = try await store.updateWebhookEndpoint(record)
                } else {
                    try await store.createWebhookEndpoint(record)
                }
            }
            for endpoint in stored.values where endpoint.configured && !wanted.contains(where: { $0.id == endpoint.id })
            {
                _ = try await store.deleteWebhookEndpoint(appID: appID, id: endpoint.id)
                logger.notice(
                    "a webhook endpoint left the configuration: deleted",
                    metadata: ["herald.app": "\(appID)", "herald.webhook": "\(endpoint.id)"])
            }
        }
    }
}

extension WebhookEndpoint {
    fileprivate func with(updatedAt: Date) -> WebhookEndpoint {
        var copy = self
        copy.updatedAt = updatedAt
        return copy
    }
}

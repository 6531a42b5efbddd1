import Foundation
import HeraldAPI
import HeraldCore
import Logging

/// Writes the configured templates (`app.<id>.templates`) to the store, at start and on each
/// reload: the configuration wins. A configured template whose content changed (or one the API made
/// under its name) is saved as the next revision; one unchanged is left as it is; a configured
/// template whose name left the configuration is deleted. Templates the API made under other names
/// are left alone.
public enum ConfiguredTemplates {
    /// Applies the configured templates of the apps `appIDs` names.
    public static func apply(
        _ configured: [ConfiguredTemplate], appIDs: [String], store: any TemplateStore, now: Date, logger: Logger
    ) async throws {
        for appID in appIDs {
            let wanted = configured.filter { $0.appID == appID }
            let stored = Dictionary(
                uniqueKeysWithValues: try await store.templates(appID: appID).map { ($0.name, $0) })
            for template in wanted {
                let existing = stored[template.name]
                if let existing, existing.configured, existing.content == template.content { continue }
                if let existing, !existing.configured {
                    logger.notice(
                        "a configured template replaces the one the API made with its name",
                        metadata: ["herald.app": "\(appID)", "herald.template": "\(template.name)"])
                }
                _ = try await store.saveTemplate(
                    NotificationTemplate(
                        appID: appID, name: template.name, content: template.content, configured: true,
                        createdAt: now, updatedAt: now))
            }
            for template in stored.values
            where template.configured && !wanted.contains(where: { $0.name == template.name }) {
                _ = try await store.deleteTemplate(appID: appID, name: template.name)
                logger.notice(
                    "a template left the configuration: deleted",
                    metadata: ["herald.app": "\(appID)", "herald.template": "\(template.name)"])
            }
        }
    }
}

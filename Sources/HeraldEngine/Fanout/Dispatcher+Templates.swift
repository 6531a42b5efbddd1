import Foundation
import HeraldCore

// A notification rendered from a template (docs/content.md, "Templates"): each device gets the
// template's words in the language its locale matches, rendered with the send's variables, the
// notification's data and, when the template names it, the device's own profile.
extension Dispatcher {
    /// The words a notification carries in each of its languages (nil: the default), as intake
    /// checks their size: a template's rendered without a recipient (every `recipient.…` empty).
    /// - Throws: `template_variable_missing` naming the first variable a strict template lacks.
    static func languages(
        of notification: PushNotification
    ) throws(HeraldError) -> [(
        key: String?, notification: PushNotification
    )] {
        guard let use = notification.template else {
            return [(nil, notification)]
                + notification.payload.localizations.keys.sorted().map { key in
                    var localized = notification
                    localized.payload = notification.payload.localized(key)
                    return (key, localized)
                }
        }
        let template = try use.compiled()
        var languages: [(key: String?, notification: PushNotification)] = []
        for key in [nil] + template.localizationKeys.sorted() {
            let rendering = template.render(
                key: key, variables: use.variables, data: notification.payload.data, recipient: nil)
            if use.content?.strict == true, let missing = rendering.missing.first {
                throw .invalidValue(
                    missing.hasPrefix("data.") ? "payload.\(missing)" : "template.variables.\(missing)",
                    code: "template_variable_missing",
                    "Template \(use.name) is strict and the send gives no value for {{\(missing)}}.")
            }
            var rendered = notification
            rendered.payload = rendering.applied(to: notification.payload)
            languages.append((key, rendered))
        }
        return languages
    }

    /// Sends a batch rendered from the notification's template: each device's words for its locale
    /// and, when the template names `recipient`, its profile; a device a strict template lacks a
    /// value for fails with `template_variable_missing` and is not sent to.
    func sendTemplated(
        _ outgoing: [OutgoingPush], of notification: PushNotification, use: TemplateUse,
        into commit: inout PageCommit, now: Date
    ) async throws -> (sent: [OutgoingPush], results: [TransportResult]) {
        let template = try use.compiled()
        // A template in one language that does not name the recipient renders the same for every
        // device: once, without reading the devices, and without per-language counts.
        let shared = template.render(
            key: nil, variables: use.variables, data: notification.payload.data, recipient: nil)
        if template.localizationKeys.isEmpty, !shared.usesRecipient {
            var rendered = notification
            rendered.payload = shared.applied(to: notification.payload)
            return await sendWithChannels(outgoing, of: rendered, into: &commit, now: now)
        }
        let ids = outgoing.compactMap(\.recipient.installationID)
        var installations: [String: Installation] = [:]
        for installation in try await store.installations(appID: notification.appID, ids: ids) {
            installations[installation.id] = installation
        }
        let matcher = LocaleMatcher(keys: template.localizationKeys)
        let strict = use.content?.strict == true
        // One rendering per language, unless the template names the recipient.
        var byLanguage: [String?: TemplateRendering] = [:]
        var groups: [TemplateRendering: (key: String?, pushes: [OutgoingPush])] = [:]
        var order: [TemplateRendering] = []
        var sent: [OutgoingPush] = []
        var results: [TransportResult] = []
        for push in outgoing {
            let installation = push.recipient.installationID.flatMap { installations[$0] }
            let key = matcher.match(installation?.locale)
            var rendering: TemplateRendering
            if let shared = byLanguage[key] {
                rendering = shared
            } else {
                rendering = template.render(
                    key: key, variables: use.variables, data: notification.payload.data,
                    recipient: installation.map(TemplateRecipient.init) ?? TemplateRecipient())
                if !rendering.usesRecipient { byLanguage[key] = rendering }
            }
            if strict, let missing = rendering.missing.first {
                sent.append(push)
                results.append(TransportResult(.configurationFailure(reason: "template_variable_missing: \(missing)")))
                continue
            }
            rendering.missing = []
            if groups[rendering] == nil { order.append(rendering) }
            groups[rendering, default: (key, [])].pushes.append(push)
        }
        for rendering in order {
            guard let group = groups[rendering] else { continue }
            var rendered = notification
            rendered.payload = rendering.applied(to: notification.payload)
            let part = await sendWithChannels(group.pushes, of: rendered, into: &commit, now: now)
            sent += part.sent
            results += part.results
            let accepted = part.results.filter { if case .delivered = $0.outcome { true } else { false } }.count
            if accepted > 0 {
                commit.counts.byLocale[group.key ?? NotificationCounts.defaultLocale, default: 0] += accepted
            }
        }
        return (sent, results)
    }
}

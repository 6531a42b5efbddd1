import Foundation
import HeraldCore

// A notification in several languages (docs/content.md): each device gets the words of the
// localization its locale matches (`LocaleMatcher`), rendered by its provider as any payload is.
extension Dispatcher {
    /// Sends a batch, each device in its own language when the notification has localizations: the
    /// batch is split by the localization each device's locale picks, and each part sent with its words.
    func sendLocalized(
        _ outgoing: [OutgoingPush], of notification: PushNotification, into commit: inout PageCommit, now: Date
    ) async throws -> (sent: [OutgoingPush], results: [TransportResult]) {
        if let template = notification.template {
            return try await sendTemplated(outgoing, of: notification, use: template, into: &commit, now: now)
        }
        let localizations = notification.payload.localizations
        guard !localizations.isEmpty else {
            return await sendWithChannels(outgoing, of: notification, into: &commit, now: now)
        }
        // Only a localized notification reads its devices' locales: the fan-out's pages do not carry them.
        let ids = outgoing.compactMap(\.recipient.installationID)
        var locales: [String: String] = [:]
        for installation in try await store.installations(appID: notification.appID, ids: ids) {
            locales[installation.id] = installation.locale
        }
        let matcher = LocaleMatcher(keys: localizations.keys)
        var groups: [String?: [OutgoingPush]] = [:]
        var order: [String?] = []
        for push in outgoing {
            let key = matcher.match(push.recipient.installationID.flatMap { locales[$0] })
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(push)
        }
        var sent: [OutgoingPush] = []
        var results: [TransportResult] = []
        for key in order {
            var localized = notification
            localized.payload = notification.payload.localized(key)
            let part = await sendWithChannels(groups[key] ?? [], of: localized, into: &commit, now: now)
            sent += part.sent
            results += part.results
            // What the provider took, by the words it got: the ledger's per-locale counts.
            let accepted = part.results.filter { if case .delivered = $0.outcome { true } else { false } }.count
            if accepted > 0 { commit.counts.byLocale[key ?? NotificationCounts.defaultLocale, default: 0] += accepted }
        }
        return (sent, results)
    }
}

import Foundation
import HeraldAPI
import HeraldCore

/// The native JSON rendering of notifications and their ledger.
enum NotificationView {
    static func json(_ notification: PushNotification) -> JSONValue {
        var target = notification.target.json
        if notification.target.holdsTokens, case .object(var members) = target,
            case .array(let tokens)? = members["tokens"]
        {
            // Raw tokens are secrets: the record shows how many, not what they are.
            members["tokens"] = .number(JSONNumber(tokens.count))
            target = .object(members)
        }
        var live: JSONValue?
        if let activity = notification.liveActivity {
            live = .object([
                "id": .string(activity.activityID), "event": .string(activity.event.rawValue),
                "revision": .number(JSONNumber(activity.revision)),
                "channel": activity.channel.map(JSONValue.string) ?? .null,
            ])
        }
        var view: [String: JSONValue] = [
            "id": .string(notification.id),
            "app_id": .string(notification.appID),
            "status": .string(notification.status.rawValue),
            "target": target,
            "payload": notification.payload.json,
            "source": InstallationView.string(notification.source),
            "category": InstallationView.string(notification.category),
            "push_time": InstallationView.string(notification.pushTime),
            "not_before": InstallationView.timestamp(notification.notBefore),
            "expires_at": InstallationView.timestamp(notification.expiresAt),
            "respect_preferences": .bool(notification.respectPreferences),
            "idempotency_key": InstallationView.string(notification.idempotencyKey),
            "counts": notification.counts.json,
            "created_at": InstallationView.timestamp(notification.createdAt),
            "started_at": InstallationView.timestamp(notification.startedAt),
            "completed_at": InstallationView.timestamp(notification.completedAt),
        ]
        view["live_activity"] = live
        if notification.updatable { view["updatable"] = .bool(true) }
        view["revision"] = notification.revision?.json
        if let template = notification.template {
            view["template"] = .object([
                "name": .string(template.name),
                "revision": template.revision.map { .number(JSONNumber($0)) } ?? .null,
            ])
        }
        return .object(view)
    }

    static func json(_ entry: LedgerEntry) -> JSONValue {
        let record = entry.record
        return .object([
            "installation_id": InstallationView.string(record.installationID),
            "token_suffix": .string(record.tokenSuffix),
            "service": .string(record.service.rawValue),
            "outcome": .string(record.outcome.rawValue),
            "provider_id": InstallationView.string(record.providerID),
            "reason": InstallationView.string(record.reason),
            "attempts": .number(JSONNumber(record.attempts)),
            "at": InstallationView.timestamp(record.at),
        ])
    }
}

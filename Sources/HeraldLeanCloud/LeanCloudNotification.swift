import HeraldAPI
import HeraldCore

/// `_Notification` as LeanCloud reports it, from Herald's notification record and counts.
///
/// The push guide (seed 003) gives the class two fields: `subscribers`, "the number of devices this
/// message was pushed to successfully", and `status`, "`in queue`, `done` or an error message".
/// Herald's own statuses map onto those three: everything not yet finished (`scheduled`, `queued`,
/// `sending`) is `in queue`, `done` is `done`, and a push that ended without reaching its devices
/// (`expired`, `canceled`, `failed`) reads as a sentence saying so. The native API keeps Herald's
/// statuses.
package enum LeanCloudNotification {
    /// The status of a push that is not finished, scheduled ones included.
    package static let inQueue = "in queue"
    /// The status of a push every device has an outcome for.
    package static let done = "done"
    /// The error message of a push whose expiration passed first.
    package static let expiredMessage = "Expired: the push's expiration time passed before it was sent to every device."
    /// The error message of a push canceled through the native API.
    package static let canceledMessage = "Canceled: the push was canceled before it was sent to every device."
    /// The error message of a push no device accepted.
    package static let failedMessage = "Failed: the push could not be delivered to any device."

    /// Every `status` a push can read, in order.
    package static let allStatuses = [inQueue, done, expiredMessage, canceledMessage, failedMessage]

    /// LeanCloud's `status` for one of Herald's statuses.
    package static func status(_ status: NotificationStatus) -> String {
        switch status {
        case .scheduled, .queued, .sending: inQueue
        case .done: done
        case .expired: expiredMessage
        case .canceled: canceledMessage
        case .failed: failedMessage
        }
    }

    /// The record: `status` (see the type), `subscribers` (the devices the push reached), and, beyond
    /// the guide, `devices` (targeted), `successes` (accepted by the provider, as `subscribers`),
    /// `errors` (failed or invalid), `data`, `where`, `push_time`, `expiration_time`, timestamps.
    package static func json(_ notification: PushNotification) -> JSONValue {
        let counts = notification.counts
        var object: [String: JSONValue] = [
            "objectId": .string(notification.id), "status": .string(status(notification.status)),
            "subscribers": .number(JSONNumber(counts.sent)),
            "devices": .number(JSONNumber(counts.targeted)), "successes": .number(JSONNumber(counts.sent)),
            "errors": .number(JSONNumber(counts.failed + counts.invalid)),
            "data": data(notification.payload),
            "createdAt": .string(LeanCloudDate.string(notification.createdAt)),
            "updatedAt": .string(
                LeanCloudDate.string(notification.completedAt ?? notification.startedAt ?? notification.createdAt)),
        ]
        if case .query(let query) = notification.target.audience { object["where"] = query.json }
        if let pushTime = notification.pushTime { object["push_time"] = .string(pushTime) }
        if let expiresAt = notification.expiresAt {
            object["expiration_time"] = .string(LeanCloudDate.string(expiresAt))
        }
        return .object(object)
    }

    /// The payload as a LeanCloud `data` object: `alert` is the APNs alert object when one was sent
    /// (``LeanCloudPush`` keeps it in the APNs override), else the body.
    package static func data(_ payload: NotificationPayload) -> JSONValue {
        var data = payload.data
        if case .object(let apns)? = payload.overrides["apns"], case .object(let aps)? = apns["aps"],
            case .object(let alert)? = aps["alert"], alert.values.contains(where: { $0 != .null })
        {
            data["alert"] = .object(alert.filter { $0.value != .null })
        } else if let body = payload.body {
            data["alert"] = .string(body)
        }
        if let title = payload.title, data["alert"]?.objectValue == nil { data["title"] = .string(title) }
        switch payload.badge {
        case .set(let value)?: data["badge"] = .number(JSONNumber(value))
        case .increment?: data["badge"] = .string("Increment")
        case nil: break
        }
        data["sound"] = payload.sound.map(JSONValue.string)
        data["category"] = payload.category.map(JSONValue.string)
        if payload.contentAvailable { data["content-available"] = .number(JSONNumber(1)) }
        if payload.mutableContent { data["mutable-content"] = .number(JSONNumber(1)) }
        return .object(data)
    }
}

import Foundation
import HeraldAPI
import HeraldCore

/// A camera event to notify about (`POST /api/v1/push/mobile/events`), and the notification the
/// document makes of it: its unified payload and, from that, the native send request whose APNs and
/// FCM renderings are the document's payload adaptations.
package struct ArgusAIEvent: Sendable {
    /// The channel every ArgusAI registration joins: events without `user_ids` go to it.
    package static let channel = "argusai"
    /// The APNs category (`UNNotificationCategory`) of every event notification.
    package static let category = "SECURITY_ALERT"
    /// The Android notification channel of every event notification.
    package static let androidChannel = "security_alerts"
    /// How long providers keep an event for an offline device (FCM `ttl: "86400s"`).
    package static let timeToLive = 86_400

    package static let fields: Set<String> = [
        "event_id", "camera_id", "camera_name", "smart_detection_type", "description", "timestamp", "user_ids",
    ]

    package var eventID: String
    package var cameraID: String
    package var cameraName: String
    package var detectionType: String
    package var description: String
    package var timestamp: Date
    /// The users to notify; nil notifies every device registered through the dialect.
    package var userIDs: [String]?

    /// Parses an event body; `timestamp` defaults to `now`.
    /// - Throws: `HeraldError` naming the first field at fault.
    package init(json: JSONValue, now: Date) throws(HeraldError) {
        let body = try JSONObjectReader(json)
        try body.rejectUnknown(allowed: Self.fields)
        eventID = try body.requiredString("event_id")
        // The id is written into URL paths and queries: only unreserved characters (RFC 3986 §2.3).
        guard SourceEvent.isValidProducerID(eventID) else {
            throw .invalidValue(
                "event_id", "Field 'event_id' must be 1 to 128 characters of A-Z, a-z, 0-9, '-', '.', '_' and '~'.")
        }
        // Sources and categories are preference names, which are at most 100 characters.
        let nameLength = Preferences.maxNameLength
        cameraID = try Self.required(body, "camera_id", maxLength: nameLength)
        cameraName = try Self.required(body, "camera_name", maxLength: 256)
        detectionType = try Self.required(body, "smart_detection_type", maxLength: nameLength)
        description = try Self.required(body, "description", maxLength: 4000)
        timestamp = now
        if let text = try body.string("timestamp") {
            guard case .instant(let date)? = try? PushTime(parsing: text, field: "timestamp") else {
                throw .invalidValue(
                    "timestamp", code: "invalid_timestamp",
                    "Field 'timestamp' must be an RFC 3339 date-time with an offset, like 2025-12-25T10:30:00Z.")
            }
            timestamp = date
        }
        userIDs = try body.strings("user_ids")
        if let userIDs {
            try NotificationTarget.validateList(
                userIDs, field: "user_ids", maxLength: NotificationTarget.maxUserIDLength)
        }
    }

    private static func required(_ body: JSONObjectReader, _ key: String, maxLength: Int) throws(HeraldError) -> String
    {
        guard let value = try body.string(key, maxLength: maxLength) else { throw .missingField(key) }
        return value
    }

    /// `"<Camera>: <Type> Detected"`, the type with a capital first letter.
    package var title: String {
        "\(cameraName): \(detectionType.prefix(1).uppercased() + detectionType.dropFirst()) Detected"
    }

    package var thumbnailPath: String { "/api/v1/events/\(eventID)/thumbnail" }

    package var url: String { "/events?highlight=\(eventID)" }

    /// The document's unified payload, before platform adaptation (`thumbnail_url` relative, as there).
    package var unified: JSONValue {
        .object([
            "title": .string(title),
            "body": .string(description),
            "event_id": .string(eventID),
            "camera_id": .string(cameraID),
            "camera_name": .string(cameraName),
            "smart_detection_type": .string(detectionType),
            "thumbnail_url": .string(thumbnailPath),
            "url": .string(url),
            "timestamp": ArgusAIDeviceView.timestamp(timestamp),
            "actions": .array([
                .object(["id": .string("view"), "title": .string("View")]),
                .object(["id": .string("dismiss"), "title": .string("Dismiss")]),
            ]),
            "category": .string(Self.category),
            "sound": .string("default"),
            "priority": .string("high"),
        ])
    }

    /// The send request: the camera is the notification's source and the object type its category
    /// (what preferences filter on), while the APNs category stays `SECURITY_ALERT`. The APNs
    /// rendering of the payload is the document's APNs adaptation; the FCM overrides turn the FCM
    /// rendering into its data message. A repeated event is the intake's to refuse: no idempotency key.
    package func sendRequest(publicBaseURL: String) -> SendRequest {
        let data: [String: JSONValue] = [
            "event_id": .string(eventID),
            "camera_id": .string(cameraID),
            "camera_name": .string(cameraName),
            "smart_detection_type": .string(detectionType),
            "thumbnail_url": .string(publicBaseURL + thumbnailPath),
            "url": .string(url),
        ]
        let fcm: JSONValue = .object([
            // A data message: no notification block, no APNs block, title and body in data.
            "notification": .null,
            "apns": .null,
            "data": .object([
                "title": .string(title), "body": .string(description), "click_action": .string("OPEN_EVENT"),
                "notification_channel": .string(Self.androidChannel),
                // The document's FCM adaptation lists every data key: Herald's notification id is not one.
                "herald_id": .null,
            ]),
            "android": .object([
                "notification": .object([
                    "channel_id": .string(Self.androidChannel), "icon": .string("ic_notification"),
                    "color": .string("#FF5722"), "tag": .string(cameraID),
                ])
            ]),
        ])
        return SendRequest(
            target: NotificationTarget(audience: userIDs.map { .userIDs($0) } ?? .channels([Self.channel])),
            payload: NotificationPayload(
                title: title, subtitle: "\(cameraName) Camera", body: description, badge: .set(1), sound: "default",
                category: Self.category, threadID: cameraID, data: data, mutableContent: true, priority: .high,
                ttl: Self.timeToLive,
                // Likewise the APNs adaptation: no `herald` key beside `aps`.
                overrides: ["fcm": fcm, "apns": .object(["herald": .null])]),
            source: cameraID, category: detectionType)
    }
}

import HeraldAPI
import HeraldCore

/// Turns a classified camera event into the native send request that delivers AOVIS's push (§6 of
/// the AOVIS integration guide): the title from `formatPushTitle`, the summary as the body, the
/// `aovis://event/<id>` deep link and the `cloudEventId`, `deviceId`, `eventType` data.
package struct AOVISPushTemplate: Sendable {
    /// Titles are at most this many characters (`formatPushTitle`: `at <deviceName>` only within it).
    package static let maxTitleLength = 50
    /// Bodies are at most this many characters.
    package static let maxBodyLength = 80

    package let event: SourceEvent
    package let type: AOVISEventType
    package let device: SourceDevice

    /// `Vehicle detected at Driveway` when that fits in 50 characters, else `Vehicle detected`.
    package var title: String { Self.title(type, deviceName: device.name) }

    /// The summary cut to 80 characters.
    package var body: String { Self.body(event.summary) }

    /// The title for an event type, with ` at <deviceName>` appended only when the whole title
    /// stays within 50 characters (counted in `Character`s, as a reader sees them).
    package static func title(_ type: AOVISEventType, deviceName: String?) -> String {
        guard let name = deviceName, !name.isEmpty else { return type.title }
        let long = "\(type.title) at \(name)"
        return long.count <= maxTitleLength ? long : type.title
    }

    /// The first 80 `Character`s of a summary: a cut never splits a grapheme (an emoji with its
    /// modifiers, a letter with its combining marks).
    package static func body(_ summary: String) -> String {
        String(summary.prefix(maxBodyLength))
    }

    /// The send request for the event's owners.
    ///
    /// The data keys sit beside `aps` in the APNs payload and are FCM's `data` (strings), exactly
    /// as §6 shows them. `source` is the camera's id and the notification's `category` (what
    /// preferences filter on) the event type, so native `enabled_sources` and `enabled_categories`
    /// preferences filter AOVIS pushes; the payload has no category, as §6 has none.
    package var sendRequest: SendRequest {
        SendRequest(
            target: NotificationTarget(audience: .userIDs(event.owners)),
            payload: NotificationPayload(
                title: title, body: body, sound: "default",
                data: [
                    "deepLink": .string("aovis://event/\(event.publicID)"),
                    "cloudEventId": .string(event.publicID),
                    "deviceId": .string(device.alias ?? device.id),
                    "eventType": .string(type.rawValue),
                ],
                mutableContent: true,
                // §6 fixes both payloads key for key: Herald's notification id stays out of them.
                overrides: [
                    "apns": .object(["herald": .null]), "fcm": .object(["data": .object(["herald_id": .null])]),
                ]),
            source: device.id, category: type.rawValue)
    }
}

import HTTPTypes
import HeraldAPI
import HeraldCore
import OpenAPIKit

extension MatrixRoutes {
    /// The Matrix specification's error body.
    static func failure(_ status: Int, _ description: String) -> (Int, APIResponse) {
        (
            status,
            .json(
                description,
                .object(
                    requiring: ["errcode", "error"],
                    [
                        "errcode": .choice("M_NOT_JSON", "M_BAD_JSON", "M_TOO_LARGE", "M_LIMIT_EXCEEDED", "M_UNKNOWN"),
                        "error": .string(description: "what went wrong"),
                        "retry_after_ms": .integer(
                            description: "with M_LIMIT_EXCEEDED: when to try again", minimum: (0, exclusive: false)),
                    ]))
        )
    }

    /// A pusher of the user, as the homeserver sends it.
    static let deviceSchema = JSONSchema.object(
        requiring: ["app_id", "pushkey"],
        [
            "app_id": .string(
                description: "the pusher's app id, mapped to a Herald app by app.<id>.matrix.app_ids", minLength: 1),
            "pushkey": .string(
                description: "the device's APNs or FCM token", minLength: 1,
                maxLength: MatrixNotification.maxPushkeyBytes),
            "pushkey_ts": .integer(description: "when the pusher was set (seconds)"),
            "data": .anyObject(
                description: "the pusher's data without url: format (event_id_only), default_payload (merged into APNs)"
            ),
            "tweaks": .anyObject(description: "the push rule's tweaks: sound, highlight"),
        ])

    /// The notify body.
    static let notifyBody = JSONSchema.object(
        requiring: ["notification"],
        [
            "notification": .object(
                requiring: ["devices"],
                [
                    "event_id": .string(), "room_id": .string(), "type": .string(), "sender": .string(),
                    "sender_display_name": .string(), "room_name": .string(), "room_alias": .string(),
                    "user_is_target": .boolean(), "prio": .choice("high", "low"),
                    "content": .anyObject(description: "the event's content (not with event_id_only)"),
                    "counts": .object(
                        requiring: [],
                        [
                            "unread": .integer(description: "the badge", minimum: (0, exclusive: false)),
                            "missed_calls": .integer(minimum: (0, exclusive: false)),
                        ]),
                    "devices": .array(
                        minItems: 1, maxItems: MatrixNotification.maxDevices, items: deviceSchema),
                ])
        ])

    static let notifyOperation = APIOperation(
        .post, path, tags: ["Matrix"],
        summary: "Matrix push gateway: a homeserver's HTTP pusher notifies a user's devices.",
        description: """
            The Push Gateway API of the Matrix specification (what Sygnal serves); set a pusher's data.url to \
            https://<host>/_matrix/push/v1/notify. No credential. Each device's app_id names a Herald app and route \
            (app.<id>.matrix.app_ids: apns, apns_sandbox or fcm); its pushkey is the device's token, registered \
            like any installation or on first use (at most app.<id>.matrix.new_pushkeys_per_minute a minute per \
            client address). Each push is queued (durable, retried, recorded, source matrix): with format \
            event_id_only a data push with event_id, room_id and unread_count; otherwise an alert (the room or \
            sender as title, the message as body). counts.unread is the badge, prio low a normal-priority push. \
            The answer comes before the push is sent: rejected lists the pushkeys Herald knows are dead (an app id \
            no app serves, a token the provider refused, a pushkey that cannot be a token of its route), so the \
            homeserver deletes those pushers.
            """,
        security: .none, body: notifyBody,
        responses: [
            (
                200,
                .json(
                    "Queued for the devices Herald serves.",
                    .object(
                        requiring: ["rejected"],
                        ["rejected": .array(items: .string(description: "a pushkey to drop"))]))
            ),
            failure(400, "The body is not JSON (M_NOT_JSON) or not a notify request (M_BAD_JSON)."),
            failure(413, "The body is larger than http.max_body_bytes (M_TOO_LARGE)."),
            failure(
                429,
                "Too many new pushkeys from this address (M_LIMIT_EXCEEDED, retry_after_ms and Retry-After), or too "
                    + "many refused requests (http.auth_failures_per_minute)."),
            failure(503, "Herald cannot take notifications now (M_UNKNOWN): the homeserver retries."),
        ])
}

import HTTPTypes
import HeraldAPI
import HeraldCore
import OpenAPIKit

extension LiveActivityRoutes {
    static let prefix = "/v1/live-activities"

    static let idPattern = "^[A-Za-z0-9._-]{1,64}$"

    static let alert = JSONSchema.object(
        closed: true,
        [
            "title": .string(minLength: 1, maxLength: 1000), "body": .string(minLength: 1, maxLength: 4000),
            "sound": .string(minLength: 1, maxLength: 256),
        ])

    /// The members a start and an update share.
    static let options: OrderedDictionary<String, JSONSchema> = [
        "content_state": .anyObject(description: "the activity's ContentState, as the app's Codable type reads it"),
        "alert": alert,
        "stale_date": .integer(
            description: "seconds since 1970: when the system shows the activity as outdated",
            maximum: (LiveActivityRequest.maxDate, exclusive: false), minimum: (0, exclusive: false)),
        "dismissal_date": .integer(
            description: "seconds since 1970: when an ended activity leaves the Lock Screen (default: 4 hours after)",
            maximum: (LiveActivityRequest.maxDate, exclusive: false), minimum: (0, exclusive: false)),
        "relevance_score": .number(minimum: (0, exclusive: false)),
        "priority": .choice(
            "high", "normal",
            description: "high: APNs priority 10 within the activity's hourly budget; default normal (5)"),
        "expiration_interval": .integer(
            description: "seconds the push is worth sending",
            maximum: (SendRequest.maxExpirationInterval, exclusive: false), minimum: (1, exclusive: false)),
        "idempotency_key": .string(minLength: 1, maxLength: SendRequest.maxIdempotencyKeyLength),
    ]

    /// The shared members and a route's own.
    static func withOptions(_ own: KeyValuePairs<String, JSONSchema>) -> [(String, JSONSchema)] {
        own.map { ($0.key, $0.value) } + options.map { ($0.key, $0.value) }
    }

    static let acceptance = JSONSchema.object(
        requiring: ["id", "notification_id", "revision", "priority", "status"],
        [
            "id": .string(description: "the activity's id"),
            "notification_id": .string(description: "the notification carrying this push (GET /v1/notifications/{id})"),
            "revision": .integer(description: "the store-assigned revision: the start is 1"),
            "priority": .choice("high", "normal"), "status": .choice(NotificationStatus.self),
        ])

    static let startOperation = APIOperation(
        .post, prefix,
        summary: "Start a Live Activity by push-to-start on installations Herald knows (server key).",
        description: """
            Each iPhone of the target with a push-to-start token for `attributes_type` gets an ActivityKit `start` \
            push; each Android or direct-channel device a data message (docs/live-activities.md). Herald adds its \
            activity id to `attributes` as `herald-activity-id`, for the app to report the activity's push token.
            """,
        body: .object(
            requiring: ["target", "attributes_type", "content_state", "alert"], closed: true,
            members: withOptions([
                "target": .ref("NotificationTarget"),
                "id": .string(description: "the activity's id (default: generated)", pattern: idPattern),
                "attributes_type": .string(
                    description: "the Swift type of the activity's ActivityAttributes", minLength: 1,
                    maxLength: LiveActivityRequest.maxTypeLength),
                "attributes": .anyObject(description: "the activity's static attributes"),
                "input_push_token": .boolean(description: "ask the started activity for its push token (default true)"),
                "input_push_channel": .string(
                    description: "a channel of /v1/live-activities/channels the activity subscribes to",
                    pattern: idPattern),
            ])),
        responses: [
            (202, .json("Accepted: the start is on its way.", acceptance)),
            (200, .json("An earlier start with the same idempotency key.", acceptance)),
        ] + .errors(400, 401, 403, 409, 413))

    static let readOperation = APIOperation(
        .get, prefix + "/{id}", summary: "One Live Activity: its state, last revision and devices.",
        responses: [(200, .json("The activity.", .ref("LiveActivity")))] + .errors(401, 403, 404))

    static let updateOperation = APIOperation(
        .post, prefix + "/{id}/updates",
        summary: "Update or end a Live Activity on every device taking part (server key).",
        description: """
            Each update gets the next revision; a device is never sent an older revision after a newer one. \
            `content_state` is required for `update`.
            """,
        body: .object(
            requiring: ["event"], closed: true, members: withOptions(["event": .choice("update", "end")])),
        responses: [
            (202, .json("Accepted.", acceptance)),
            (200, .json("An earlier update with the same idempotency key.", acceptance)),
        ] + .errors(400, 401, 403, 404, 409, 413))

    static let schemas: OrderedDictionary<String, JSONSchema> = [
        "LiveActivity": .object(
            requiring: [
                "id", "attributes_type", "state", "revision", "devices", "ended_at", "dismissal_at", "created_at",
                "updated_at",
            ],
            [
                "id": .string, "attributes_type": .string, "state": .choice("active", "ended"),
                "revision": .integer, "devices": .integer(description: "installations taking part"),
                "ended_at": .dateTime(nullable: true), "dismissal_at": .dateTime(nullable: true),
                "created_at": .dateTime(), "updated_at": .dateTime(),
            ]),
        "LiveActivityChannel": channelSchema,
    ]
}

extension LiveActivityTokenRoutes {
    static let prefix = InstallationRoutes.prefix + "/{id}/live-activities"

    static let tokenInfo = JSONSchema.object(
        requiring: ["attributes_type", "token_suffix", "updated_at"],
        [
            "activity_id": .string, "attributes_type": .string,
            "token_suffix": .nullableString(description: "the token's last 8 characters; null without a token"),
            "updated_at": .dateTime(),
        ])

    static let listOperation = APIOperation(
        .get, prefix, summary: "An installation's push-to-start tokens and the activities it takes part in.",
        responses: [
            (
                200,
                .json(
                    "Its tokens (never whole).",
                    .object(
                        requiring: ["push_to_start", "activities"],
                        ["push_to_start": .array(items: tokenInfo), "activities": .array(items: tokenInfo)]))
            )
        ] + .errors(401, 403, 404))

    static let setPushToStartOperation = APIOperation(
        .put, prefix + "/push-to-start/{attributes_type}",
        summary: "Store an iPhone's push-to-start token for an attributes type (`pushToStartTokenUpdates`).",
        body: .object(requiring: ["token"], closed: true, ["token": .string(description: "hex", minLength: 64)]),
        responses: [(200, .json("Stored.", tokenInfo))] + .errors(400, 401, 403, 404, 413))

    static let removePushToStartOperation = APIOperation(
        .delete, prefix + "/push-to-start/{attributes_type}", summary: "Forget a push-to-start token.",
        responses: [(204, .empty("Forgotten."))] + .errors(401, 403, 404))

    static let setActivityOperation = APIOperation(
        .put, prefix + "/{activity_id}",
        summary: "Take part in an activity: an iPhone with the activity's push token (`pushTokenUpdates`).",
        description: """
            An APNs installation gives the activity's token; an Android or direct-channel installation gives none \
            (its own token carries the activity). An activity the app started itself is created by its first token.
            """,
        body: .object(
            requiring: ["attributes_type"], closed: true,
            [
                "attributes_type": .string(minLength: 1, maxLength: LiveActivityRequest.maxTypeLength),
                "token": .string(description: "hex (APNs installations)", minLength: 64, maxLength: 2048),
            ]),
        responses: [(200, .json("Stored.", tokenInfo))] + .errors(400, 401, 403, 404, 413))

    static let removeActivityOperation = APIOperation(
        .delete, prefix + "/{activity_id}", summary: "The activity ended on the device: forget its token.",
        responses: [(204, .empty("Forgotten."))] + .errors(401, 403, 404))
}

extension LiveActivityRoutes {
    static let channelsPrefix = prefix + "/channels"

    static let createChannelOperation = APIOperation(
        .post, channelsPrefix,
        summary: "Create an iOS 18 broadcast channel through APNs' channel management service (server key).",
        description: """
            The channel belongs to the app's bundle id (`app.<id>.apns.topic`). Start activities on it with \
            `input_push_channel`, or let the app subscribe its own; a broadcast reaches every subscriber with one push.
            """,
        body: .object(
            closed: true,
            [
                "id": .string(description: "the channel's id in Herald (default: generated)", pattern: idPattern),
                "message_storage_policy": .choice(
                    LiveActivityChannel.StoragePolicy.self,
                    description: "none (default): offline devices miss broadcasts; most_recent: APNs keeps the last"),
                "environment": .ref("Environment", description: "the APNs environment (default production)"),
            ]),
        responses: [(201, .json("Created at APNs.", .ref("LiveActivityChannel")))]
            + .errors(400, 401, 403, 409, 413, 503)
    )

    static let listChannelsOperation = APIOperation(
        .get, channelsPrefix, summary: "The app's broadcast channels.",
        responses: [(200, .json("Every channel (one page).", APISchemas.list(of: "LiveActivityChannel")))]
            + .errors(401, 403))

    static let deleteChannelOperation = APIOperation(
        .delete, channelsPrefix + "/{id}", summary: "Delete a broadcast channel at APNs and in Herald.",
        responses: [(204, .empty("Deleted."))] + .errors(401, 403, 404, 409, 503))

    static let broadcastOperation = APIOperation(
        .post, channelsPrefix + "/{id}/updates",
        summary: "Broadcast an update or an end to every activity subscribed to the channel: one push to APNs.",
        body: .object(
            requiring: ["event"], closed: true, members: withOptions(["event": .choice("update", "end")])),
        responses: [
            (202, .json("Accepted.", acceptance)),
            (200, .json("An earlier broadcast with the same idempotency key.", acceptance)),
        ] + .errors(400, 401, 403, 404, 409, 413))

    static let channelSchema = JSONSchema.object(
        requiring: ["id", "apns_channel_id", "message_storage_policy", "environment", "created_at"],
        [
            "id": .string, "apns_channel_id": .string(description: "APNs' id (base64), which devices subscribe to"),
            "message_storage_policy": .choice(LiveActivityChannel.StoragePolicy.self),
            "environment": .ref("Environment"), "created_at": .dateTime(),
        ])
}

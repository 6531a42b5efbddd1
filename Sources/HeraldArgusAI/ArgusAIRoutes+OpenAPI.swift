import HTTPTypes
import HeraldAPI
import HeraldCore
import OpenAPIKit

extension ArgusAIRoutes {
    package static let prefix = "/api/v1"
    package static let tags = ["ArgusAI"]
    package static let deviceID = JSONSchema.string(format: .uuid)

    package static let registerOperation = APIOperation(
        .post, prefix + "/push/mobile/register", tags: tags,
        summary: "ArgusAI: register the caller's device (user token); upsert on (device_id, push_service).",
        description: """
            Maps to a native installation of the calling user. Always 201; preferences_created says whether \
            this registration gave the device its (default) preferences. A device registered by another user \
            moves to the caller with default preferences. Rate-limited per user \
            (app.<id>.argus.register_rate_limit).
            """,
        body: .ref("ArgusAIRegistration"),
        responses: [
            (
                201,
                .json(
                    "Registered.",
                    .object(
                        requiring: [
                            "id", "device_id", "platform", "push_service", "created_at", "preferences_created",
                        ],
                        [
                            "id": .string, "device_id": deviceID, "platform": .choice(Platform.self),
                            "push_service": .choice("apns", "fcm"), "created_at": .dateTime(),
                            "preferences_created": .boolean,
                        ]))
            ),
            (
                429,
                .custom(
                    OpenAPI.Response(
                        description: "Too many registrations; Retry-After says when to try again (seconds).",
                        headers: ["Retry-After": .b(OpenAPI.Header(schema: JSONSchema.integer))],
                        content: .json(.ref("Error"))))
            ),
        ] + .errors(400, 401, 403, 413))

    package static let updateTokenOperation = APIOperation(
        .put, prefix + "/push/mobile/tokens/{device_id}", tags: tags,
        summary: "ArgusAI: a new token for the caller's device; valid again, failure count reset.",
        pathParameters: ["device_id": deviceID],
        body: .object(requiring: ["device_token"], ["device_token": .string(minLength: 1, maxLength: 4096)]),
        responses: [
            (
                200,
                .json(
                    "Updated.",
                    .object(
                        requiring: ["id", "device_token_updated", "updated_at"],
                        [
                            "id": .string,
                            "device_token_updated": .boolean(
                                description: "true: the update succeeded (the same token too)"),
                            "updated_at": .dateTime(),
                        ]))
            )
        ] + .errors(400, 401, 403, 404, 413))

    package static let deleteTokenOperation = APIOperation(
        .delete, prefix + "/push/mobile/tokens/{device_id}", tags: tags,
        summary: "ArgusAI: unregister the caller's device.",
        pathParameters: ["device_id": deviceID],
        responses: [(204, .empty("Unregistered."))] + .errors(400, 401, 403, 404))

    package static let readPreferencesOperation = APIOperation(
        .post, prefix + "/push/mobile/preferences", tags: tags,
        summary: "ArgusAI: the device's preferences, created with the defaults when it has none.",
        description: """
            With device_id alone, reads. With preference members too (the document's Cross-Platform \
            Preference API request), creates or updates them as PUT does.
            """,
        body: .ref("ArgusAIPreferencesUpdate"),
        responses: [(200, .json("The preferences.", .ref("ArgusAIPreferences")))] + .errors(400, 401, 403, 404, 413))

    package static let updatePreferencesOperation = APIOperation(
        .put, prefix + "/push/mobile/preferences", tags: tags,
        summary: "ArgusAI: change the members given (for each of the device's installations).",
        body: .ref("ArgusAIPreferencesUpdate"),
        responses: [(200, .json("The preferences now.", .ref("ArgusAIPreferences")))]
            + .errors(400, 401, 403, 404, 413))

    package static let notifyEventOperation = APIOperation(
        .post, prefix + "/push/mobile/events", tags: tags,
        summary: "ArgusAI: notify a camera event (server key), once per event_id.",
        description: """
            Sends the document's security alert to the users' devices (all devices registered through the \
            dialect without user_ids): source = camera_id, category = smart_detection_type for preferences, \
            APNs category SECURITY_ALERT, FCM data message. Needs app.<id>.argus.public_base_url (503 otherwise).
            """,
        body: .object(
            requiring: ["event_id", "camera_id", "camera_name", "smart_detection_type", "description"], closed: true,
            [
                "event_id": .string(pattern: "^[A-Za-z0-9._~-]{1,\(SourceEvent.maxProducerIDLength)}$"),
                "camera_id": .string(minLength: 1, maxLength: Preferences.maxNameLength),
                "camera_name": .string(minLength: 1, maxLength: 256),
                "smart_detection_type": .string(
                    minLength: 1, maxLength: Preferences.maxNameLength, examples: ["person"]),
                "description": .string(minLength: 1, maxLength: 4000),
                "timestamp": .dateTime(),
                "user_ids": .strings(
                    minItems: 1, maxItems: NotificationTarget.maxListCount,
                    maxLength: NotificationTarget.maxUserIDLength),
            ]),
        responses: [
            (202, .json("Accepted.", .ref("ArgusAIEventAccepted"))),
            (200, .json("The event_id was notified already (the first notification).", .ref("ArgusAIEventAccepted"))),
        ] + .errors(400, 401, 403, 409, 413, 503))

    package static let listDevicesOperation = APIOperation(
        .get, prefix + "/devices", tags: tags, summary: "ArgusAI: the caller's registered devices.",
        responses: [
            (
                200,
                .json(
                    "The devices, oldest first.",
                    .object(requiring: ["devices"], ["devices": .array(items: .ref("ArgusAIDevice"))]))
            )
        ] + .errors(401, 403))

    package static let renameDeviceOperation = APIOperation(
        .patch, prefix + "/devices/{id}", tags: tags,
        summary: "ArgusAI: rename the caller's device (null clears the name).",
        body: .object(
            requiring: ["name"], closed: true,
            ["name": .string(nullable: true, minLength: 1, maxLength: ArgusAIDeviceView.maxNameLength)]),
        responses: [(200, .json("The device.", .ref("ArgusAIDevice")))] + .errors(400, 401, 403, 404, 413))

    package static let revokeDeviceOperation = APIOperation(
        .delete, prefix + "/devices/{id}", tags: tags, summary: "ArgusAI: revoke the caller's device.",
        responses: [(204, .empty("Revoked."))] + .errors(401, 403, 404))
}

extension ArgusAIRoutes {
    /// The dialect's named schemas.
    package static var schemas: OrderedDictionary<String, JSONSchema> {
        let short = InstallationRules.maxShortText
        let names = JSONSchema.strings(
            maxItems: Preferences.maxListCount, maxLength: Preferences.maxNameLength, nullable: true)
        return [
            "ArgusAIRegistration": .object(
                requiring: ["device_token", "platform", "device_id"],
                description: "Members not listed are ignored.",
                [
                    "device_token": .string(
                        description: "hex or base64 (an FCM token may join two parts with ':')", minLength: 1,
                        maxLength: 4096),
                    "platform": .string(allowedValues: ArgusAIRegistration.platforms.map { AnyCodable($0.rawValue) }),
                    "push_service": .string(
                        description: "default apns for Apple platforms, fcm for Android",
                        allowedValues: ArgusAIRegistration.services.map { AnyCodable($0.rawValue) }),
                    "token_type": .choice(PushEnvironment.self),
                    "device_id": .string(format: .uuid),
                    "device_model": .string(minLength: 1, maxLength: short),
                    "os_version": .string(minLength: 1, maxLength: short),
                    "app_version": .string(minLength: 1, maxLength: short),
                    "app_bundle_id": .string(description: "the APNs topic", minLength: 1, maxLength: short),
                    "device_name": .string(minLength: 1, maxLength: ArgusAIDeviceView.maxNameLength),
                ]),
            "ArgusAIPreferences": .object(
                requiring: ["id", "enabled_cameras", "enabled_object_types", "quiet_hours_enabled", "sound_enabled"],
                [
                    "id": .string(description: "the device's id (one preferences record per device)"),
                    "token_id": .string,
                    "enabled_cameras": names, "enabled_object_types": names,
                    "quiet_hours_enabled": .boolean,
                    "quiet_hours_start": .string(
                        description: "kept while quiet hours are off; 22:00 when never set",
                        pattern: APISchemas.timePattern,
                        examples: ["22:00"]),
                    "quiet_hours_end": .string(
                        description: "kept while quiet hours are off; 07:00 when never set",
                        pattern: APISchemas.timePattern,
                        examples: ["07:00"]),
                    "timezone": .string(description: "the device's IANA time zone, which quiet hours use"),
                    "sound_enabled": .boolean,
                ]),
            "ArgusAIPreferencesUpdate": .object(
                requiring: ["device_id"],
                description: "Members left out keep their value.",
                [
                    "device_id": .string(format: .uuid),
                    "enabled_cameras": names, "enabled_object_types": names,
                    "quiet_hours_enabled": .boolean,
                    "quiet_hours_start": .string(pattern: APISchemas.timePattern, examples: ["22:00"]),
                    "quiet_hours_end": .string(pattern: APISchemas.timePattern, examples: ["07:00"]),
                    "timezone": .string(nullable: true, minLength: 1, maxLength: 64),
                    "sound_enabled": .boolean,
                ]),
            "ArgusAIDevice": .object(
                requiring: ["id", "platform", "push_service", "is_active", "created_at"],
                [
                    "id": .string, "device_id": .nullableString(), "name": .nullableString(),
                    "platform": .string, "push_service": .string, "token_type": .choice(PushEnvironment.self),
                    "device_model": .nullableString(), "os_version": .nullableString(),
                    "app_version": .nullableString(), "app_bundle_id": .nullableString(),
                    "is_active": .boolean, "failure_count": .integer,
                    "last_failure_at": .dateTime(nullable: true), "last_used_at": .dateTime(nullable: true),
                    "created_at": .dateTime(), "updated_at": .dateTime(),
                ]),
            "ArgusAIEventAccepted": .object(
                requiring: ["notification_id", "status", "event_id"],
                [
                    "notification_id": .string, "status": .string, "event_id": .string,
                    "notification": .anyObject(
                        description: "the document's unified payload (title, body, event_id, camera_id, camera_name, "
                            + "smart_detection_type, thumbnail_url, url, timestamp, actions, category, sound, priority)"
                    ),
                ]),
        ]
    }
}

import HTTPTypes
import HeraldAPI
import HeraldCore
import OpenAPIKit

extension AOVISRoutes {
    /// A device's id or alias in a path: 1 to 100 printable ASCII characters, no spaces.
    package static let deviceReference = JSONSchema.string(
        description: "the device's id or alias", minLength: 1, maxLength: SourceDevice.maxReferenceLength,
        pattern: "^[!-~]+$")

    /// The guide's error body under `status`.
    package static func failure(_ status: Int, _ description: String) -> (Int, APIResponse) {
        (status, .json(description, .ref("AOVISError")))
    }

    package static let registerOperation = APIOperation(
        .post, prefix + "/push/register", tags: ["AOVIS"],
        summary: "AOVIS: register an APNs or FCM token for the signed-in user (the AOVIS guide, section 4).",
        description: """
            Authorization is the app's user token (a JWT or an introspected session token). ios maps to APNs \
            (environment from app.<id>.aovis.apns_environment), android to FCM. Upsert on (user, platform, \
            token): a repeat returns the same push_token_id; a token registered by another user moves to this \
            one. deviceId (a camera's id or alias) must be a device the user owns with ACTIVE status. Errors \
            use the guide's bodies, not the native shape.
            """,
        body: .ref("AOVISRegistration"),
        responses: [
            (
                200,
                .json(
                    "Registered (created or updated).",
                    .object(
                        requiring: ["success", "push_token_id"],
                        [
                            "success": .boolean(allowedValues: [true]),
                            "push_token_id": .string(description: "the installation id"),
                        ]))
            ),
            failure(400, #"A malformed body, or a deviceId not owned ACTIVE by the user: {"error":"invalid_body"}."#),
            failure(401, #"The app token is missing or invalid: {"error":"invalid_session"}."#),
            failure(
                429,
                #"Too many registrations by this user (app.<id>.registrations_per_minute), or too many refused "#
                    + #"credentials from this address (http.auth_failures_per_minute): {"error":"rate_limited"}, "#
                    + "with Retry-After."),
            failure(500, #"An unexpected failure: {"error":"internal_error"}."#),
        ])

    package static let createDeviceOperation = APIOperation(
        .post, prefix + "/devices", tags: ["AOVIS"], summary: "AOVIS: create a camera device (server key).",
        body: .object(
            closed: true,
            [
                "id": .string(
                    description: "generated when absent", minLength: 1, maxLength: SourceDevice.maxReferenceLength,
                    pattern: "^[!-~]+$"),
                "alias": .string(
                    description: "aoviseDeviceId, like aovis-n4k-3f9a2c", minLength: 1,
                    maxLength: SourceDevice.maxReferenceLength, pattern: "^[!-~]+$"),
                "name": .string(
                    description: "used in titles: Vehicle detected at <name>", minLength: 1,
                    maxLength: SourceDevice.maxNameLength),
            ]),
        responses: [(201, .json("The new device.", .ref("AOVISDevice")))] + .errors(400, 401, 403, 409, 413))

    package static let readDeviceOperation = APIOperation(
        .get, prefix + "/devices/{id}", tags: ["AOVIS"], summary: "AOVIS: a camera device and its owners (server key).",
        pathParameters: ["id": deviceReference],
        responses: [(200, .json("The device.", .ref("AOVISDevice")))] + .errors(401, 403, 404))

    package static let setOwnerOperation = APIOperation(
        .put, prefix + "/devices/{id}/owners/{user_id}", tags: ["AOVIS"],
        summary: "AOVIS: grant (ACTIVE) or revoke (REVOKED) a user's ownership of a camera (server key).",
        pathParameters: [
            "id": deviceReference, "user_id": .string(minLength: 1, maxLength: InstallationRules.maxShortText),
        ],
        body: .object(requiring: ["status"], closed: true, ["status": .choice(Ownership.Status.self)]),
        responses: [(200, .json("The ownership as stored.", .ref("AOVISOwnership")))]
            + .errors(400, 401, 403, 404, 413))

    package static let intakeEventOperation = APIOperation(
        .post, prefix + "/events", tags: ["AOVIS"],
        summary: "AOVIS: take a classified camera event and notify the camera's ACTIVE owners (server key).",
        description: """
            Stored with status classified, together with one notification to every ACTIVE owner's \
            installations (title from formatPushTitle, the summary cut to 80 characters, deep link \
            aovis://event/<id>, data cloudEventId, deviceId, eventType). A repeated eventId returns the first \
            event (200) and notifies no one again.
            """,
        body: .object(
            requiring: ["eventId", "deviceId", "classifyEventType", "classifySummaryShort"], closed: true,
            [
                "id": .string(
                    description: "the id of AOVIS's CloudEvent record (cloudEvent.id), used in the deep link; "
                        + "Herald's id when absent",
                    pattern: "^[A-Za-z0-9._~-]{1,\(SourceEvent.maxProducerIDLength)}$"),
                "eventId": .string(description: "the producer's id of the event", minLength: 1, maxLength: 255),
                "deviceId": deviceReference,
                "classifyEventType": .choice(AOVISEventType.self),
                "classifySummaryShort": .string(minLength: 1, maxLength: AOVISEventIntake.maxSummaryLength),
                "thumbnailS3Key": .string(minLength: 1, maxLength: 2048),
                "occurredAt": .dateTime(),
            ]),
        responses: [
            (201, .json("The new event (pushSent becomes true once a device accepts the push).", .ref("AOVISEvent"))),
            (200, .json("The event stored earlier with this eventId.", .ref("AOVISEvent"))),
        ] + .errors(400, 401, 403, 409, 413))

    package static let readEventOperation = APIOperation(
        .get, prefix + "/events/{id}", tags: ["AOVIS"],
        summary: "AOVIS: one camera event with pushSent and pushSentAt (server key).",
        pathParameters: ["id": .string(description: "the CloudEvent id or Herald's id of the event", minLength: 1)],
        responses: [(200, .json("The event.", .ref("AOVISEvent")))] + .errors(401, 403, 404))
}

extension AOVISRoutes {
    /// The dialect's named schemas.
    package static var schemas: OrderedDictionary<String, JSONSchema> {
        [
            "AOVISError": .object(
                requiring: ["error"],
                ["error": .choice("invalid_session", "invalid_body", "rate_limited", "internal_error")]),
            "AOVISRegistration": .object(
                requiring: ["platform", "token"],
                description: "Members not listed are ignored.",
                [
                    "platform": .choice("ios", "android"),
                    "token": .string(
                        description: "APNs (hex) or FCM token", minLength: 1,
                        maxLength: AOVISRegistration.maxTokenLength),
                    "deviceId": .string(
                        description: "a camera the user owns (ACTIVE), by id or alias", minLength: 1,
                        maxLength: SourceDevice.maxReferenceLength, pattern: "^[!-~]+$"),
                    "locale": .string(
                        minLength: 1, maxLength: 64, defaultValue: AnyCodable(AOVISRegistration.defaultLocale)),
                    "timezone": .string(
                        minLength: 1, maxLength: 64, defaultValue: AnyCodable(AOVISRegistration.defaultTimeZone)),
                ]),
            "AOVISDevice": .object(
                requiring: ["id", "owners", "createdAt", "updatedAt"],
                [
                    "id": .string, "alias": .nullableString(), "name": .nullableString(),
                    "owners": .array(items: .ref("AOVISOwnership")),
                    "createdAt": .dateTime(), "updatedAt": .dateTime(),
                ]),
            "AOVISOwnership": .object(
                requiring: ["deviceId", "userId", "status"],
                [
                    "deviceId": .string, "userId": .string, "status": .choice(Ownership.Status.self),
                    "createdAt": .dateTime(), "updatedAt": .dateTime(),
                ]),
            "AOVISEvent": .object(
                requiring: ["id", "heraldId", "eventId", "deviceId", "pushSent"],
                [
                    "id": .string(
                        description: "cloudEventId, the id in aovis://event/<id>: the CloudEvent id sent, else Herald's"
                    ),
                    "heraldId": .string(description: "Herald's id of the event"),
                    "eventId": .string, "deviceId": .string, "deviceAlias": .nullableString(),
                    "status": .choice(AOVISRoutes.classified),
                    "classifyEventType": .choice(AOVISEventType.self),
                    "classifySummaryShort": .string,
                    "thumbnailS3Key": .nullableString(),
                    "occurredAt": .dateTime(nullable: true),
                    "owners": .strings(description: "the ACTIVE owners when the event came in"),
                    "notificationId": .nullableString(),
                    "pushSent": .boolean,
                    "pushSentAt": .dateTime(nullable: true),
                    "createdAt": .dateTime(),
                ]),
        ]
    }
}

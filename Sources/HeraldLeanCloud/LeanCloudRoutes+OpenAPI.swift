import HTTPTypes
import HeraldAPI
import HeraldCore
import OpenAPIKit

extension LeanCloudRoutes {
    /// LeanCloud's error body.
    package static let failureSchema = JSONSchema.object(
        requiring: ["code", "error"],
        [
            "code": .integer(
                description: "LeanCloud's code: 1 internal, 101 not found, 102 bad query, 105 bad key, 107 malformed "
                    + "JSON, 111 wrong type, 112 bad channel, 114 bad device token, 116 too large, 119 master key "
                    + "required, 135 bad deviceType, 401 unauthorized, 429 too many requests (installations saved "
                    + "with the app key, app.<id>.registrations_per_minute; refused credentials from this address, "
                    + "http.auth_failures_per_minute), with Retry-After"),
            "error": .string(description: "what went wrong"),
        ])

    package static func failures(_ statuses: Int...) -> [(Int, APIResponse)] {
        statuses.map { ($0, .json("A LeanCloud error.", failureSchema)) }
    }

    /// The authentication headers, all optional in the document: one of the forms is needed.
    package static let authHeaders: [OpenAPI.Parameter] = [
        ("X-LC-Id", "the LeanCloud app id (app.<id>.leancloud.app_id)"),
        ("X-LC-Key", "the app key, or '<master key>,master'"),
        ("X-LC-Sign", "md5(timestamp + key) hex, timestamp in ms[, master]"),
        ("X-AVOSCloud-Application-Id", "the older name of X-LC-Id"),
        ("X-AVOSCloud-Application-Key", "the older name of X-LC-Key"),
        ("X-AVOSCloud-Master-Key", "the master key"),
        ("X-AVOSCloud-Request-Sign", "the older name of X-LC-Sign"),
    ].map { name, description in
        OpenAPI.Parameter.header(name: name, required: false, schema: .string(), description: description)
    }

    package static let objectSchema = JSONSchema.object(
        description: "A LeanCloud object (objectId, createdAt, updatedAt…).")

    /// `_User` at both of its paths.
    package static let userOperations: [APIOperation] = ["/1.1/users", "/1.1/classes/_User"].flatMap { base in
        userOperations(base)
    }

    private static func userOperations(_ base: String) -> [APIOperation] {
        [
            operation(
                .post, base, summary: "LeanCloud: create a _User object (master key; fields such as GeoPoints).",
                body: userBody, responses: [(201, .json("Created; Location names it.", objectSchema))]),
            operation(
                .get, base + "/{objectId}", summary: "LeanCloud: one _User object (master key).",
                responses: [(200, .json("The user.", objectSchema))]),
            operation(
                .put, base + "/{objectId}", summary: "LeanCloud: update a _User object's fields (master key).",
                body: userBody, responses: [(200, .json("Updated: updatedAt.", objectSchema))]),
            operation(
                .delete, base + "/{objectId}", summary: "LeanCloud: delete a _User object (master key).",
                responses: [(200, .json("Deleted: {}.", .object(description: "empty")))]),
        ]
    }

    package static let userBody = JSONSchema.object(
        description: """
            The user's fields (letters, digits and _; GeoPoints as {"__type":"GeoPoint","latitude","longitude"});             {"__op":"Delete"} removes one. Installation queries reach them with $inQuery on a pointer (owner).
            """)

    package static let installationBody = JSONSchema.object(
        description: """
            deviceType (ios, android), deviceToken (ios), installationId, registrationId + vendor "fcm" (android FCM), \
            badge (or {"__op":"Increment"}), timeZone, channels (or {"__op":"AddUnique"/"Add"/"Remove","objects":[…]}), \
            apnsTopic, apnsTeamId, appVersion, valid (master key), and any custom field ({"__op":"Delete"} removes one).
            """)

    package static func operation(
        _ method: HTTPRequest.Method, _ path: String, summary: String, description: String? = nil,
        query: [QueryParameter] = [], body: JSONSchema? = nil, responses: [(Int, APIResponse)]
    ) -> APIOperation {
        APIOperation(
            method, path, tags: ["LeanCloud"], summary: summary, description: description, security: .none,
            query: query, headers: authHeaders, body: body,
            responses: responses + failures(400, 401, 403, 404, 429, 500, 503))
    }

    /// A query's parameters (installations, notifications).
    package static let queryParameters: [QueryParameter] = [
        .text("where", maxLength: maxWhereLength, description: "a JSON where object, LeanCloud's field names"),
        .text("order", maxLength: 256, description: "fields, '-' for descending, comma separated"),
        .text("keys", maxLength: 512, description: "the fields to return, comma separated"),
        .text("limit", maxLength: 4, pattern: "[0-9]+", description: "0 to 1000; 100"),
        .text("skip", maxLength: 7, pattern: "[0-9]+"),
        QueryParameter(name: "count", kind: .choice(["0", "1"]), description: "1 adds the count"),
    ]

    /// A query's answer.
    package static let resultsSchema = JSONSchema.object(
        requiring: ["results"],
        ["results": .array(items: objectSchema), "count": .integer(minimum: (0, exclusive: false))])

    package static let fetchWhenSave = QueryParameter(
        name: "fetchWhenSave", kind: .choice(["true", "false"]), description: "return every field")

    /// Every route of the dialect, under both object paths LeanCloud serves.
    package static let operations: [APIOperation] =
        ["/1.1/installations", "/1.1/classes/_Installation"].flatMap { base in
            [
                operation(
                    .post, base,
                    summary: "LeanCloud: save an installation (created, or updated by deviceToken / installationId).",
                    query: [fetchWhenSave], body: installationBody,
                    responses: [
                        (201, .json("Created; Location names it.", objectSchema)),
                        (200, .json("An existing installation updated.", objectSchema)),
                    ]),
                operation(
                    .get, base, summary: "LeanCloud: query installations (master key).",
                    query: queryParameters, responses: [(200, .json("The matches.", resultsSchema))]),
                operation(
                    .get, base + "/{objectId}", summary: "LeanCloud: one installation.",
                    query: [.text("keys", maxLength: 512)],
                    responses: [(200, .json("The installation.", objectSchema))]),
                operation(
                    .put, base + "/{objectId}", summary: "LeanCloud: update an installation (fields and operations).",
                    query: [fetchWhenSave], body: installationBody,
                    responses: [(200, .json("Updated: objectId, updatedAt.", objectSchema))]),
                operation(
                    .delete, base + "/{objectId}", summary: "LeanCloud: delete an installation.",
                    responses: [(200, .json("Deleted: {}.", .object(description: "empty")))]),
            ]
        } + userOperations + [
            operation(
                .post, "/1.1/push", summary: "LeanCloud: send a push (master key, or the app key with client_push).",
                description: """
                    data (alert, title (Android only), badge incl. "Increment" and sound (iOS only), content-available, \
                    mutable-content, category, action, custom keys; ios and android objects per platform), channels, where (LeanCloud's field names; $eq $ne $in $nin $all $exists $lt \
                    $lte $gt $gte $regex $and $or, $nearSphere with $maxDistance*, $within $box, $inQuery/$notInQuery on a _User pointer), cql \
                    (select * from _Installation where …), prod (dev: APNs sandbox installations), \
                    push_time, expiration_time, expiration_interval, notification_id (idempotency).
                    """,
                body: .object(
                    requiring: ["data"],
                    [
                        "data": .anyObject(), "channels": .strings(), "where": .anyObject(),
                        "prod": .choice("dev", "prod"),
                        "push_time": .string(), "expiration_time": .string(), "expiration_interval": .integer(),
                        "notification_id": .string(),
                    ]),
                responses: [
                    (
                        200,
                        .json(
                            "Accepted.",
                            .object(
                                requiring: ["objectId", "createdAt"], ["objectId": .string(), "createdAt": .string()]))
                    )
                ]),
            operation(
                .post, "/1.1/batch", summary: "LeanCloud: several installation calls in one request.",
                body: .object(
                    requiring: ["requests"],
                    [
                        "requests": .array(
                            items: .object(
                                requiring: ["method", "path"],
                                ["method": .string(), "path": .string(), "body": .anyObject()]))
                    ]),
                responses: [
                    (200, .json("One {success} or {error} per request, in order.", .array(items: .anyObject())))
                ]),
            operation(
                .get, "/1.1/classes/_Notification", summary: "LeanCloud: query the app's pushes (master key).",
                query: queryParameters, responses: [(200, .json("The matches.", resultsSchema))]),
        ]
        + ["/1.1/tables/Notifications/{objectId}", "/1.1/classes/_Notification/{objectId}"].map { path in
            operation(
                .get, path,
                summary: "LeanCloud: a push's status (status, subscribers, devices, successes, errors, data).",
                responses: [(200, .json("The _Notification object.", notificationSchema))])
        }

    /// `_Notification`: the guide's `status` and `subscribers`, and Herald's counts beside them.
    package static let notificationSchema = JSONSchema.object(
        requiring: ["objectId", "status", "subscribers", "createdAt"],
        [
            "objectId": .string(),
            "status": .string(
                description: "\"in queue\" until the push is finished (a scheduled push too), \"done\", or an error "
                    + "message for a push that expired, was canceled or failed",
                allowedValues: LeanCloudNotification.allStatuses.map { AnyCodable($0) }),
            "subscribers": .integer(description: "the devices the push reached", minimum: (0, exclusive: false)),
            "devices": .integer(description: "the devices it targeted", minimum: (0, exclusive: false)),
            "successes": .integer(
                description: "the devices a provider accepted it for", minimum: (0, exclusive: false)),
            "errors": .integer(description: "the devices it failed for", minimum: (0, exclusive: false)),
            "data": .anyObject(), "where": .anyObject(),
            "push_time": .string(), "expiration_time": .string(), "createdAt": .string(), "updatedAt": .string(),
        ])
}

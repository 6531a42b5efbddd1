import HTTPTypes
import HeraldAPI
import HeraldCore
import OpenAPIKit

extension WebhookRoutes {
    static let prefix = "/v1/webhooks"

    static let eventNames = JSONSchema.array(
        minItems: 1,
        items: .string(
            allowedValues: (WebhookEventType.subscribable.map(\.rawValue) + ["*"]).map { AnyCodable($0) }))

    static let createOperation = APIOperation(
        .post, prefix,
        summary: "Add a webhook endpoint (server key). Its signing secret is in this answer only.",
        description: """
            The URL must be https (http only with `webhooks.allow_http`) and must not lead to a private, loopback, \
            link-local or other local address unless `webhooks.allow_networks` lists it. `events` names the event \
            types it receives (`*`: all). docs/webhooks.md has the events and how to verify their signatures.
            """,
        body: .object(
            requiring: ["url", "events"], closed: true,
            [
                "id": .string(
                    description: "The endpoint's id within the app (default: generated).", minLength: 1,
                    maxLength: WebhookEndpointChange.maxIDLength, pattern: "^[A-Za-z0-9_-]+$"),
                "url": .string(minLength: 1, maxLength: WebhookEndpointChange.maxURLLength),
                "events": eventNames,
                "description": .string(maxLength: WebhookEndpointChange.maxDescriptionLength),
                "enabled": .boolean(description: "default true"),
            ]),
        responses: [
            (
                201,
                .json(
                    "Created: the endpoint, with its `secret` (`whsec_…`), shown this once.",
                    .ref("WebhookEndpointCreated"))
            )
        ] + .errors(400, 401, 403, 409, 413))

    static let listOperation = APIOperation(
        .get, prefix, summary: "The app's webhook endpoints, with their health.",
        responses: [
            (
                200,
                .json(
                    "Every endpoint (one page).",
                    .object(
                        requiring: ["data", "next_cursor"],
                        ["data": .array(items: .ref("WebhookEndpoint")), "next_cursor": .nullableString()]))
            )
        ] + .errors(401, 403))

    static let readOperation = APIOperation(
        .get, prefix + "/{id}", summary: "One webhook endpoint.",
        responses: [(200, .json("The endpoint.", .ref("WebhookEndpoint")))] + .errors(401, 403, 404))

    static let updateOperation = APIOperation(
        .patch, prefix + "/{id}",
        summary: "Change a webhook endpoint: the members given. `enabled: true` enables a disabled one again.",
        body: .object(
            closed: true,
            [
                "url": .string(minLength: 1, maxLength: WebhookEndpointChange.maxURLLength),
                "events": eventNames,
                "description": .string(maxLength: WebhookEndpointChange.maxDescriptionLength),
                "enabled": .boolean,
            ]),
        responses: [(200, .json("The endpoint.", .ref("WebhookEndpoint")))]
            + .errors(400, 401, 403, 404, 409, 413))

    static let deleteOperation = APIOperation(
        .delete, prefix + "/{id}", summary: "Delete a webhook endpoint and the events waiting for it.",
        responses: [(204, .empty("Deleted."))] + .errors(401, 403, 404, 409))

    static let rotateOperation = APIOperation(
        .post, prefix + "/{id}/rotate-secret",
        summary: "A new signing secret, shown this once; the previous ones sign beside it until the overlap ends.",
        body: .object(
            closed: true,
            [
                "overlap_seconds": .integer(
                    description: "How long the previous secrets keep signing (default 86400).",
                    maximum: (maxOverlapSeconds, exclusive: false), minimum: (0, exclusive: false))
            ]),
        responses: [
            (
                200,
                .json(
                    "The new secret.",
                    .object(
                        requiring: ["id", "secret", "previous_secrets_expire_at"],
                        ["id": .string, "secret": .string, "previous_secrets_expire_at": .dateTime(nullable: true)]))
            )
        ] + .errors(400, 401, 403, 404, 409, 413))

    static let testOperation = APIOperation(
        .post, prefix + "/{id}/test", summary: "Send the endpoint a `webhook.test` event (through the outbox).",
        responses: [
            (
                202,
                .json(
                    "Queued.",
                    .object(requiring: ["event_id", "type"], ["event_id": .string, "type": .choice("webhook.test")]))
            )
        ] + .errors(401, 403, 404, 409))

    static let deliveriesParameters: [QueryParameter] = [.limit]

    static let deliveriesOperation = APIOperation(
        .get, prefix + "/{id}/deliveries",
        summary: "The endpoint's most recent events and their attempts, newest first.",
        query: deliveriesParameters,
        responses: [
            (
                200,
                .json(
                    "The most recent events.",
                    .object(
                        requiring: ["data", "next_cursor"],
                        ["data": .array(items: .ref("WebhookDelivery")), "next_cursor": .nullableString()]))
            )
        ] + .errors(400, 401, 403, 404))

    static let replayOperation = APIOperation(
        .post, prefix + "/{id}/replay",
        summary: "Send the endpoint's events from a time on again, as kept (`webhook_retention_days`), with their ids.",
        body: .object(
            requiring: ["since"], closed: true,
            ["since": .dateTime(description: "events written at or after this time")]),
        responses: [
            (
                202,
                .json(
                    "Queued again.", .object(requiring: ["replayed"], ["replayed": .integer(description: "how many")]))
            )
        ] + .errors(400, 401, 403, 404, 413))

    /// The schemas the operations name.
    static let schemas: OrderedDictionary<String, JSONSchema> = [
        "WebhookEndpoint": endpointSchema(withSecret: false),
        "WebhookEndpointCreated": endpointSchema(withSecret: true),
        "WebhookDelivery": .object(
            requiring: [
                "event_id", "type", "created_at", "state", "attempts", "next_attempt_at", "last_attempt_at",
                "last_status", "last_error",
            ],
            [
                "event_id": .string, "type": .choice(WebhookEventType.self),
                "created_at": .dateTime(), "state": .choice(WebhookDelivery.State.self), "attempts": .integer,
                "next_attempt_at": .dateTime(nullable: true), "last_attempt_at": .dateTime(nullable: true),
                "last_status": .integer(nullable: true), "last_error": .nullableString(),
            ]),
    ]

    static func endpointSchema(withSecret: Bool) -> JSONSchema {
        guard !withSecret else {
            return .all(of: [
                .ref("WebhookEndpoint"),
                .object(
                    requiring: ["secret"],
                    ["secret": .string(description: "the signing secret (`whsec_…`), shown this once")]),
            ])
        }
        return .object(
            requiring: [
                "id", "url", "events", "description", "enabled", "disabled_reason", "configured", "failing_since",
                "last_success_at", "backlog", "created_at", "updated_at",
            ],
            [
                "id": .string, "url": .string, "events": .array(items: .choice(WebhookEventType.self)),
                "description": .nullableString(), "enabled": .boolean,
                "disabled_reason": .choice(WebhookEndpoint.DisabledReason.self, nullable: true),
                "configured": .boolean(description: "from the configuration: changed only there"),
                "failing_since": .dateTime(nullable: true), "last_success_at": .dateTime(nullable: true),
                "backlog": .integer(description: "events waiting to be delivered"),
                "created_at": .dateTime(), "updated_at": .dateTime(),
            ])
    }
}

import HTTPTypes
import HeraldAPI
import HeraldCore
import OpenAPIKit

/// The events Herald sends, as `/openapi.yaml`'s `webhooks` (OpenAPI 3.1): one request each, the contract of
/// docs/webhooks.md, version ``WebhookEvent/version``.
enum WebhookEventsDocument {
    /// What events say of an installation.
    static let installation: [(String, JSONSchema)] = [
        (
            "installation_id",
            .string(nullable: true, description: "Herald's id (LeanCloud's objectId); null for a raw token")
        ),
        ("user_id", .string(nullable: true)), ("device_id", .string(nullable: true)),
        ("platform", .choice(Platform.self)), ("service", .choice(PushService.self)),
        (
            "token_sha256",
            .string(description: "hex SHA-256 of the token as registered; the token itself is never sent")
        ),
    ]

    static let counts = JSONSchema.object(
        properties: members(
            [
                "targeted", "sent", "failed", "invalid", "skipped_preferences", "skipped_expired", "rate_limited",
                "opened",
            ].map { ($0, JSONSchema.integer) } + [
                (
                    "by_locale",
                    JSONSchema.object(description: "sent by localization", additionalProperties: .b(.integer))
                        .optionalSchemaObject()
                )
            ]))

    static func members(_ list: [(String, JSONSchema)]) -> OrderedDictionary<String, JSONSchema> {
        var members: OrderedDictionary<String, JSONSchema> = [:]
        for (name, schema) in list { members[name] = schema }
        return members
    }

    static let finished: [(String, JSONSchema)] = [
        ("app_id", .string), ("notification_id", .string), ("status", .choice(NotificationStatus.self)),
        ("counts", counts), ("created_at", .dateTime()), ("completed_at", .dateTime()),
    ]

    /// Each event type's `data`: its members, all present (`sns_endpoint_arn` only for SNS endpoints).
    static func data(_ type: WebhookEventType) -> [(String, JSONSchema)] {
        switch type {
        case .notificationCompleted, .notificationExpired, .notificationCanceled: finished
        case .deliveryFailed:
            [
                ("app_id", .string), ("notification_id", .string),
                ("outcome", .choice("failed", "invalid", "retrying")),
                ("reason", .string(nullable: true)), ("attempts", .integer), ("will_retry", .boolean),
                ("next_attempt_at", .dateTime(nullable: true)),
            ] + installation
        case .installationInvalidated:
            [("app_id", .string), ("reason", .string), ("notification_id", .string(nullable: true))] + installation
        case .installationRemoved:
            [("app_id", .string), ("reason", .choice("invalid", "failing", "unseen", "undelivered"))] + installation
        case .notificationOpened:
            [("app_id", .string), ("notification_id", .string), ("opened_at", .dateTime())] + installation
        case .webhookTest: [("app_id", .string), ("webhook_id", .string)]
        }
    }

    /// The event's whole body.
    static func body(_ type: WebhookEventType) -> JSONSchema {
        var data = members(Self.data(type))
        if data["token_sha256"] != nil { data["sns_endpoint_arn"] = JSONSchema.string.optionalSchemaObject() }
        return .object(
            properties: [
                "id": .string(description: "unique; the webhook-id header; the receivers' idempotency key"),
                "type": .string(allowedValues: [AnyCodable(type.rawValue)]),
                "timestamp": .dateTime(description: "when the fact happened"),
                "version": .integer(
                    description: "the contract's version", allowedValues: [AnyCodable(WebhookEvent.version)]),
                "data": .object(properties: data),
            ])
    }

    /// `webhooks`: one `POST` per event type.
    static var webhooks: OrderedDictionary<String, Either<OpenAPI.Reference<OpenAPI.PathItem>, OpenAPI.PathItem>> {
        let headers: OpenAPI.Parameter.Array = [
            ("webhook-id", "The event's id."), ("webhook-timestamp", "When this attempt was signed (Unix seconds)."),
            (
                "webhook-signature",
                "`v1,` and the base64 HMAC-SHA256 of `<id>.<timestamp>.<body>` with the secret's bytes; one per signing secret, space-separated."
            ),
        ].map { .b(.header(name: $0.0, required: true, schema: .string, description: $0.1)) }
        var result: OrderedDictionary<String, Either<OpenAPI.Reference<OpenAPI.PathItem>, OpenAPI.PathItem>> = [:]
        for type in WebhookEventType.allCases {
            let operation = OpenAPI.Operation(
                tags: ["webhooks"], summary: "The `\(type.rawValue)` event, posted to each endpoint subscribed to it.",
                description: "docs/webhooks.md has what each member means and how to verify the signature.",
                parameters: headers,
                requestBody: OpenAPI.Request(content: .json(body(type)), required: true),
                responses: [
                    200: .b(OpenAPI.Response(description: "Any 2xx delivers the event.")),
                    410: .b(OpenAPI.Response(description: "Gone: the endpoint is disabled.")),
                    .default: .b(
                        OpenAPI.Response(description: "Anything else (or no answer within 15 s) is tried again later.")),
                ], security: [])
            result[type.rawValue] = .b(OpenAPI.PathItem(post: operation))
        }
        return result
    }
}

import HTTPTypes
import HeraldAPI
import HeraldCore
import OpenAPIKit

extension UnifiedPushRoutes {
    /// A push endpoint as listed.
    static let endpointSchema = JSONSchema.object(
        requiring: ["id", "created_at"],
        [
            "id": .string(description: "the endpoint's id, to revoke it by", pattern: "^pe_[0-9a-f]{32}$"),
            "created_at": .string(format: .dateTime),
        ])

    static let createOperation = APIOperation(
        .post, managementPath, tags: ["UnifiedPush"],
        summary: "A new UnifiedPush / RFC 8030 push endpoint for the installation (server key or its user).",
        description: """
            The answer's endpoint is an unguessable URL (256 bits) under /up/ that the device hands to one app \
            server; it is shown this once (Herald keeps only its digest). Messages POSTed to it reach the \
            installation over its direct channel, or its cloud route as a data message (up_endpoint, up_body).
            """,
        responses: [
            (
                201,
                .json(
                    "The endpoint.",
                    .object(
                        requiring: ["id", "created_at", "endpoint"],
                        [
                            "id": .string(pattern: "^pe_[0-9a-f]{32}$"), "created_at": .string(format: .dateTime),
                            "endpoint": .string(format: .uri, description: "the URL app servers POST messages to"),
                        ]))
            )
        ] + .errors(401, 403, 404))

    static let listOperation = APIOperation(
        .get, managementPath, tags: ["UnifiedPush"],
        summary: "The installation's push endpoints that are not revoked (without their URLs).",
        responses: [
            (
                200,
                .json(
                    "The endpoints, oldest first.",
                    .object(requiring: ["data"], ["data": .array(items: endpointSchema)]))
            )
        ] + .errors(401, 403, 404))

    static let revokeOperation = APIOperation(
        .delete, managementPath + "/{endpoint_id}", tags: ["UnifiedPush"],
        summary: "Revokes a push endpoint: its URL answers 410 Gone from then on.",
        responses: [(204, .empty("Revoked."))] + .errors(401, 403, 404))

    static let discoveryOperation = APIOperation(
        .get, prefix + "/{secret}", tags: ["UnifiedPush"],
        summary: "UnifiedPush's discovery answer for a live push endpoint.", security: .none,
        responses: [
            (
                200,
                .json(
                    "The endpoint is a UnifiedPush endpoint.",
                    .object(
                        requiring: ["unifiedpush"],
                        [
                            "unifiedpush": .object(
                                requiring: ["version"], ["version": .integer(minimum: (1, exclusive: false))])
                        ]))
            ),
            (404, .error), (410, .error),
        ])

    static let pushOperation = APIOperation(
        .post, prefix + "/{secret}", tags: ["UnifiedPush"],
        summary: "Sends one push message (RFC 8030) to the endpoint's device.",
        description: """
            The body (at most 4,096 bytes, RFC 8291 aes128gcm for the device) is opaque: Herald never decrypts it. \
            TTL (seconds, required; 0: now or never), Urgency (very-low, low, normal, high) and Topic (1 to 32 \
            base64url characters: the collapse id) as RFC 8030 defines them. 413 when the body is larger than the \
            device's route can carry; 429 with Retry-After past app.<id>.unifiedpush.messages_per_minute.
            """,
        security: .none,
        headers: [
            .header(name: "TTL", required: true, schema: .integer(minimum: (0, exclusive: false))),
            .header(name: "Urgency", required: false, schema: .choice("very-low", "low", "normal", "high")),
            .header(
                name: "Topic", required: false,
                schema: .string(minLength: 1, maxLength: 32, pattern: "^[A-Za-z0-9_-]+$")),
        ],
        body: .string(format: .other("binary"), maxLength: UnifiedPushMessage.maxBodyBytes), bodyEncoding: .binary,
        responses: [
            (201, .empty("Accepted: Location names the message, TTL echoes the TTL kept.")),
            (400, .error), (404, .error), (410, .error), (413, .error), (429, .error), (503, .error),
        ])
}

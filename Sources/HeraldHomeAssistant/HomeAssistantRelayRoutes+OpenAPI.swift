import HTTPTypes
import HeraldAPI
import HeraldCore
import OpenAPIKit

extension HomeAssistantRelayRoutes {
    /// The `rateLimits` object.
    package static let rateLimitsSchema = JSONSchema.object(
        requiring: ["successful", "errors", "total", "maximum", "remaining", "resetsAt"],
        description: """
            The push token's counts for the current UTC day. The provider's answers count when the engine records \
            them, usually after the relay answered: an answer's successful and errors do not hold its own push yet.
            """,
        [
            "successful": .integer(
                description: "notifications the provider took today", minimum: (0, exclusive: false)),
            "errors": .integer(
                description: "requests refused today: by the relay (over the limit, too large, misconfigured) or by "
                    + "the provider", minimum: (0, exclusive: false)),
            "total": .integer(
                description: "requests counted today: accepted by the relay, and refused by it",
                minimum: (0, exclusive: false)),
            "maximum": .integer(
                description: "notifications the relay accepts per UTC day", minimum: (1, exclusive: false)),
            "remaining": .integer(
                description: "maximum - notifications the relay accepted today, at least 0",
                minimum: (0, exclusive: false)),
            "resetsAt": .string(
                format: .dateTime, description: "the next UTC midnight, like 2026-11-26T00:00:00.000Z"),
        ])

    /// Home Assistant's error body.
    package static func failure(_ status: Int, _ description: String) -> (Int, APIResponse) {
        (
            status,
            .json(
                description,
                .object(
                    requiring: ["errorType", "errorMessage", "message"],
                    [
                        "errorType": .choice(
                            "InvalidRequest", "UnknownToken", "UnknownApp", "InvalidToken", "PayloadTooLarge",
                            "RateLimited",
                            "ProviderMisconfigured", "ProviderUnavailable", "InternalError"),
                        "errorMessage": .string(description: "what went wrong, short"),
                        "message": .string(description: "what went wrong and how to fix it"),
                        "target": .string(description: "the push token (429)"),
                        "rateLimits": rateLimitsSchema,
                    ]))
        )
    }

    /// The request body Home Assistant's `mobile_app` notify platform sends.
    package static let pushBody = JSONSchema.object(
        requiring: ["message", "push_token", "registration_info"],
        [
            "message": .string(description: "the text, or a Companion command like request_location_update"),
            "title": .string(),
            "push_token": .string(
                description: "the device's token, as registered with Herald", minLength: 1,
                maxLength: HomeAssistantPushRequest.maxTokenLength),
            "registration_info": .object(
                requiring: ["app_id", "app_version"],
                [
                    "app_id": .string(minLength: 1, maxLength: HomeAssistantPushRequest.maxRegistrationText),
                    "app_version": .string(maxLength: HomeAssistantPushRequest.maxRegistrationText),
                    "os_version": .string(maxLength: HomeAssistantPushRequest.maxRegistrationText),
                    "webhook_id": .string(maxLength: HomeAssistantPushRequest.maxRegistrationText),
                ]),
            "data": .anyObject(
                description: """
                    The notify call's data: android, apns, webpush and data blocks (passed to FCM), apns_headers, \
                    push (badge, sound, interruption-level, category), subtitle, image, attachment, url, clickAction, \
                    tag, group, channel, priority (high or normal), ttl (seconds), actions, and the Companion options.
                    """),
        ])

    package static let pushOperation = APIOperation(
        .post, prefix, tags: ["Home Assistant"],
        summary: "Home Assistant push relay: the push_url of a mobile_app registration.",
        description: """
            Set a registration's app_data.push_url to http(s)://<host>/ha/push. No credential: push_token names the \
            device, an installation of an app with app.<id>.home_assistant.relay = true. A token Herald has never \
            seen is registered from the request, as the document's relay forwards any token: to the only relay app, \
            or to the one whose app.<id>.home_assistant.app_ids lists registration_info.app_id; the platform from \
            the Companion app id, the device id from webhook_id, the service from the token's shape and the app's \
            providers (APNs environment app.<id>.home_assistant.apns_environment), at most \
            app.<id>.home_assistant.new_tokens_per_minute (60) new tokens a minute per client address. An app with \
            app.<id>.home_assistant.registered_only = true relays only tokens registered through another API. A \
            token the provider refused is answered InvalidToken without a provider request, but for one push every \
            app.<id>.home_assistant.invalid_retry_hours (24) and the first after a reload, which goes to the token \
            and revives its installation when delivered. The notification goes through the engine (durable, retried, \
            recorded; its id is messageId), rendered as the Companion apps expect: a data-only FCM message on \
            Android, an APNs alert (or a background push for commands such as request_location_update, \
            clear_notification, update_widgets, command_*) on Apple devices. At most \
            app.<id>.home_assistant.max_per_day (150) notifications per token per UTC day (commands neither count \
            nor stop at the limit); counters survive restarts and reset at midnight UTC. Every answer is a JSON \
            object.
            """,
        security: .none, body: pushBody,
        responses: [
            (
                201,
                .json(
                    "Accepted for delivery.",
                    .object(
                        requiring: ["messageId", "sentPayload", "target", "rateLimits"],
                        [
                            "messageId": .string(description: "the notification id (GET /v1/notifications/{id})"),
                            "sentPayload": .anyObject(description: "the unified payload Herald delivers"),
                            "target": .string(description: "the push token"),
                            "rateLimits": rateLimitsSchema,
                        ]))
            ),
            failure(400, "The body is not a push request (InvalidRequest)."),
            failure(
                404,
                "The token is unknown and its app keeps a closed relay (UnknownToken), or no relay app takes new tokens "
                    + "from this Companion app (UnknownApp)."),
            failure(410, "The provider invalidated this token (InvalidToken): re-open the app to register."),
            failure(413, "The notification is too large for the provider, or the body too large (PayloadTooLarge)."),
            failure(
                429,
                "The token's daily maximum is reached (RateLimited), with target and rateLimits; or too many new push "
                    + "tokens (app.<id>.home_assistant.new_tokens_per_minute) or refused requests "
                    + "(http.auth_failures_per_minute) from this address, with Retry-After."),
            failure(500, "The app's provider is not configured (ProviderMisconfigured), or InternalError."),
            failure(503, "Herald cannot take notifications now (ProviderUnavailable): retry later."),
        ])

    package static let rateLimitsOperation = APIOperation(
        .post, prefix + "/rate_limits", tags: ["Home Assistant"],
        summary: "Home Assistant push relay: a push token's rate limits of the day, sending nothing.",
        description: "The body is {\"push_token\": ...}; other members are ignored. Counts nothing.",
        security: .none,
        body: .object(
            requiring: ["push_token"],
            [
                "push_token": .string(
                    minLength: 1, maxLength: HomeAssistantPushRequest.maxTokenLength)
            ]),
        responses: [
            (
                200,
                .json(
                    "The token's counters.",
                    .object(
                        requiring: ["target", "rateLimits"],
                        ["target": .string(description: "the push token"), "rateLimits": rateLimitsSchema]))
            ),
            failure(400, "The body is not a rate-limit request (InvalidRequest)."),
            failure(404, "No relay-enabled app has this push token (UnknownToken)."),
            failure(410, "The provider invalidated this token (InvalidToken)."),
            failure(413, "The body is too large (PayloadTooLarge)."),
            failure(
                429, "Too many unknown push tokens from this address (http.auth_failures_per_minute), with Retry-After."
            ),
            failure(503, "Herald cannot answer now (ProviderUnavailable)."),
        ])
}

import HeraldCore
import OpenAPIKit

/// The named schemas of `/openapi.yaml` (`#/components/schemas`), built from the limits the
/// validation code uses. Dialects declare theirs as ``Dialect/schemas``.
package enum APISchemas {
    package static let nativeNames = [
        "Error", "Status", "Platform", "Service", "Environment", "WebPushSubscription", "InstallationFields",
        "InstallationRegistration", "Installation", "InstallationList", "Preferences", "SendRequest", "Notification",
        "NotificationList", "Delivery", "DeliveryList",
    ]

    package static let channelPattern = "^[A-Za-z0-9_-]{1,\(NotificationTarget.maxChannelLength)}$"

    package static var native: OrderedDictionary<String, JSONSchema> {
        let short = InstallationRules.maxShortText
        let quietHours = JSONSchema.object(
            requiring: ["start", "end"], closed: true, nullable: true,
            [
                "start": .string(pattern: timePattern, examples: ["22:00"]),
                "end": .string(pattern: timePattern, examples: ["07:00"]),
                "timezone": .string(description: "IANA zone; default the installation's, else UTC"),
                "enabled": .boolean(
                    description: "false keeps the times without holding anything back; default true"),
            ])
        let counts = JSONSchema.object(
            requiring: Set(countNames),
            [
                "targeted": .integer, "sent": .integer, "failed": .integer, "invalid": .integer,
                "skipped_preferences": .integer, "skipped_expired": .integer, "rate_limited": .integer,
                "opened": .integer(description: "installations that reported opening it (POST /v1/opens)"),
                "by_locale": .object(
                    description: "a localized notification's sent deliveries by the localization they got "
                        + "(`default`: the default words)",
                    additionalProperties: .b(.integer)),
            ])
        return [
            "Error": .object(
                requiring: ["error"],
                [
                    "error": .object(
                        requiring: ["code", "message", "field"],
                        [
                            "code": .string(description: "stable snake_case code"),
                            "message": .string,
                            "field": .nullableString(description: "the request field at fault"),
                        ])
                ]),
            "Status": .object(requiring: ["status"], ["status": .string]),
            "Platform": .choice(Platform.self),
            "Service": .choice(PushService.self),
            "Environment": .choice(PushEnvironment.self),
            "WebPushSubscription": .object(
                requiring: ["endpoint", "keys"], closed: true,
                [
                    "endpoint": .string(
                        format: .uri, description: "https push service URL", maxLength: 2048, pattern: "^https://"),
                    "expirationTime": .number(nullable: true),
                    "keys": .object(
                        requiring: ["p256dh", "auth"], closed: true,
                        [
                            "p256dh": .string(
                                description: "base64url uncompressed P-256 point (65 bytes)",
                                pattern: "^[A-Za-z0-9_-]{86,88}={0,2}$"),
                            "auth": .string(
                                description: "base64url 16-byte secret", pattern: "^[A-Za-z0-9_-]{22}(==)?$"),
                        ]),
                ]),
            "InstallationFields": .object(
                closed: true,
                [
                    "user_id": .nullableString(maxLength: short),
                    "device_id": .nullableString(maxLength: short),
                    "platform": .ref("Platform"),
                    "environment": .ref("Environment"),
                    "token": .string(
                        description: """
                            APNs: even-length hex, \(InstallationRules.apnsTokenLengths.lowerBound) to \
                            \(InstallationRules.apnsTokenLengths.upperBound) characters; FCM: 1 to 4096 printable \
                            ASCII, no spaces; SNS: by the platform behind it
                            """, minLength: 1, maxLength: 4096),
                    "subscription": .ref("WebPushSubscription"),
                    "channels": .strings(maxItems: InstallationRules.maxChannels, pattern: channelPattern),
                    "locale": .string(
                        nullable: true, minLength: 1, maxLength: 64, pattern: "^[A-Za-z]{2,8}([_-][A-Za-z0-9]{1,8})*$",
                        examples: ["en", "zh-Hans-CN"]),
                    "timezone": .string(nullable: true, description: "IANA time zone", minLength: 1, maxLength: 64),
                    "badge": .integer(maximum: (Int(Int32.max), exclusive: false), minimum: (0, exclusive: false)),
                    "app_version": .nullableString(maxLength: short),
                    "os_version": .nullableString(maxLength: short),
                    "device_model": .nullableString(maxLength: short),
                    "bundle_id": .nullableString(maxLength: short),
                    "attributes": .anyObject(
                        description: "free JSON object, at most \(InstallationRules.maxAttributesBytes) bytes"),
                ]),
            "InstallationRegistration": .all(
                of: [
                    .ref("InstallationFields"),
                    .object(
                        requiring: ["platform"],
                        [
                            "platform": .ref("Platform"),
                            "service": .ref(
                                "Service", description: "defaults to apns (Apple), fcm (android) or webpush (web)"),
                        ]),
                ]),
            "Installation": .object(
                requiring: ["id", "app_id", "platform", "service", "environment", "channels", "valid", "created_at"],
                [
                    "id": .string, "app_id": .string,
                    "user_id": .nullableString(), "device_id": .nullableString(),
                    "platform": .ref("Platform"), "service": .ref("Service"), "environment": .ref("Environment"),
                    "token": .string(description: "whole token; single reads and writes only"),
                    "subscription": .ref("WebPushSubscription"),
                    "token_suffix": .string(description: "the token's last 8 characters"),
                    "channels": .strings(),
                    "locale": .nullableString(), "timezone": .nullableString(),
                    "badge": .integer,
                    "app_version": .nullableString(), "os_version": .nullableString(),
                    "device_model": .nullableString(), "bundle_id": .nullableString(),
                    "attributes": .anyObject(),
                    "sns_endpoint_arn": .nullableString(),
                    "valid": .boolean,
                    "failure_count": .integer,
                    "last_failure_at": .dateTime(nullable: true),
                    "last_failure_reason": .nullableString(),
                    "last_delivered_at": .dateTime(nullable: true),
                    "last_seen_at": .dateTime(nullable: true),
                    "created_at": .dateTime(), "updated_at": .dateTime(),
                    "invalidated_at": .dateTime(nullable: true),
                ]),
            "InstallationList": list(of: "Installation"),
            "Preferences": .object(
                closed: true,
                [
                    "enabled_sources": .strings(
                        maxItems: Preferences.maxListCount, maxLength: Preferences.maxNameLength, nullable: true,
                        description: "null means every source"),
                    "enabled_categories": .strings(
                        maxItems: Preferences.maxListCount, maxLength: Preferences.maxNameLength, nullable: true,
                        description: "null means every category"),
                    "quiet_hours": quietHours,
                    "quiet_hours_mode": .choice(Preferences.QuietHoursMode.self),
                    "sound_enabled": .boolean,
                    "muted_until": .dateTime(nullable: true),
                ]),
            "SendRequest": sendRequest,
            "NotificationChange": notificationChange,
            "NotificationTarget": notificationTarget,
            "Notification": .object(
                requiring: ["id", "app_id", "status", "counts", "created_at"],
                [
                    "id": .string, "app_id": .string,
                    "status": .choice(NotificationStatus.self),
                    "target": .anyObject(description: "raw tokens are shown as their count"),
                    "payload": .anyObject(),
                    "source": .nullableString(), "category": .nullableString(), "push_time": .nullableString(),
                    "not_before": .dateTime(nullable: true), "expires_at": .dateTime(nullable: true),
                    "respect_preferences": .boolean,
                    "idempotency_key": .nullableString(),
                    "counts": counts,
                    "created_at": .dateTime(),
                    "started_at": .dateTime(nullable: true), "completed_at": .dateTime(nullable: true),
                    "live_activity": .object(
                        requiring: ["id", "event", "revision"],
                        description: "a Live Activity push: its activity (or broadcast channel), event and revision",
                        [
                            "id": .string, "event": .choice(LiveActivityPush.Event.self), "revision": .integer,
                            "channel": .nullableString(description: "the broadcast channel's APNs id"),
                        ]),
                    "updatable": .boolean(description: "sent with a replacement key (its payload.collapse_id)"),
                    "revision": .object(
                        requiring: ["of", "number"],
                        description: """
                            an updatable notification's place among its revisions: 1 for the send itself, the next \
                            for each change or removal (docs/content.md, "Updating and deleting")
                            """,
                        [
                            "of": .string(description: "the id of the updatable notification (revision 1)"),
                            "number": .integer, "removal": .boolean(description: "it removes the notification"),
                        ]),
                    "template": .object(
                        requiring: ["name", "revision"],
                        description: "the template its words are rendered from, at the revision it was accepted with",
                        ["name": .string, "revision": .integer(nullable: true)]),
                ]),
            "NotificationList": list(of: "Notification"),
            "Delivery": .object(
                requiring: ["token_suffix", "service", "outcome", "attempts", "at"],
                [
                    "installation_id": .nullableString(),
                    "token_suffix": .string,
                    "service": .ref("Service"),
                    "outcome": .choice(DeliveryRecord.Outcome.self),
                    "provider_id": .nullableString(), "reason": .nullableString(),
                    "attempts": .integer,
                    "at": .dateTime(),
                ]),
            "DeliveryList": list(of: "Delivery"),
        ]
    }

    package static let countNames = [
        "targeted", "sent", "failed", "invalid", "skipped_preferences", "skipped_expired", "rate_limited", "opened",
    ]

    /// `HH:mm`, 24-hour.
    package static let timePattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$"

    /// A page of a list route.
    package static func list(of item: String) -> JSONSchema {
        .object(
            requiring: ["data", "next_cursor"],
            [
                "data": .array(items: .ref(item)),
                "next_cursor": .nullableString(description: "pass as cursor for the next page"),
            ])
    }

    /// Who a notification goes to (a send's `target`, a Live Activity start's).
    package static var notificationTarget: JSONSchema {
        let list = { (maxLength: Int) in
            JSONSchema.strings(minItems: 1, maxItems: NotificationTarget.maxListCount, maxLength: maxLength)
        }
        return .object(
            closed: true,
            description: "exactly one of installation_ids, tokens, user_ids, channels, where, all",
            [
                "installation_ids": list(NotificationTarget.maxInstallationIDLength),
                "tokens": .array(
                    minItems: 1, maxItems: NotificationTarget.maxListCount,
                    items: .object(
                        requiring: ["token", "service"], closed: true,
                        [
                            "token": .string(minLength: 1, maxLength: 4096),
                            "service": .ref("Service"),
                            "environment": .ref("Environment"),
                            "platform": .ref("Platform"),
                        ])),
                "user_ids": list(NotificationTarget.maxUserIDLength),
                "channels": .strings(
                    minItems: 1, maxItems: NotificationTarget.maxListCount, pattern: channelPattern),
                "where": .anyObject(
                    description:
                        "LeanCloud/Parse query: $eq $ne $in $nin $exists $lt $lte $gt $gte $regex $all $and $or"
                ),
                "all": .boolean(allowedValues: [true]),
                "platforms": .array(minItems: 1, items: .ref("Platform")),
                "services": .array(minItems: 1, items: .ref("Service")),
                "apns_environment": .ref(
                    "Environment",
                    description: "send every APNs recipient in this environment, not its installation's"),
            ])
    }

    /// A payload's or a template's words in other languages.
    package static var localizations: JSONSchema {
        .object(
            description: """
                the words in other languages, by BCP 47 tag (de, pt-BR, zh-Hant): each device gets the \
                best match for its locale (RFC 4647 lookup after CLDR's likely subtags), else the \
                default title, subtitle and body; a field a localization leaves out falls back to the \
                default's (docs/content.md)
                """,
            maxProperties: LocalizedText.maxCount, properties: [:],
            additionalProperties: .b(
                .object(
                    minProperties: 1,
                    properties: [
                        "title": JSONSchema.string(minLength: 1, maxLength: 1000).optionalSchemaObject(),
                        "subtitle": JSONSchema.string(minLength: 1, maxLength: 1000).optionalSchemaObject(),
                        "body": JSONSchema.string(minLength: 1, maxLength: 4000).optionalSchemaObject(),
                    ], additionalProperties: .a(false))))
    }

    /// The content members of a send, which a change (`PATCH /v1/notifications/{id}`) takes too.
    package static var sendContent: [(String, JSONSchema)] {
        let overrides = JSONSchema.object(
            closed: true,
            [
                "apns": .anyObject(description: "aps, headers and other payload keys merged over the rendered ones"),
                "apns_sandbox": .anyObject(
                    description: "the same as apns, for APNs sandbox recipients instead of apns (SNS's APNS_SANDBOX)"),
                "fcm": .anyObject(
                    description: "android, apns, webpush, fcm_options, data, notification merged over the rendered "
                        + "ones (null removes a block or key)"),
                "webpush": .anyObject(
                    description: "members of the JSON the service worker receives, merged over the rendered ones "
                        + "(null removes one)"),
            ])
        let members: KeyValuePairs<String, JSONSchema> = [
            "template": .object(
                requiring: ["name"], closed: true,
                description: """
                    the app's template the words come from (docs/content.md, "Templates"), rendered for each \
                    device with these variables, payload.data and the device's profile; the payload then gives \
                    no title, subtitle, body or localizations
                    """,
                [
                    "name": .string(
                        minLength: 1, maxLength: NotificationTemplate.maxNameLength, pattern: "^[A-Za-z0-9._-]+$"),
                    "variables": .anyObject(description: "the values the template names at its top level"),
                ]),
            "payload": .object(
                closed: true,
                description: "required unless a template gives the words",
                [
                    "title": .string(minLength: 1, maxLength: 1000),
                    "subtitle": .string(minLength: 1, maxLength: 1000),
                    "body": .string(minLength: 1, maxLength: 4000),
                    "badge": .one(of: [
                        .integer(maximum: (999_999, exclusive: false), minimum: (0, exclusive: false)),
                        .choice("increment"),
                    ]),
                    "sound": .string(minLength: 1, maxLength: 256),
                    "category": .string(minLength: 1, maxLength: 256),
                    "thread_id": .string(minLength: 1, maxLength: 256),
                    "image": .string(minLength: 1, maxLength: 2048),
                    "deep_link": .string(minLength: 1, maxLength: 2048),
                    "data": .anyObject(),
                    "content_available": .boolean, "mutable_content": .boolean,
                    "interruption_level": .choice(InterruptionLevel.self),
                    "priority": .choice(NotificationPayload.Priority.self),
                    "collapse_id": .string(minLength: 1, maxLength: 64),
                    "ttl": .integer(maximum: (2_419_200, exclusive: false), minimum: (0, exclusive: false)),
                    "overrides": overrides,
                    "localizations": localizations,
                ]),
            "overrides": overrides,
        ]
        return members.map { ($0.key, $0.value) }
    }

    package static var sendRequest: JSONSchema {
        let label = { (description: String) in
            JSONSchema.string(description: description, minLength: 1, maxLength: SendRequest.maxLabelLength)
        }
        let more: KeyValuePairs<String, JSONSchema> = [
            "source": label("matched against enabled_sources"),
            "category": label("matched against enabled_categories; default payload.category"),
            "push_time": .string(description: "RFC 3339; without an offset, each device's local time"),
            "expiration_time": .dateTime(),
            "expiration_interval": .integer(
                maximum: (SendRequest.maxExpirationInterval, exclusive: false), minimum: (1, exclusive: false)),
            "respect_preferences": .boolean(defaultValue: true),
            "dry_run": .boolean,
            "idempotency_key": .string(minLength: 1, maxLength: SendRequest.maxIdempotencyKeyLength),
            "updatable": .boolean(
                description: """
                    send it with a replacement key on every provider (payload.collapse_id, default \
                    herald-<id>): APNs apns-collapse-id, FCM collapse_key and android.notification.tag, Web Push \
                    Topic and the payload's tag, the direct channel's tag (docs/content.md)
                    """),
        ]
        return .object(
            requiring: ["target"], closed: true,
            members: [("target", .ref("NotificationTarget"))] + sendContent + more.map { ($0.key, $0.value) })
    }

    /// A change of an updatable notification: a send's content, which replaces the notification's whole.
    package static var notificationChange: JSONSchema {
        .object(
            closed: true,
            description: """
                the notification's new content, as a send gives it (docs/content.md, "Updating and deleting"); \
                its target, schedule, category and replacement key stay (payload.collapse_id cannot change)
                """, members: sendContent)
    }
}

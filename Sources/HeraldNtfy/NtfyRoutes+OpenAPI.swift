import HTTPTypes
import HeraldAPI
import HeraldCore
import OpenAPIKit

extension NtfyRoutes {
    /// ntfy's error body.
    static func failure(_ status: Int, _ description: String) -> (Int, APIResponse) {
        (
            status,
            .json(
                description,
                .object(
                    requiring: ["code", "http", "error"],
                    [
                        "code": .integer(
                            description: "ntfy's error code: the status and two digits (40009: the topic)"),
                        "http": .integer(description: "the HTTP status"),
                        "error": .string(description: "what went wrong"),
                        "link": .string(format: .uri, description: "ntfy's documentation of it"),
                    ]))
        )
    }

    /// The message as ntfy answers a publish.
    static let messageSchema = JSONSchema.object(
        requiring: ["id", "time", "event", "topic", "message"],
        [
            "id": .string(description: "the notification's id (GET /v1/notifications/{id})"),
            "time": .integer(description: "when it is delivered (Unix seconds; later with Delay)"),
            "expires": .integer(description: "time + 12 hours"), "event": .choice("message"),
            "topic": .string(), "message": .string(), "title": .string(),
            "priority": .integer(maximum: (5, exclusive: false), minimum: (1, exclusive: false)),
            "tags": .array(items: .string()), "click": .string(), "icon": .string(),
            "actions": .any(description: "the actions as published"), "content_type": .choice("text/markdown"),
            "sequence_id": .string(description: "the sequence it updates, when it is not the message's own id"),
        ])

    /// The event a clear or delete answers with.
    static let actionSchema = JSONSchema.object(
        requiring: ["id", "time", "event", "topic", "sequence_id"],
        [
            "id": .string(description: "the removal's notification id (GET /v1/notifications/{id})"),
            "time": .integer(), "expires": .integer(), "event": .choice("message_clear", "message_delete"),
            "topic": .string(), "sequence_id": .string(),
        ])

    static let topicPattern = "^[-_A-Za-z0-9]{1,64}$"

    static let errors: [(Int, APIResponse)] = [
        failure(
            400,
            "A topic that is invalid or one of Herald's own path segments (40009), a bad priority (40007), delay "
                + "(40004-40006), attach or icon URL (40013, 40021), actions (40018), or JSON (40017, 40024); with "
                + "Template: a template Herald does not serve (40047), an inline Go template (40043), a body that is "
                + "not JSON (40042), an event the template does not handle (40045), or a title or message over "
                + "4,096 bytes (40041)."),
        failure(401, "No publish key, or not one (40101)."),
        failure(403, "The key is bound to another target, or the app turns ntfy off (40301)."),
        failure(
            413,
            "The message is over 4,096 bytes, the JSON over 8,192, or a templated body over 131,072 or "
                + "http.max_body_bytes (41301, 41303)."),
        failure(429, "Past app.<id>.ntfy.messages_per_minute for the key (42901), or too many refused keys (42909)."),
        failure(500, "Herald could not take the message (50001)."),
    ]

    static func jsonOperation(_ method: HTTPRequest.Method) -> APIOperation {
        APIOperation(
            method, "/", tags: ["ntfy"],
            summary: "ntfy: publish a message, the JSON form (what Apprise sends).",
            description: """
                ntfy's JSON publishing: the topic is a channel of the publish key's app (a key bound to a target \
                publishes only there). Authorization: Bearer <publish key>, or Basic with the key as the password, or \
                ntfy's ?auth= (the Authorization value in base64url). ntfy's header fields (X-Priority, X-Tags, \
                X-Click, X-Delay, …) apply where the JSON does not set the member. priority 1-2 is a normal-priority \
                push, 3-5 a high-priority one (5 time-sensitive on iOS); delay (10 s to 3 days) schedules it.
                """,
            query: [.text("auth", maxLength: 256, description: "the Authorization value, base64url")],
            body: .object(
                requiring: ["topic"],
                [
                    "topic": .string(pattern: topicPattern), "message": .string(), "title": .string(),
                    "tags": .array(items: .string()),
                    "priority": .integer(maximum: (5, exclusive: false), minimum: (1, exclusive: false)),
                    "click": .string(), "attach": .string(), "filename": .string(), "icon": .string(),
                    "actions": .array(items: .anyObject()), "markdown": .boolean(), "delay": .string(),
                    "email": .string(), "call": .string(), "cache": .string(), "firebase": .string(),
                    "sequence_id": .string(
                        description: "updates the earlier message of this sequence (docs/dialects/ntfy.md)",
                        pattern: topicPattern),
                ]),
            responses: [(200, .json("Accepted: the message.", messageSchema))] + errors)
    }

    /// The query parameters of the topic form: ntfy's names and short aliases.
    /// (Lengths that keep a URL with all of them under `http.max_header_bytes`, 32 KB by default.)
    static let topicQuery: [QueryParameter] =
        ["message", "m", "auth"].map { .text($0, maxLength: 256) }
        + [
            "title", "t", "priority", "prio", "p", "tags", "tag", "ta", "delay", "at", "in", "actions", "action",
            "click", "attach", "a", "markdown", "md", "icon",
        ].map { .text($0, maxLength: 64) }
        + ["x-sequence-id", "sequence-id", "sid"].map {
            .text($0, maxLength: 64, description: "the sequence the message updates (1-64 of A-Z a-z 0-9 _ -)")
        }
        + ["template", "tpl"].map {
            .text(
                $0, maxLength: 64,
                description: "ntfy's message template: github, grafana or alertmanager (the body is that tool's "
                    + "JSON webhook); yes/1 (inline) only with a title and message without {{ }}")
        }

    static func topicOperation(_ method: HTTPRequest.Method) -> APIOperation {
        APIOperation(
            method, "/{topic}", tags: ["ntfy"],
            summary: "ntfy: publish the body as a message to a topic (curl -d \"…\" host/topic).",
            description: """
                ntfy's publishing by path: the body (at most 4,096 bytes) is the message; Title, Priority, Tags, \
                Click, Attach, Icon, Actions, Delay, Markdown (and X-Title, t, p, ta, … or the same as query \
                parameters) as ntfy reads them. The topic is a channel of the publish key's app; Herald's own first \
                path segments (v1, sns, ha, up, api, 1.1, message, console, metrics, healthz, readyz, openapi.yaml, \
                _matrix, …) are not topics here (40009). With X-Template (Template, Tpl, ?template=, ?tpl=) github, \
                grafana or alertmanager, the body is that tool's JSON webhook (up to 131,072 bytes) and ntfy's \
                built-in template makes the title and message. ntfy's templates are Go templates, which Herald does \
                not run: the three are served as fixed renderers; an inline template ({{…}} in the title, message or \
                priority with X-Template: yes) is refused (40043), any other name too (40047).
                """,
            pathParameters: ["topic": .string(pattern: topicPattern)], query: topicQuery,
            body: .string(format: .other("binary"), maxLength: NtfyTemplate.maxBodyBytes), bodyEncoding: .binary,
            responses: [(200, .json("Accepted: the message.", messageSchema))] + errors)
    }

    static let sequenceErrors: [(Int, APIResponse)] = [
        failure(400, "A topic or sequence id that is invalid (40009, 40049)."),
        failure(401, "No publish key, or not one (40101)."),
        failure(403, "The key is bound to another target, or the app turns ntfy off (40301)."),
        failure(404, "No message of the app has this sequence id, or it was deleted already (40401)."),
        failure(429, "Past app.<id>.ntfy.messages_per_minute for the key (42901), or too many refused keys (42909)."),
        failure(500, "Herald could not take the request (50001)."),
    ]

    static let sequenceParameters: [String: JSONSchema] = [
        "topic": .string(pattern: topicPattern), "sequence": .string(pattern: topicPattern),
    ]

    static func sequenceOperation(_ method: HTTPRequest.Method) -> APIOperation {
        APIOperation(
            method, "/{topic}/{sequence}", tags: ["ntfy"],
            summary: "ntfy: publish the body as a message of a sequence (curl -d \"…\" host/topic/sequence).",
            description: """
                The topic form with a sequence id: the first message of a sequence is an updatable notification; a \
                later one changes it on the devices it went to (its next revision, with the same replacement key \
                ntfy-<topic>-<sequence id>). The message's own id (the answer's id) also names its sequence. The \
                header form (X-Sequence-ID, Sequence-ID, SID) and the JSON member sequence_id do the same.
                """,
            pathParameters: sequenceParameters, query: topicQuery,
            body: .string(format: .other("binary"), maxLength: NtfyTemplate.maxBodyBytes), bodyEncoding: .binary,
            responses: [(200, .json("Accepted: the message.", messageSchema))] + errors)
    }

    static func clearOperation(_ method: HTTPRequest.Method, _ path: String) -> APIOperation {
        APIOperation(
            method, path, tags: ["ntfy"],
            summary: "ntfy: clear a sequence's notification (ntfy marks it read and dismisses it).",
            description: """
                Herald removes the sequence's notification from the devices: a data message the app acts on, \
                clear_notification on the direct channel, or a cancel when it is not sent yet \
                (docs/content.md, "Updating and deleting").
                """,
            pathParameters: sequenceParameters,
            query: [.text("auth", maxLength: 256, description: "the Authorization value, base64url")],
            responses: [(200, .json("Removed: ntfy's message_clear event.", actionSchema))] + sequenceErrors)
    }

    static func deleteOperation(_ method: HTTPRequest.Method, _ path: String) -> APIOperation {
        APIOperation(
            method, path, tags: ["ntfy"],
            summary: "ntfy: delete a sequence's notification from the devices (or cancel it before its time).",
            pathParameters: sequenceParameters,
            query: [.text("auth", maxLength: 256, description: "the Authorization value, base64url")],
            responses: [(200, .json("Removed: ntfy's message_delete event.", actionSchema))] + sequenceErrors)
    }
}

import HTTPTypes
import HeraldAPI
import HeraldCore
import OpenAPIKit

extension ConsoleRoutes {
    static let sessionSchema: JSONSchema = .object(
        requiring: ["app", "csrf_token", "expires_at"],
        [
            "app": .string,
            "csrf_token": .string(description: "send as X-CSRF-Token with every console API call"),
            "expires_at": .dateTime(),
        ])

    static let signInOperation = APIOperation(
        .post, prefix + "/session", tags: ["Console"],
        summary: "Sign in to the console with an app's server key (JSON, or a form's server_key).",
        description: """
            Sets the session cookie (herald_console: HttpOnly, SameSite=Strict, Secure unless \
            console.secure_cookie is false) and returns the CSRF token the console sends as X-CSRF-Token. \
            Failed attempts are limited per client address (429 with Retry-After).
            """,
        security: .none,
        body: .object(requiring: ["server_key"], closed: true, ["server_key": .string(minLength: 1)]),
        responses: [
            (
                200,
                .custom(
                    OpenAPI.Response(
                        description: "Signed in; Set-Cookie carries the session.",
                        headers: ["Set-Cookie": .b(OpenAPI.Header(schema: JSONSchema.string))],
                        content: .json(sessionSchema)))
            ),
            (
                429,
                .custom(
                    OpenAPI.Response(
                        description: "Too many failed sign-ins from this address; Retry-After says when to retry.",
                        headers: ["Retry-After": .b(OpenAPI.Header(schema: JSONSchema.integer))],
                        content: .json(.ref("Error"))))
            ),
        ] + .errors(400, 401, 403, 413))

    static let sessionOperation = APIOperation(
        .get, prefix + "/session", tags: ["Console"],
        summary: "The console session of the cookie, with its CSRF token (a reloaded page asks for it).",
        security: .consoleCookie,
        responses: [(200, .json("The session.", sessionSchema))] + .errors(401))

    static let signOutOperation = APIOperation(
        .delete, prefix + "/session", tags: ["Console"],
        summary: "Sign out: the cookie's session ends on every node, and the cookie is cleared.",
        description: """
            With the cookie of a session and its X-CSRF-Token, the session is signed out in the store every \
            node reads: the cookie is refused from then on (401 session_expired), even where it was kept. \
            Without a session (no cookie, an expired or signed-out one) the cookie is just cleared.
            """,
        security: .none, responses: [(204, .empty("Signed out."))] + .errors(403))

    static let overviewOperation = APIOperation(
        .get, prefix + "/api/overview", tags: ["Console"],
        summary: "The console's overview of the app: providers and their recent failures, outcomes per hour, dialects.",
        responses: [
            (
                200,
                .json(
                    "The overview.",
                    .object(
                        requiring: ["app", "now", "providers", "failures", "series", "dialects"],
                        [
                            "app": .string, "now": .dateTime(),
                            "providers": .array(
                                items: .object(
                                    requiring: ["service"],
                                    [
                                        "service": .string, "paused_until": .dateTime(nullable: true),
                                        "paused_origins": .array(
                                            items: .object(
                                                requiring: ["origin", "until"],
                                                ["origin": .string, "until": .dateTime()])),
                                        "pool": .object(
                                            requiring: ["connections", "streams_in_use", "waiting"],
                                            [
                                                "connections": .integer, "streams_in_use": .integer,
                                                "waiting": .integer,
                                            ]),
                                    ])),
                            "failures": .array(
                                items: .object(
                                    requiring: ["service", "outcome", "count", "last_at"],
                                    [
                                        "service": .string, "outcome": .choice("failed", "invalid"),
                                        "reason": .nullableString(), "count": .integer, "last_at": .dateTime(),
                                    ])),
                            "series": .object(
                                requiring: ["since", "hours"],
                                [
                                    "since": .dateTime(),
                                    "hours": .array(
                                        items: .object(
                                            requiring: [
                                                "hour", "notifications", "targeted", "sent", "failed", "invalid",
                                                "skipped",
                                            ],
                                            [
                                                "hour": .dateTime(), "notifications": .integer, "targeted": .integer,
                                                "sent": .integer, "failed": .integer, "invalid": .integer,
                                                "skipped": .integer,
                                            ])),
                                ]),
                            "dialects": .array(
                                items: .object(
                                    requiring: ["name", "key", "routes", "enabled", "detail"],
                                    [
                                        "name": .string, "key": .string, "routes": .string, "enabled": .boolean,
                                        "detail": .string,
                                    ])),
                        ]))
            )
        ] + .errors(401, 403))

    static let historyParameters: [QueryParameter] = [.limit, .cursor]

    static let historyOperation = APIOperation(
        .get, prefix + "/api/installations/{id}/history", tags: ["Console"],
        summary:
            "One installation's delivery history, newest first (failures always; successes with delivery_log all).",
        query: historyParameters,
        responses: [
            (
                200,
                .json(
                    "A page of the installation's ledger.",
                    .object(
                        requiring: ["installation", "data", "next_cursor"],
                        [
                            "installation": .ref("Installation"),
                            "data": .array(
                                items: .object(
                                    requiring: [
                                        "sequence", "notification_id", "service", "outcome", "attempts", "at",
                                    ],
                                    [
                                        "sequence": .integer, "notification_id": .string, "service": .string,
                                        "outcome": .choice(DeliveryRecord.Outcome.self),
                                        "provider_id": .nullableString(), "reason": .nullableString(),
                                        "attempts": .integer, "at": .dateTime(),
                                    ])),
                            "next_cursor": .nullableString(description: "pass as cursor for the next page"),
                        ]))
            )
        ] + .errors(400, 401, 403, 404))
}

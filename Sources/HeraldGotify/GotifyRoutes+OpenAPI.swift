import HTTPTypes
import HeraldAPI
import HeraldCore
import OpenAPIKit

extension GotifyRoutes {
    /// Gotify's error body.
    static func failure(_ status: Int, _ description: String) -> (Int, APIResponse) {
        (
            status,
            .json(
                description,
                .object(
                    requiring: ["error", "errorCode", "errorDescription"],
                    [
                        "error": .string(description: "the status's reason phrase"),
                        "errorCode": .integer(description: "the HTTP status"),
                        "errorDescription": .string(description: "what went wrong"),
                    ]))
        )
    }

    static let messageOperation = APIOperation(
        .post, path, tags: ["Gotify"],
        summary: "Gotify: send a message with an application token (a publish key).",
        description: """
            Gotify's POST /message. The token (X-Gotify-Key, ?token= or Authorization: Bearer) is a publish key of \
            app.<id>.publish_keys (or the generated app's hpk_ key); the message goes to the key's target \
            (KEY=channel:NAME, KEY=user:ID, KEY=all) or, for a key without one, to every device of the app. The body \
            is JSON (title, message, priority, extras), a URL-encoded form or multipart form data (curl -F); the \
            query may carry title, message and priority. priority 0-3 is a normal-priority push, 4-10 a high one \
            (8-10 time-sensitive on iOS); extras go in the data, client::notification.click.url is the deep link \
            and bigImageUrl the image.
            """,
        query: [
            .text("token", maxLength: 256), .text("title", maxLength: 256), .text("message", maxLength: 1_024),
            .text("priority", maxLength: 11),
        ],
        body: .object(
            requiring: ["message"],
            [
                "message": .string(minLength: 1, maxLength: GotifyMessage.maxMessageBytes), "title": .string(),
                "priority": .integer(), "extras": .anyObject(description: "Gotify's extras"),
            ]),
        responses: [
            (
                200,
                .json(
                    "Accepted: the message.",
                    .object(
                        requiring: ["id", "appid", "message", "title", "priority", "date"],
                        [
                            "id": .integer(), "appid": .integer(), "message": .string(), "title": .string(),
                            "priority": .integer(), "extras": .anyObject(), "date": .string(format: .dateTime),
                        ]))
            ),
            failure(
                400,
                "No message, a message over 4,096 bytes (Gotify's field error), a priority that is not an integer, or a body of no known type."
            ),
            failure(401, "No token, or not a publish key."),
            failure(403, "The app turns Gotify off (app.<id>.gotify.enabled)."),
            failure(413, "The body is larger than the server takes."),
            failure(429, "Past app.<id>.gotify.messages_per_minute for the token, or too many refused tokens."),
            failure(500, "Herald could not take the message."),
        ])
}

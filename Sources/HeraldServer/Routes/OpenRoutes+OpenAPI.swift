import HTTPTypes
import HeraldAPI
import HeraldCore
import OpenAPIKit

extension OpenRoutes {
    static let prefix = "/v1/opens"

    static let reportOperation = APIOperation(
        .post, prefix, summary: "Report that an installation opened a notification.",
        description: """
            Counted in the notification's `counts.opened` once per installation: a repeat answers 200 with the \
            first open's time and counts nothing. Client key, the installation's user, or the server key. A \
            notification of another app, or an installation of another app or user, is the same 404 as a \
            missing one.
            """,
        body: .object(
            requiring: ["notification_id", "installation_id"], closed: true,
            [
                "notification_id": .string(minLength: 1, maxLength: NotificationOpen.maxIDLength),
                "installation_id": .string(minLength: 1, maxLength: NotificationOpen.maxIDLength),
                "opened_at": .dateTime(description: "when the user opened it (default: now); not in the future"),
            ]),
        responses: [
            (201, .json("The first open of the notification by the installation: counted.", openSchema)),
            (200, .json("A repeat: nothing changed.", openSchema)),
        ] + .errors(400, 401, 404, 413))

    static let openSchema = JSONSchema.object(
        requiring: ["notification_id", "installation_id", "opened_at"],
        ["notification_id": .string, "installation_id": .string, "opened_at": .dateTime()])
}

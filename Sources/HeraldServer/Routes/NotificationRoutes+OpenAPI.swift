import HTTPTypes
import HeraldAPI
import HeraldCore
import OpenAPIKit

extension NotificationRoutes {
    static let prefix = "/v1/notifications"

    static let sendOperation = APIOperation(
        .post, prefix, summary: "Send a notification (server key). 202 once it and its job are committed.",
        headers: [
            .header(
                name: "Idempotency-Key", required: false,
                schema: .string(minLength: 1, maxLength: SendRequest.maxIdempotencyKeyLength))
        ],
        body: .ref("SendRequest"),
        responses: [
            (
                202,
                .json(
                    "Accepted.",
                    .object(
                        requiring: ["id", "status"],
                        [
                            "id": .string,
                            "status": .choice(
                                NotificationStatus.scheduled.rawValue, NotificationStatus.queued.rawValue),
                        ]))
            ),
            (
                200,
                .json(
                    "A repeated idempotency key (the first notification), or a dry run's audience.",
                    .one(of: [
                        .ref("Notification"),
                        .object(
                            requiring: ["dry_run", "targeted", "by_service"],
                            [
                                "dry_run": .boolean, "targeted": .integer,
                                "by_service": .object(additionalProperties: .b(.integer)),
                            ]),
                    ]))
            ),
        ] + .errors(400, 401, 403, 413))

    static let listParameters: [QueryParameter] = [.choice("status", NotificationStatus.self), .limit, .cursor]

    static let listOperation = APIOperation(
        .get, prefix, summary: "The app's notifications, newest first.", query: listParameters,
        responses: [(200, .json("A page.", .ref("NotificationList")))] + .errors(400, 401, 403))

    static let readOperation = APIOperation(
        .get, prefix + "/{id}", summary: "One notification with its status and counts.",
        responses: [(200, .json("The notification.", .ref("Notification")))] + .errors(401, 403, 404))

    static let cancelOperation = APIOperation(
        .delete, prefix + "/{id}",
        summary: "Cancel a scheduled, queued or sending notification (what was sent stays sent).",
        responses: [(200, .json("The canceled notification.", .ref("Notification")))] + .errors(401, 403, 404, 409))

    static let changeOperation = APIOperation(
        .patch, prefix + "/{id}",
        summary: """
            Change an updatable notification's content (docs/content.md, "Updating and deleting"): in place while \
            it waits for its push time (200), else by its next revision, re-rendered and sent with the same \
            replacement key to the devices it went to (202, a notification of its own). The id may be any \
            revision's.
            """,
        body: .ref("NotificationChange"),
        responses: [
            (200, .json("Changed where it waits for its push time.", .ref("Notification"))),
            (202, .json("The next revision, accepted.", .ref("Notification"))),
        ] + .errors(400, 401, 403, 404, 409, 413))

    static let removeDeliveredOperation = APIOperation(
        .delete, prefix + "/{id}/delivered",
        summary: """
            Remove an updatable notification from the devices: what is not sent yet is canceled (200 for one \
            that waits for its push time), and the devices it went to are sent a removal, its next revision \
            (202): a data message with herald_remove, clear_notification on the direct channel.
            """,
        responses: [
            (200, .json("Canceled before its push time.", .ref("Notification"))),
            (202, .json("The removal, accepted.", .ref("Notification"))),
        ] + .errors(401, 403, 404, 409))

    static let deliveriesParameters: [QueryParameter] = [
        .choice("outcome", DeliveryRecord.Outcome.self), .limit, .cursor,
    ]

    static let deliveriesOperation = APIOperation(
        .get, prefix + "/{id}/deliveries",
        summary: "The notification's delivery ledger (failures always; successes with delivery_log all).",
        query: deliveriesParameters,
        responses: [(200, .json("A page of the ledger.", .ref("DeliveryList")))] + .errors(400, 401, 403, 404))
}

extension OperationsRoutes {
    static let healthOperation = APIOperation(
        .get, "/healthz", summary: "The process is alive.", security: .none,
        responses: [(200, .json("Alive.", .ref("Status")))])

    static let readyOperation = APIOperation(
        .get, "/readyz", summary: "The database answers.", security: .none,
        responses: [(200, .json("Ready.", .ref("Status")))] + .errors(503))

    static let documentOperation = APIOperation(
        .get, "/openapi.yaml", summary: "This document.", security: .none,
        responses: [
            (
                200,
                .custom(
                    OpenAPI.Response(
                        description: "The OpenAPI document.",
                        content: [.yaml: .b(OpenAPI.Content(schema: JSONSchema.string))]))
            )
        ])
}

import HTTPTypes
import HeraldAPI
import HeraldCore
import OpenAPIKit

extension InstallationRoutes {
    static let prefix = "/v1/installations"

    static let createOperation = APIOperation(
        .post, prefix, summary: "Register (create or update) an installation.",
        description: """
            Identity is (app, device_id, service) when device_id is given, else (app, service, token). A known \
            token updates its installation, re-validates it and resets its failure count. Server key, client \
            key or user token; a user registers as themselves, and not with a device_id another user's \
            installation holds with another token (409 device_id_in_use). Client-key registrations count per \
            client address and users' per user against app.<id>.registrations_per_minute (429 rate_limited \
            with Retry-After).
            """,
        body: .ref("InstallationRegistration"),
        responses: [
            (200, .json("An existing installation was updated.", .ref("Installation"))),
            (201, .json("A new installation was created.", .ref("Installation"))),
        ] + .errors(400, 401, 403, 409, 413, 429))

    /// The filters of the list, as `/openapi.yaml` documents them and ``ListQuery`` checks them.
    static let listParameters: [QueryParameter] = [
        .text("user_id", maxLength: InstallationRules.maxShortText),
        .text(
            "channel", maxLength: NotificationTarget.maxChannelLength, pattern: "[A-Za-z0-9_-]+",
            code: "invalid_channel"),
        .choice("platform", Platform.self),
        .choice("service", PushService.self),
        .boolean("valid"),
        .limit, .cursor,
    ]

    static let listOperation = APIOperation(
        .get, prefix, summary: "List installations (server key, or a user's own).", query: listParameters,
        responses: [
            (200, .json("A page of installations; tokens show their last 8 characters only.", .ref("InstallationList")))
        ] + .errors(400, 401, 403))

    static let readOperation = APIOperation(
        .get, prefix + "/{id}", summary: "One installation, with its whole token (server key or its user).",
        responses: [(200, .json("The installation.", .ref("Installation")))] + .errors(401, 403, 404))

    static let updateOperation = APIOperation(
        .patch, prefix + "/{id}", summary: "Change an installation's fields; null clears an optional field.",
        body: .ref("InstallationFields"),
        responses: [(200, .json("The updated installation.", .ref("Installation")))]
            + .errors(400, 401, 403, 404, 409, 413))

    static let deleteOperation = APIOperation(
        .delete, prefix + "/{id}", summary: "Delete an installation.",
        responses: [(204, .empty("Deleted."))] + .errors(401, 403, 404))
}

extension PreferenceRoutes {
    static let readOperation = APIOperation(
        .get, InstallationRoutes.prefix + "/{id}/preferences",
        summary: "The installation's preferences (defaults when none are stored); server key or its user.",
        responses: [(200, .json("The preferences.", .ref("Preferences")))] + .errors(401, 403, 404))

    static let replaceOperation = APIOperation(
        .put, InstallationRoutes.prefix + "/{id}/preferences", summary: "Replace the installation's preferences.",
        body: .ref("Preferences"),
        responses: [(200, .json("The stored preferences.", .ref("Preferences")))] + .errors(400, 401, 403, 404, 413))
}

extension UserRoutes {
    static let deleteInstallationsOperation = APIOperation(
        .delete, "/v1/users/{user_id}/installations",
        summary: "Account deletion: deletes every installation of the user, with its preferences (server key).",
        pathParameters: ["user_id": .string(minLength: 1, maxLength: InstallationRules.maxShortText)],
        responses: [
            (
                200,
                .json(
                    "How many installations went (0 when there were none).",
                    .object(requiring: ["deleted"], ["deleted": .integer(minimum: (0, exclusive: false))]))
            )
        ] + .errors(400, 401, 403))
}

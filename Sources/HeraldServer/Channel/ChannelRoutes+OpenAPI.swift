import HTTPTypes
import HeraldAPI
import HeraldCore
import OpenAPIKit

extension ChannelRoutes {
    static let credentialOperation = APIOperation(
        .post, InstallationRoutes.prefix + "/{id}/channel-credential", tags: ["Direct channel"],
        summary: "The credential a device opens its installation's direct channel with (server key or its user).",
        description: """
            The credential authenticates the WebSocket at /v1/channel (an Authorization: Bearer header, or Home \
            Assistant's auth message) for this installation only; webhook_id is what the device subscribes with. \
            It is derived from the app's server key: rotating the key revokes every credential.
            """,
        responses: [
            (
                200,
                .json(
                    "The credential.",
                    .object(
                        requiring: ["credential", "webhook_id", "url"],
                        [
                            "credential": .string(description: "hch_<app>.<installation>.<MAC>", pattern: "^hch_"),
                            "webhook_id": .string(description: "The installation id, Home Assistant's webhook_id"),
                            "url": .string(description: "The channel's path"),
                        ]))
            )
        ] + .errors(401, 403, 404))

    static let upgradeOperation = APIOperation(
        .get, path, tags: ["Direct channel"],
        summary: "The direct channel: a WebSocket speaking Home Assistant's local push protocol.",
        description: """
            Upgrade to a WebSocket (also served at /api/websocket). Authenticate with an Authorization: Bearer \
            header (a user token or a channel credential; the server answers auth_ok), or answer auth_required \
            with {"type":"auth","access_token":"…"} within 10 s. Then subscribe with \
            {"id":1,"type":"mobile_app/push_notification_channel","webhook_id":"<installation id>", \
            "support_confirm":true}; notifications arrive as {"id":1,"type":"event","event":{"message","title", \
            "data","hass_confirm_id"}} and are confirmed with {"id":2,"type":"mobile_app/push_notification_confirm", \
            "webhook_id":"…","confirm_id":"…"} within the confirm window, or fall back to the cloud.
            """,
        security: .none,
        responses: [
            (101, .empty("Switching to the WebSocket protocol.")),
            (426, .error),
        ])
}

import HTTPTypes
import HeraldAPI
import HeraldCore
import Hummingbird
import OpenAPIKit

/// `GET /v1/webpush/vapid-public-key`: the key web apps pass to `PushManager.subscribe` as
/// `applicationServerKey` (no authentication: it is public by design, RFC 8292 §3.2).
struct WebPushRoutes: Sendable {
    /// Each app's VAPID public key (base64url, uncompressed point), for apps with Web Push set up.
    let publicKeys: [String: String]

    static let prefix = "/v1/webpush"
    static let parameters: [QueryParameter] = [
        .text(
            "app", maxLength: 64, pattern: "[a-z0-9_-]+",
            description: "The app whose key to return; may be left out when one app has Web Push set up.")
    ]

    static let publicKeyOperation = APIOperation(
        .get, prefix + "/vapid-public-key", tags: ["Web Push"],
        summary: "The app's VAPID public key, for the browser's PushManager.subscribe (no authentication).",
        security: .none, query: parameters,
        responses: [
            (
                200,
                .json(
                    "The key.",
                    .object(
                        requiring: ["app_id", "public_key"],
                        [
                            "app_id": .string,
                            "public_key": .string(
                                description: "base64url uncompressed P-256 point: applicationServerKey",
                                pattern: "^[A-Za-z0-9_-]{87}$"),
                        ]))
            )
        ] + .errors(400, 404))

    func register(on group: RouterGroup<HeraldRequestContext>, table: inout RouteTable) {
        table.on(group, prefix: Self.prefix, Self.publicKeyOperation, use: publicKey)
    }

    @Sendable func publicKey(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let query = try ListQuery(request.uri.queryParameters, declared: Self.parameters)
        let appID: String
        if let asked = query.string("app") {
            appID = asked
        } else if publicKeys.count == 1, let only = publicKeys.keys.first {
            appID = only
        } else {
            throw HeraldError.invalidValue(
                "app", code: "missing_field", "Several apps have Web Push set up: name one with ?app=<id>.")
        }
        guard let key = publicKeys[appID] else {
            throw HeraldError(
                kind: .notFound, code: "not_configured", message: "App '\(appID)' has no VAPID key (app.<id>.webpush).")
        }
        return .json(.object(["app_id": .string(appID), "public_key": .string(key)]))
    }
}

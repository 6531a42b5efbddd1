import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine
import Hummingbird
import Logging
import NIOCore

/// Herald as a UnifiedPush / RFC 8030 push server. An installation gets push endpoints
/// (`POST /v1/installations/{id}/push-endpoints`: an unguessable URL under `/up/`, one per receiving
/// app on the device), hands each to an app server (Mastodon, a Matrix gateway, anything built on
/// pywebpush or web-push), and that server POSTs encrypted messages to it: Herald delivers each
/// body, untouched, over the direct channel when the device is connected and otherwise through the
/// device's cloud route, as a data message (``UnifiedPushMessage``).
package struct UnifiedPushRoutes: Dialect {
    package static let settingsKey = "unifiedpush"
    package static let name = "UnifiedPush"
    package static let settingsTitle = "UnifiedPush (RFC 8030)"
    package static var declaredSettings: [any DeclaredSetting] { UnifiedPushConfiguration.Settings.all }
    package static var routesSummary: String { "/up/…, /v1/installations/{id}/push-endpoints" }
    /// The `source` of the notifications its messages become.
    package static let source = "unifiedpush"
    /// Where endpoints are served.
    package static let prefix = "/up"
    package static let managementPath = "/v1/installations/{id}/push-endpoints"

    package let store: any HeraldStore & PushEndpointStore
    package let apps: AppDirectory
    package let dispatcher: Dispatcher
    package let settings: [String: UnifiedPushConfiguration]
    package let maxBodyBytes: Int
    package let now: @Sendable () -> Date

    package init(context: DialectContext, settings: [String: UnifiedPushConfiguration]) throws {
        store = try context.store((any HeraldStore & PushEndpointStore).self, for: Self.self)
        apps = context.apps
        dispatcher = context.dispatcher
        self.settings = settings
        maxBodyBytes = context.maxBodyBytes
        now = context.now
    }

    package static func status(_ settings: UnifiedPushConfiguration?) -> (enabled: Bool, detail: String) {
        let app = settings ?? UnifiedPushConfiguration()
        return (
            true,
            (app.publicBaseURL.map { "endpoints under \($0)/up/" } ?? "endpoints under the request's host")
                + ", \(app.messagesPerMinute) messages a minute each"
        )
    }

    package func register(on router: Router<HeraldRequestContext>, table: inout RouteTable) {
        let management = router.group("v1/installations").add(middleware: BearerAuthenticator(apps: apps))
        table.on(management, prefix: "/v1/installations", Self.createOperation, use: create)
        table.on(management, prefix: "/v1/installations", Self.listOperation, use: list)
        table.on(management, prefix: "/v1/installations", Self.revokeOperation, use: revoke)
        let endpoints = router.group("up")
        table.on(endpoints, prefix: Self.prefix, Self.discoveryOperation, use: discover)
        table.on(endpoints, prefix: Self.prefix, Self.pushOperation, use: push)
    }

    // MARK: Endpoints of an installation

    /// `POST /v1/installations/{id}/push-endpoints`: a new endpoint for the installation (server key,
    /// or the installation's user).
    @Sendable func create(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let installation = try await owned(context)
        let secret = PushEndpointSecret()
        let endpoint = PushEndpoint(
            id: "pe_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased(),
            appID: installation.appID, installationID: installation.id, createdAt: now())
        guard try await store.createPushEndpoint(endpoint, digest: secret.digest) else {
            throw HeraldError.notFound("Installation")
        }
        context.logger.info(
            "unifiedpush endpoint created",
            metadata: [
                "herald.installation": "\(installation.id)", "herald.endpoint": "\(endpoint.id)",
                "herald.secret": "\(secret.fingerprint)",
            ])
        var json = Self.json(endpoint)
        json["endpoint"] = .string(
            baseURL(appID: installation.appID, request: request) + Self.prefix + "/" + secret.text)
        return .json(.object(json), status: .created)
    }

    /// `GET /v1/installations/{id}/push-endpoints`: the installation's endpoints not revoked (their
    /// URLs are shown once, at creation).
    @Sendable func list(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let installation = try await owned(context)
        let endpoints = try await store.pushEndpoints(appID: installation.appID, installationID: installation.id)
        return .json(.object(["data": .array(endpoints.map { .object(Self.json($0)) })]))
    }

    /// `DELETE /v1/installations/{id}/push-endpoints/{endpoint_id}`: revokes an endpoint; its URL
    /// answers `410 Gone` from then on.
    @Sendable func revoke(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let installation = try await owned(context)
        guard let id = context.parameters.get("endpoint_id"), id.utf8.count <= 64,
            try await store.revokePushEndpoint(
                appID: installation.appID, installationID: installation.id, id: id, now: now())
        else { throw HeraldError.notFound("Push endpoint") }
        return Response(status: .noContent)
    }

    /// The installation of the path, the caller's to manage: the server key's app's, or the user's own.
    private func owned(_ context: HeraldRequestContext) async throws -> Installation {
        let principal = try context.principal()
        if case .client = principal {
            throw HeraldError.forbidden("Push endpoints take the server key or the installation's user.")
        }
        guard let id = context.parameters.get("id"), id.count <= NotificationTarget.maxInstallationIDLength,
            let installation = try await store.installation(appID: principal.appID, id: id),
            principal.userID == nil || installation.userID == principal.userID
        else { throw HeraldError.notFound("Installation") }
        return installation
    }

    private static func json(_ endpoint: PushEndpoint) -> [String: JSONValue] {
        ["id": .string(endpoint.id), "created_at": InstallationView.timestamp(endpoint.createdAt)]
    }

    /// The app's public URL, or the request's own host over http.
    private func baseURL(appID: String, request: Request) -> String {
        if let configured = settings[appID]?.publicBaseURL { return configured }
        return "http://" + (request.head.authority ?? request.headers[Self.host] ?? "localhost")
    }

    // MARK: The push endpoint

    /// `GET /up/{secret}`: UnifiedPush's discovery answer for a live endpoint.
    @Sendable func discover(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard (try await live(context)) != nil else { return Self.gone }
        return .json(.object(["unifiedpush": .object(["version": .number(1)])]))
    }

    /// `POST /up/{secret}`: one RFC 8030 push message for the endpoint's installation.
    @Sendable func push(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        guard let (endpoint, secret, installation) = try await live(context) else { return Self.gone }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > UnifiedPushMessage.maxBodyBytes {
            throw Self.tooLarge()
        }
        var body: [UInt8] = []
        for try await buffer in request.body {
            guard body.count + buffer.readableBytes <= UnifiedPushMessage.maxBodyBytes else { throw Self.tooLarge() }
            body.append(contentsOf: buffer.readableBytesView)
        }
        let message = try UnifiedPushMessage(
            body: body, ttl: request.headers[Self.ttl], urgency: request.headers[Self.urgency],
            topic: request.headers[Self.topic])
        let perMinute = settings[endpoint.appID]?.messagesPerMinute ?? UnifiedPushConfiguration.defaultMessagesPerMinute
        let decision = try await store.acquireToken(
            bucket: "unifiedpush:\(endpoint.id)", capacity: perMinute, per: 60, now: now())
        if case .limited(let retryAfter) = decision {
            var response = try HeraldError(
                kind: .tooManyRequests, code: "rate_limited",
                message: "Too many messages to this endpoint; try again in \(retryAfter) seconds."
            ).response(from: request, context: context)
            response.headers[.retryAfter] = String(retryAfter)
            return response
        }
        // A device connected over the channel takes the channel's 4,096 bytes, whatever its cloud route.
        var connected = false
        if message.exceedsCloudRoute(of: installation.service) {
            connected = await dispatcher.channels.isConnected(installation.id, now: now())
        }
        let notification: PushNotification
        do {
            guard
                case .accepted(let accepted, _) = try await dispatcher.submit(
                    message.sendRequest(
                        to: endpoint, service: installation.service, connected: connected, source: Self.source),
                    appID: endpoint.appID)
            else { throw HeraldError.internal("The engine answered a send with a dry run.") }
            notification = accepted
        } catch let error as HeraldError where error.code == "payload_too_large" {
            throw Self.tooLarge(error.message)
        }
        if let topic = message.topic {
            try await replaceUndelivered(topic: topic, of: endpoint, by: notification, context: context)
        }
        context.logger.debug(
            "unifiedpush message accepted",
            metadata: [
                "herald.notification": "\(notification.id)", "herald.endpoint": "\(endpoint.id)",
                "herald.secret": "\(secret.fingerprint)", "herald.bytes": "\(body.count)",
            ])
        var response = Response(status: .created)
        response.headers[.location] = "\(Self.prefix)/\(secret.text)/messages/\(notification.id)"
        response.headers[Self.ttl] = String(message.ttl)
        return response
    }

    /// RFC 8030 §5.4: a message with a `Topic` replaces the endpoint's earlier one of that topic if
    /// Herald still holds it (waiting for the device's channel, a provider or a retry): that one is
    /// canceled. One already handed to a provider is replaced on the device by the collapse id.
    private func replaceUndelivered(
        topic: String, of endpoint: PushEndpoint, by notification: PushNotification, context: HeraldRequestContext
    ) async throws {
        guard
            let previous = try await store.replaceTopicMessage(
                endpointID: endpoint.id, topic: topic, notificationID: notification.id),
            previous != notification.id,
            let canceled = try await store.cancelNotification(appID: endpoint.appID, id: previous, now: now()),
            canceled.status == .canceled
        else { return }
        context.logger.info(
            "unifiedpush message replaced by topic",
            metadata: ["herald.notification": "\(previous)", "herald.replaced_by": "\(notification.id)"])
    }

    /// The endpoint of the path's secret; nil when it was revoked or its installation is gone (`410`).
    /// - Throws: `404` for a URL no endpoint had.
    private func live(
        _ context: HeraldRequestContext
    ) async throws -> (PushEndpoint, PushEndpointSecret, Installation)? {
        guard let text = context.parameters.get("secret"), let secret = PushEndpointSecret(text),
            let endpoint = try await store.pushEndpoint(digest: secret.digest)
        else { throw HeraldError.notFound("Push endpoint") }
        guard endpoint.revokedAt == nil,
            let installation = try await store.installation(appID: endpoint.appID, id: endpoint.installationID)
        else { return nil }
        return (endpoint, secret, installation)
    }

    /// `410 Gone` for an endpoint that was revoked, or whose device is gone, so the app server
    /// forgets it (RFC 8030 §8.3), in the native error body.
    static var gone: Response {
        .json(
            .object([
                "error": .object([
                    "code": .string("endpoint_gone"), "field": .null,
                    "message": .string("This push endpoint was revoked, or its device is gone: forget it."),
                ])
            ]), status: .gone)
    }

    private static func tooLarge(_ detail: String? = nil) -> HeraldError {
        HeraldError(
            kind: .payloadTooLarge, code: "payload_too_large",
            message: detail ?? "A push message's body is at most \(UnifiedPushMessage.maxBodyBytes) bytes.")
    }

    static let ttl = HTTPField.Name("TTL")!
    static let urgency = HTTPField.Name("Urgency")!
    static let topic = HTTPField.Name("Topic")!
    static let host = HTTPField.Name("Host")!
}

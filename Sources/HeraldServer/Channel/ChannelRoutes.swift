import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket

/// The request context of the WebSocket router.
public struct ChannelRequestContext: RequestContext, WebSocketRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let webSocket: WebSocketHandlerReference<Self>

    public init(source: Source) {
        coreContext = .init(source: source)
        webSocket = .init()
    }
}

/// The direct channel (DESIGN: the "direct" route): devices connect a WebSocket to Herald and get
/// their notifications over it, confirmed or not, before the cloud. It speaks Home Assistant's
/// local push protocol, so the Companion apps' code for it works against Herald.
///
/// Authentication comes first: an `Authorization: Bearer` header on the upgrade (then `auth_ok`
/// at once), or Home Assistant's handshake — `auth_required`, the client's
/// `{"type": "auth", "access_token"}`, then `auth_ok` or `auth_invalid` and the socket closes. The
/// credential is a user token of the app (the user's installations) or an installation's channel
/// credential (that installation only). API keys are not devices' credentials and are refused.
struct ChannelRoutes: Sendable {
    let store: any InstallationRegistry
    let apps: AppDirectory
    let channels: DirectChannels

    /// Where devices connect; `/api/websocket` (Home Assistant's path) answers the same.
    static let path = "/v1/channel"
    static let homeAssistantPath = "/api/websocket"
    /// The Home Assistant version whose websocket messages the channel speaks, sent as `ha_version`
    /// (clients read it to pick features).
    static let homeAssistantVersion = "2024.3.3"
    /// How long a client has to authenticate after `auth_required` (Home Assistant's 10 seconds).
    static let authTimeout: Duration = .seconds(10)
    /// The largest message a client may send.
    static let maxMessageBytes = 16 * 1024

    // MARK: - HTTP

    func register(
        on router: Router<HeraldRequestContext>, api: RouterGroup<HeraldRequestContext>, table: inout RouteTable
    ) {
        table.on(
            api.group("installations"), prefix: InstallationRoutes.prefix, Self.credentialOperation, use: credential)
        table.on(router.group("v1/channel"), prefix: Self.path, Self.upgradeOperation, use: upgradeRequired)
    }

    /// `POST /v1/installations/{id}/channel-credential`: the credential a device opens its
    /// installation's channel with (server key, or the installation's user).
    @Sendable func credential(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let principal = try context.principal()
        switch principal {
        case .server, .user: break
        case .client:
            throw HeraldError.forbidden("A channel credential takes the server key or the installation's user.")
        }
        guard let id = context.parameters.get("id"), id.count <= NotificationTarget.maxInstallationIDLength,
            let installation = try await store.installation(appID: principal.appID, id: id),
            principal.userID == nil || installation.userID == principal.userID,
            let credential = apps.channelCredential(appID: installation.appID, installationID: installation.id)
        else { throw HeraldError.notFound("Installation") }
        return .json(
            .object([
                "credential": .string(credential), "webhook_id": .string(installation.id), "url": .string(Self.path),
            ]))
    }

    /// `GET /v1/channel` without a WebSocket upgrade.
    @Sendable func upgradeRequired(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let body: JSONValue = .object([
            "error": .object([
                "code": .string("upgrade_required"), "field": .null,
                "message": .string("This URL is a WebSocket: connect with an Upgrade: websocket request."),
            ])
        ])
        return Response(
            status: HTTPResponse.Status(code: 426, reasonPhrase: "Upgrade Required"),
            headers: [.contentType: "application/json; charset=utf-8", .upgrade: "websocket"],
            body: .init(byteBuffer: ByteBuffer(bytes: body.serialized())))
    }

    // MARK: - WebSocket

    /// The router of WebSocket upgrades.
    func webSocketRouter() -> Router<ChannelRequestContext> {
        let router = Router(context: ChannelRequestContext.self)
        for path in [Self.path, Self.homeAssistantPath] {
            router.ws(RouterPath(path)) { request, _ in
                // A credential in the header must be good before the upgrade; none means the handshake.
                guard let header = Self.bearer(request.headers) else { return .upgrade([:]) }
                return await identify(header) == nil ? .dontUpgrade : .upgrade([:])
            } onUpgrade: { inbound, outbound, context in
                try await serve(inbound, outbound, header: Self.bearer(context.request.headers), logger: context.logger)
            }
        }
        return router
    }

    private func serve(
        _ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter, header: String?, logger: Logger
    ) async throws {
        var messages = inbound.messages(maxSize: Self.maxMessageBytes).makeAsyncIterator()
        var identity: ChannelConnection.Identity?
        if let header {
            identity = await identify(header)
        } else {
            try await ChannelConnection.write(
                ["type": .string("auth_required"), "ha_version": .string(Self.homeAssistantVersion)], to: outbound)
            // Home Assistant closes a socket that does not authenticate in time; the read then ends.
            let reading = FirstMessage(messages)
            let first = try await withDeadline(Self.authTimeout, clock: channels.clock) {
                try await reading.next()
            } onDeadline: {
                try? await outbound.close(.policyViolation, reason: "Did not receive auth message within 10 seconds")
            }
            messages = reading.iterator
            guard case .text(let text)? = first else { return }
            identity = await handshake(text)
            guard identity != nil else {
                try await ChannelConnection.write(
                    ["type": .string("auth_invalid"), "message": .string("Invalid access token or password")],
                    to: outbound)
                return try await outbound.close(.normalClosure, reason: nil)
            }
        }
        guard let identity else { return }
        try await ChannelConnection.write(
            ["type": .string("auth_ok"), "ha_version": .string(Self.homeAssistantVersion)], to: outbound)
        let connection = ChannelConnection(
            identity: identity, outbound: outbound, store: store, channels: channels, logger: logger)
        do {
            while let message = try await messages.next() {
                guard case .text(let text) = message else { continue }
                try await connection.handle(text)
            }
        } catch {
            await connection.closeAll()
            throw error
        }
        await connection.closeAll()
    }

    /// The identity of Home Assistant's auth message `{"type": "auth", "access_token": "…"}`.
    private func handshake(_ text: String) async -> ChannelConnection.Identity? {
        guard case .object(let message)? = try? JSONValue.parse(Array(text.utf8)),
            message["type"] == .string("auth"), case .string(let token)? = message["access_token"]
        else { return nil }
        return await identify(token)
    }

    /// Who a credential is: an installation's channel credential, or a user token of an app.
    func identify(_ credential: String) async -> ChannelConnection.Identity? {
        if let opened = apps.channelInstallation(credential: credential) {
            return .installation(appID: opened.appID, installationID: opened.installationID)
        }
        guard let principal = try? await apps.authenticate(bearer: credential, appHint: nil),
            case .user(let appID, let userID) = principal
        else { return nil }
        return .user(appID: appID, userID: userID)
    }

    private static func bearer(_ headers: HTTPFields) -> String? {
        guard let value = headers[.authorization], value.lowercased().hasPrefix("bearer ") else { return nil }
        let token = value.dropFirst(7).trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}

/// A socket's message iterator lent to the one task that reads its first message: the deadline
/// that bounds the read awaits that task before the iterator is used again.
private final class FirstMessage: @unchecked Sendable {
    private(set) var iterator: WebSocketInboundMessageStream.AsyncIterator

    init(_ iterator: WebSocketInboundMessageStream.AsyncIterator) {
        self.iterator = iterator
    }

    func next() async throws -> WebSocketMessage? {
        try await iterator.next()
    }
}

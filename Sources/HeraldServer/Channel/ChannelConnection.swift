import Foundation
import HeraldAPI
import HeraldCore
import HeraldEngine
import HummingbirdWebSocket
import Logging
import Synchronization

/// One device's WebSocket to Herald, speaking the part of Home Assistant's websocket API that
/// local push uses: `mobile_app/push_notification_channel` (subscribe, with `support_confirm`),
/// events `{"id", "type": "event", "event": {…}}`, `mobile_app/push_notification_confirm`,
/// `unsubscribe_events` and `ping`, with Home Assistant's result and error messages.
///
/// The `webhook_id` of Home Assistant is the installation id, or the device id (the webhook id a
/// device registered by the Home Assistant relay was registered with): a device subscribes to its own
/// installations only (the user's, for a user token; the one installation, for its channel
/// credential).
final class ChannelConnection: Sendable {
    /// Who authenticated the connection.
    enum Identity: Sendable, Equatable {
        case user(appID: String, userID: String)
        case installation(appID: String, installationID: String)

        var appID: String {
            switch self {
            case .user(let appID, _), .installation(let appID, _): appID
            }
        }
    }

    private struct State {
        var lastID = 0
        /// Open channels by the id of the message that subscribed them.
        var subscriptions: [Int: DirectChannels.Session] = [:]
    }

    let identity: Identity
    private let outbound: WebSocketOutboundWriter
    private let store: any InstallationRegistry
    private let channels: DirectChannels
    private let logger: Logger
    private let state = Mutex(State())

    init(
        identity: Identity, outbound: WebSocketOutboundWriter, store: any InstallationRegistry,
        channels: DirectChannels,
        logger: Logger
    ) {
        self.identity = identity
        self.outbound = outbound
        self.store = store
        self.channels = channels
        self.logger = logger
    }

    /// Answers one text message.
    func handle(_ text: String) async throws {
        guard case .object(let message)? = try? JSONValue.parse(Array(text.utf8)),
            case .number(let number)? = message["id"], let wide = number.integerValue, let id = Int(exactly: wide),
            case .string(let type)? = message["type"]
        else {
            return try await error(nil, "invalid_format", "Message incorrectly formatted.")
        }
        let fresh = state.withLock { state in
            guard id > state.lastID else { return false }
            state.lastID = id
            return true
        }
        guard fresh else { return try await error(id, "id_reuse", "Identifier values have to increase.") }
        switch type {
        case "mobile_app/push_notification_channel": try await subscribe(id, message)
        case "mobile_app/push_notification_confirm": try await confirm(id, message)
        case "unsubscribe_events": try await unsubscribe(id, message)
        case "ping": try await send(["id": .number(JSONNumber(id)), "type": .string("pong")])
        default: try await error(id, "unknown_command", "Unknown command.")
        }
    }

    /// The socket closed: every channel it held closes (what waited on them falls back).
    func closeAll() async {
        let sessions = state.withLock { state in
            defer { state.subscriptions.removeAll() }
            return Array(state.subscriptions.values)
        }
        for session in sessions {
            let waited = await channels.close(session)
            logger.info(
                "direct channel closed",
                metadata: [
                    "herald.installation": "\(session.installationID)",
                    "herald.unconfirmed": "\(waited.map(String.init) ?? "none: it had ended")",
                ])
        }
    }

    // MARK: - Commands

    private func subscribe(_ id: Int, _ message: [String: JSONValue]) async throws {
        guard case .string(let webhookID)? = message["webhook_id"] else {
            return try await missing(id, "webhook_id")
        }
        var confirms = false
        switch message["support_confirm"] {
        case nil: break
        case .bool(let value)?: confirms = value
        default:
            return try await error(
                id, "invalid_format", "expected bool for dictionary value @ data['support_confirm']")
        }
        guard let installation = try await ownInstallation(id, webhookID) else { return }
        let outbound = self.outbound
        let session = await channels.open(
            appID: installation.appID, installationID: installation.id, confirms: confirms,
            write: { event in
                try await Self.write(
                    ["id": .number(JSONNumber(id)), "type": .string("event"), "event": .object(event)], to: outbound)
            },
            onTeardown: { [weak self] in
                // Like Home Assistant: the subscription ends silently; the socket stays open.
                self?.state.withLock { state in _ = state.subscriptions.removeValue(forKey: id) }
            })
        state.withLock { $0.subscriptions[id] = session }
        logger.info(
            "direct channel open",
            metadata: ["herald.installation": "\(installation.id)", "herald.confirms": "\(confirms)"])
        try await result(id)
    }

    private func confirm(_ id: Int, _ message: [String: JSONValue]) async throws {
        guard case .string(let webhookID)? = message["webhook_id"] else { return try await missing(id, "webhook_id") }
        guard case .string(let confirmID)? = message["confirm_id"] else { return try await missing(id, "confirm_id") }
        guard let installation = try await ownInstallation(id, webhookID) else { return }
        let session = state.withLock { state in
            state.subscriptions.values.first { $0.installationID == installation.id }
        }
        guard let session, await channels.confirm(session, confirmID: confirmID) else {
            return try await error(id, "not_found", "Push notification channel not found")
        }
        try await result(id)
    }

    private func unsubscribe(_ id: Int, _ message: [String: JSONValue]) async throws {
        guard case .number(let number)? = message["subscription"], let wide = number.integerValue,
            let subscription = Int(exactly: wide)
        else {
            return try await missing(id, "subscription")
        }
        let session = state.withLock { state in state.subscriptions.removeValue(forKey: subscription) }
        guard let session else { return try await error(id, "not_found", "Subscription not found.") }
        await channels.close(session)
        try await result(id)
    }

    /// The installation a `webhook_id` names, when the caller may use it; otherwise answers Home
    /// Assistant's error and returns nil. The webhook id is an installation id, or else the device id
    /// of the app's installations (a device the Home Assistant relay registered has the webhook id of
    /// its `mobile_app` registration as its device id, and no user: only its channel credential opens
    /// it). Of several installations with that device id, the caller's valid one updated last.
    private func ownInstallation(_ id: Int, _ webhookID: String) async throws -> Installation? {
        guard !webhookID.isEmpty, webhookID.count <= NotificationTarget.maxInstallationIDLength else {
            try await error(id, "not_found", "Webhook ID not found")
            return nil
        }
        var candidates: [Installation] = []
        if let installation = try await store.installation(appID: identity.appID, id: webhookID) {
            candidates = [installation]
        } else if webhookID.utf8.count <= InstallationRules.maxShortText {
            candidates = try await store.installations(appID: identity.appID, deviceID: webhookID)
        }
        guard !candidates.isEmpty else {
            try await error(id, "not_found", "Webhook ID not found")
            return nil
        }
        let allowed = candidates.filter { installation in
            switch identity {
            case .user(_, let userID): installation.userID == userID
            case .installation(_, let installationID): installation.id == installationID
            }
        }
        guard
            let installation = allowed.max(by: { ($0.valid ? 1 : 0, $0.updatedAt) < ($1.valid ? 1 : 0, $1.updatedAt) })
        else {
            try await error(id, "unauthorized", "User not linked to this webhook ID")
            return nil
        }
        return installation
    }

    // MARK: - Messages

    private func result(_ id: Int) async throws {
        try await send([
            "id": .number(JSONNumber(id)), "type": .string("result"), "success": .bool(true), "result": .null,
        ])
    }

    private func missing(_ id: Int, _ key: String) async throws {
        try await error(id, "invalid_format", "required key not provided @ data['\(key)']. Got None")
    }

    private func error(_ id: Int?, _ code: String, _ message: String) async throws {
        try await send([
            "id": id.map { .number(JSONNumber($0)) } ?? .null, "type": .string("result"), "success": .bool(false),
            "error": .object(["code": .string(code), "message": .string(message)]),
        ])
    }

    private func send(_ object: [String: JSONValue]) async throws {
        try await Self.write(object, to: outbound)
    }

    static func write(_ object: [String: JSONValue], to outbound: WebSocketOutboundWriter) async throws {
        try await outbound.write(.text(String(decoding: JSONValue.object(object).serialized(), as: UTF8.self)))
    }
}

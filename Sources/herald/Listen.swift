import ArgumentParser
import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import HeraldCore
import HeraldWebPush
import HummingbirdWSClient
import Logging
import NIOCore
import NIOHTTP1
import NIOWebSocket
import Synchronization

/// `herald listen`: a device with no cloud at all. Registers (or reuses) a direct-only
/// installation, connects its direct channel, and prints each push it receives, confirming it.
/// With `--unifiedpush` it is also a UnifiedPush receiver: it makes a push endpoint and a
/// subscription's keys, prints them for an app server, and decrypts the messages that arrive.
struct Listen: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Receive pushes over Herald's direct channel, as a device would, and print them.",
        discussion: """
            The first run registers a direct-only installation (service direct, platform desktop) and keeps \
            its id and channel credential in --state; later runs reuse them.

            Examples:
              herald listen --server http://127.0.0.1:8080 --key hsk_…
              herald listen --server http://127.0.0.1:8080 --state ~/.herald-listen.json --count 1
              herald send --server http://127.0.0.1:8080 --key hsk_… --installation-id <id> --title Hello
              herald listen --server http://127.0.0.1:8080 --key hsk_… --unifiedpush

            With --unifiedpush it also makes a UnifiedPush / Web Push endpoint (POST \
            /v1/installations/{id}/push-endpoints, with --key) and a P-256 key pair and auth secret, kept in \
            --state, and prints the subscription an app server (pywebpush, web-push) sends to; each message \
            that arrives is decrypted (RFC 8291) and printed.
            """)

    @Option(help: "Base URL of a running Herald.") var server = "http://127.0.0.1:8080"
    @Option(help: "The app's server key, to register the installation (default: $HERALD_SERVER_KEY).")
    var key: String?
    @Option(help: "Where the installation id and channel credential are kept (mode 0600).")
    var state = "herald-listen.json"
    @Option(help: "A user id for the installation (a new registration only).") var userID: String?
    @Option(help: "Exit after this many pushes (default: run until interrupted).") var count: Int?
    @Flag(help: "Do not confirm pushes (the channel then delivers without confirmation).") var noConfirm = false
    @Flag(help: "Also receive UnifiedPush / Web Push messages: make an endpoint and keys, decrypt what arrives.")
    var unifiedpush = false

    /// What `--state` keeps.
    struct Identity: Codable {
        var server: String
        var installationID: String
        var credential: String
        var unifiedPush: Subscription?
    }

    /// A UnifiedPush endpoint and the subscription's keys (base64url), as `--state` keeps them.
    struct Subscription: Codable {
        var endpoint: String
        var privateKey: String
        var auth: String

        /// The receiver that decrypts for these keys.
        func decryptor() throws -> WebPushDecryptor {
            guard let key = Base64URL.decode(privateKey), let auth = Base64URL.decode(auth) else {
                throw ValidationError("The UnifiedPush keys in --state are unreadable: delete it to start again.")
            }
            return WebPushDecryptor(privateKey: try .init(rawRepresentation: key), authSecret: auth)
        }
    }

    func run() async throws {
        guard let base = URL(string: server), let host = base.host, let scheme = base.scheme else {
            throw ValidationError("--server must be a URL such as http://127.0.0.1:8080.")
        }
        var identity = try await identity()
        if unifiedpush { identity = try await subscribed(identity) }
        let receiver = try identity.unifiedPush.map { try $0.decryptor() }
        let port = base.port ?? (scheme == "https" ? 443 : 80)
        let url = "\(scheme == "https" ? "wss" : "ws")://\(host):\(port)/v1/channel"
        say("listening: installation \(identity.installationID)")
        if let subscription = identity.unifiedPush, let receiver {
            say("unifiedpush endpoint: \(subscription.endpoint)")
            say("unifiedpush p256dh: \(Base64URL.encode(receiver.publicKey))")
            say("unifiedpush auth: \(Base64URL.encode(receiver.authSecret))")
        }
        say(
            "send to it: herald send --server \(server) --key … --installation-id \(identity.installationID) --title Hi"
        )
        var received = 0
        while count.map({ received < $0 }) ?? true {
            received += try await listen(
                url: url, identity: identity, receiver: receiver, remaining: count.map { $0 - received })
            if count.map({ received >= $0 }) ?? false { break }
            say("channel closed; reconnecting in 2 s")
            try await Task.sleep(for: .seconds(2))
        }
    }

    /// One connection: subscribes and prints pushes until the socket closes or enough came.
    /// - Returns: How many pushes it printed.
    private func listen(
        url: String, identity: Identity, receiver: WebPushDecryptor?, remaining: Int?
    ) async throws -> Int {
        let counter = Counter()
        let confirm = !noConfirm
        var headers = HTTPFields()
        headers[.authorization] = "Bearer \(identity.credential)"
        try await WebSocketClient.connect(
            url: url, configuration: .init(additionalHeaders: headers), logger: Logger(label: "herald.listen")
        ) { inbound, outbound, _ in
            var nextID = 1
            func send(_ object: [String: JSONValue]) async throws {
                try await outbound.write(.text(String(decoding: JSONValue.object(object).serialized(), as: UTF8.self)))
            }
            for try await message in inbound.messages(maxSize: 1 << 20) {
                guard case .text(let text) = message, case .object(let object)? = try? JSONValue.parse(Array(text.utf8))
                else { continue }
                switch object["type"] {
                case .string("auth_ok")?:
                    try await send([
                        "id": .number(JSONNumber(nextID)), "type": .string("mobile_app/push_notification_channel"),
                        "webhook_id": .string(identity.installationID), "support_confirm": .bool(confirm),
                    ])
                    nextID += 1
                case .string("event")?:
                    guard case .object(let event)? = object["event"] else { continue }
                    say(Self.describe(event))
                    if let receiver, let line = Self.unifiedPushMessage(event, receiver: receiver) { say(line) }
                    if case .string(let confirmID)? = event["hass_confirm_id"] {
                        try await send([
                            "id": .number(JSONNumber(nextID)), "type": .string("mobile_app/push_notification_confirm"),
                            "webhook_id": .string(identity.installationID), "confirm_id": .string(confirmID),
                        ])
                        nextID += 1
                    }
                    if counter.add() == remaining {
                        try await outbound.close(.normalClosure, reason: nil)
                    }
                case .string("result")? where object["success"] == .bool(false):
                    let reason = object["error"]?.objectValue?["message"].map { "\($0)" } ?? "refused"
                    throw ValidationError("The channel refused: \(reason). Delete \(state) to register again.")
                case .string("auth_invalid")?:
                    throw ValidationError("The channel refused the credential. Delete \(state) to register again.")
                default: continue
                }
            }
        }
        return counter.value
    }

    /// A push as one line: the time, the title and message, and the data.
    static func describe(_ event: [String: JSONValue]) -> String {
        var line = "[\(ISO8601DateFormatter().string(from: Date()))]"
        if case .string(let title)? = event["title"] { line += " \(title) —" }
        if case .string(let message)? = event["message"] { line += " \(message)" }
        if case .object(let data)? = event["data"], !data.isEmpty {
            line += " " + String(decoding: JSONValue.object(data).serialized(), as: UTF8.self)
        }
        return line
    }

    /// A UnifiedPush message in an event, decrypted: its text (or hex, when it is not UTF-8), or
    /// why it did not decrypt; nil for an event that is not one.
    static func unifiedPushMessage(_ event: [String: JSONValue], receiver: WebPushDecryptor) -> String? {
        guard case .string(let encoded)? = event["data"]?.objectValue?["up_body"] else { return nil }
        guard let body = Base64URL.decode(encoded) else { return "unifiedpush message: not base64url" }
        do {
            let plaintext = try receiver.decrypt(body)
            if let text = String(validating: plaintext, as: UTF8.self) { return "unifiedpush message: \(text)" }
            return "unifiedpush message (hex): " + plaintext.map { String(format: "%02x", $0) }.joined()
        } catch {
            return "unifiedpush message did not decrypt: \(error.message)"
        }
    }

    /// The identity with a UnifiedPush endpoint and keys: the stored ones, or a new endpoint
    /// (which takes the server key) with a fresh key pair and auth secret, kept in `--state`.
    private func subscribed(_ identity: Identity) async throws -> Identity {
        if identity.unifiedPush != nil { return identity }
        guard let key = key ?? ProcessInfo.processInfo.environment["HERALD_SERVER_KEY"] else {
            throw ValidationError(
                "Making a push endpoint takes the app's server key: --key hsk_… or $HERALD_SERVER_KEY.")
        }
        let (status, created) = try await call(
            "POST", "/v1/installations/\(identity.installationID)/push-endpoints", key: key, body: .object([:]))
        guard status == 201, case .string(let endpoint)? = created.objectValue?["endpoint"] else {
            throw ValidationError(
                "Making a push endpoint failed (\(status)): \(String(decoding: created.serialized(), as: UTF8.self))")
        }
        let receiver = WebPushDecryptor()
        var subscribed = identity
        subscribed.unifiedPush = Subscription(
            endpoint: endpoint, privateKey: Base64URL.encode(Array(receiver.privateKey.rawRepresentation)),
            auth: Base64URL.encode(receiver.authSecret))
        try keep(subscribed)
        return subscribed
    }

    /// Writes the identity to `--state`, readable by its owner only.
    private func keep(_ identity: Identity) throws {
        let data = try JSONEncoder().encode(identity)
        guard FileManager.default.createFile(atPath: state, contents: data, attributes: [.posixPermissions: 0o600])
        else { throw ValidationError("Cannot write \(state).") }
    }

    /// The stored identity for this server, or a new registration and credential.
    private func identity() async throws -> Identity {
        if let bytes = FileManager.default.contents(atPath: state),
            let stored = try? JSONDecoder().decode(Identity.self, from: bytes), stored.server == server
        {
            say("reusing installation \(stored.installationID) from \(state)")
            return stored
        }
        guard let key = key ?? ProcessInfo.processInfo.environment["HERALD_SERVER_KEY"] else {
            throw ValidationError("Registering takes the app's server key: --key hsk_… or $HERALD_SERVER_KEY.")
        }
        var registration: [String: JSONValue] = [
            "platform": .string("desktop"), "service": .string("direct"),
            "token": .string("listen-" + UUID().uuidString.lowercased()), "device_model": .string("herald listen"),
        ]
        registration["user_id"] = userID.map(JSONValue.string)
        let (status, created) = try await call("POST", "/v1/installations", key: key, body: .object(registration))
        guard status == 201 || status == 200, case .string(let id)? = created.objectValue?["id"] else {
            throw ValidationError(
                "Registering failed (\(status)): \(String(decoding: created.serialized(), as: UTF8.self))")
        }
        let (issued, answer) = try await call(
            "POST", "/v1/installations/\(id)/channel-credential", key: key, body: .object([:]))
        guard issued == 200, case .string(let credential)? = answer.objectValue?["credential"] else {
            throw ValidationError("No channel credential (\(issued)).")
        }
        let identity = Identity(server: server, installationID: id, credential: credential)
        try keep(identity)
        say("registered installation \(id) (kept in \(state))")
        return identity
    }

    private func call(_ method: String, _ path: String, key: String, body: JSONValue) async throws -> (Int, JSONValue) {
        var request = HTTPClientRequest(url: server + path)
        request.method = HTTPMethod(rawValue: method)
        request.headers.add(name: "Authorization", value: "Bearer \(key)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body.serialized()))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), (try? JSONValue.parse(Array(buffer: bytes))) ?? .null)
    }
}

/// Pushes printed on one connection.
private final class Counter: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    /// Counts one more and returns the total.
    func add() -> Int {
        count.withLock {
            $0 += 1; return $0
        }
    }
}

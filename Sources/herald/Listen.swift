import ArgumentParser
import AsyncHTTPClient
import Foundation
import HTTPTypes
import HeraldCore
import HummingbirdWSClient
import Logging
import NIOCore
import NIOHTTP1
import NIOWebSocket
import Synchronization

/// `herald listen`: a device with no cloud at all. Registers (or reuses) a direct-only
/// installation, connects its direct channel, and prints each push it receives, confirming it.
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
            """)

    @Option(help: "Base URL of a running Herald.") var server = "http://127.0.0.1:8080"
    @Option(help: "The app's server key, to register the installation (default: $HERALD_SERVER_KEY).")
    var key: String?
    @Option(help: "Where the installation id and channel credential are kept (mode 0600).")
    var state = "herald-listen.json"
    @Option(help: "A user id for the installation (a new registration only).") var userID: String?
    @Option(help: "Exit after this many pushes (default: run until interrupted).") var count: Int?
    @Flag(help: "Do not confirm pushes (the channel then delivers without confirmation).") var noConfirm = false

    /// What `--state` keeps.
    struct Identity: Codable {
        var server: String
        var installationID: String
        var credential: String
    }

    func run() async throws {
        guard let base = URL(string: server), let host = base.host, let scheme = base.scheme else {
            throw ValidationError("--server must be a URL such as http://127.0.0.1:8080.")
        }
        let identity = try await identity()
        let port = base.port ?? (scheme == "https" ? 443 : 80)
        let url = "\(scheme == "https" ? "wss" : "ws")://\(host):\(port)/v1/channel"
        say("listening: installation \(identity.installationID)")
        say(
            "send to it: herald send --server \(server) --key … --installation-id \(identity.installationID) --title Hi"
        )
        var received = 0
        while count.map({ received < $0 }) ?? true {
            received += try await listen(url: url, identity: identity, remaining: count.map { $0 - received })
            if count.map({ received >= $0 }) ?? false { break }
            say("channel closed; reconnecting in 2 s")
            try await Task.sleep(for: .seconds(2))
        }
    }

    /// One connection: subscribes and prints pushes until the socket closes or enough came.
    /// - Returns: How many pushes it printed.
    private func listen(url: String, identity: Identity, remaining: Int?) async throws -> Int {
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
        let data = try JSONEncoder().encode(identity)
        guard FileManager.default.createFile(atPath: state, contents: data, attributes: [.posixPermissions: 0o600])
        else { throw ValidationError("Cannot write \(state).") }
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

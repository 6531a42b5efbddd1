import ArgumentParser
import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldEngine
import HeraldServer
import NIOCore
import NIOHTTP1

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `herald send`: one notification, through a running server (its send API) or straight to one
/// token with the credentials of the configuration (like gorush's command-line mode).
struct Send: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a notification through a running Herald, or directly to one device token.",
        discussion: """
            Through a server:  herald send --server http://127.0.0.1:8080 --key hsk_… --user-id ann --title Hi
                               herald send --server … --key … --installation-id <id> --title Hi
                               herald send --server … --key … --body-file notification.json --wait
            Directly:          herald send --direct --config herald.yaml --app default --token <hex> --service apns --title Hi
            """)

    @OptionGroup var common: CommonOptions

    @Option(help: "Base URL of a running Herald.") var server: String?
    @Option(help: "The app's server key (default: $HERALD_SERVER_KEY).") var key: String?
    @Option(help: "A whole send-request JSON file (POST /v1/notifications body).") var bodyFile: String?
    @Flag(
        help:
            "Follow the notification's counts until it is final; exit 1 if it ended failed, canceled or expired."
    )
    var wait = false

    @Flag(help: "Send straight to one token with the configured credentials, no server.") var direct = false
    @Option(help: "The app whose credentials --direct uses.") var app = "default"
    @Option(help: "Device token (--direct, or a raw-token target through a server).") var token: String?
    @Option(help: "apns or fcm (with --token).") var service: String?
    @Option(help: "sandbox or production (with --token).") var environment = "production"

    @Option(help: "Target one installation (herald listen prints its id).") var installationID: String?
    @Option(help: "Target a user id.") var userID: String?
    @Option(help: "Target a channel.") var channel: String?
    @Flag(help: "Target every installation.") var all = false
    @Option(help: "Alert title.") var title: String?
    @Option(help: "Alert body.") var body: String?
    @Option(help: "Badge number.") var badge: Int?
    @Option(help: "Sound name.") var sound: String?

    func run() async throws {
        let request = try requestBody()
        if direct {
            try await sendDirect(request)
        } else {
            try await sendThroughServer(request)
        }
    }

    /// The send request from `--body-file` or from the flags.
    private func requestBody() throws -> JSONValue {
        if let bodyFile {
            guard let bytes = FileManager.default.contents(atPath: bodyFile) else {
                throw ValidationError("Cannot read \(bodyFile).")
            }
            return try JSONValue.parse(Array(bytes))
        }
        var target: [String: JSONValue] = [:]
        if let token {
            guard let service else { throw ValidationError("--token needs --service apns or fcm.") }
            target["tokens"] = .array([
                .object([
                    "token": .string(token), "service": .string(service), "environment": .string(environment),
                ])
            ])
        } else if let installationID {
            target["installation_ids"] = .array([.string(installationID)])
        } else if let userID {
            target["user_ids"] = .array([.string(userID)])
        } else if let channel {
            target["channels"] = .array([.string(channel)])
        } else if all {
            target["all"] = .bool(true)
        } else {
            throw ValidationError(
                "Name a target: --token, --installation-id, --user-id, --channel or --all (or give --body-file).")
        }
        var payload: [String: JSONValue] = [:]
        payload["title"] = title.map(JSONValue.string)
        payload["body"] = body.map(JSONValue.string)
        payload["badge"] = badge.map { .number(JSONNumber($0)) }
        payload["sound"] = sound.map(JSONValue.string)
        return .object(["target": .object(target), "payload": .object(payload)])
    }

    private func sendThroughServer(_ request: JSONValue) async throws {
        guard let server else { throw ValidationError("Give --server URL (or --direct).") }
        guard let key = key ?? ProcessInfo.processInfo.environment["HERALD_SERVER_KEY"] else {
            throw ValidationError("Give --key or set HERALD_SERVER_KEY.")
        }
        let base = server.hasSuffix("/") ? String(server.dropLast()) : server
        let (status, answer) = try await call("POST", base + "/v1/notifications", key: key, body: request)
        // Unbuffered (say), so a supervising process sees the id at once.
        say(String(decoding: answer.serialized(), as: UTF8.self))
        guard status / 100 == 2 else { throw ExitCode(1) }
        guard wait, case .string(let id)? = answer.objectValue?["id"] else { return }
        try await follow(id, base: base, key: key)
    }

    /// Polls the notification until its status is final, showing its counts: one line redrawn in
    /// place on a terminal, a line per change otherwise; then prints the final record.
    /// - Throws: `ExitCode(1)` when it ended `failed`, `canceled` or `expired`, or cannot be read.
    private func follow(_ id: String, base: String, key: String) async throws {
        let terminal = isatty(STDOUT_FILENO) == 1
        var shown: String?
        while true {
            let (code, record) = try await call("GET", base + "/v1/notifications/\(id)", key: key, body: nil)
            guard code == 200, let object = record.objectValue, case .string(let state)? = object["status"],
                let status = NotificationStatus(rawValue: state)
            else {
                if terminal, shown != nil { say("") }
                say(
                    "cannot read notification \(id) (HTTP \(code)): \(String(decoding: record.serialized(), as: UTF8.self))"
                )
                throw ExitCode(1)
            }
            let line = Self.progressLine(status: status, counts: object["counts"]?.objectValue ?? [:])
            if line != shown {
                if terminal {
                    FileHandle.standardOutput.write(Data(("\r" + line + "\u{1B}[K").utf8))
                } else {
                    say(line)
                }
                shown = line
            }
            if status.isFinal {
                if terminal { say("") }
                say(String(decoding: record.serialized(), as: UTF8.self))
                switch status {
                case .failed, .canceled, .expired: throw ExitCode(1)
                default: return
                }
            }
            try await Task.sleep(for: .milliseconds(250))
        }
    }

    /// `sending  targeted 120  sent 80  failed 1  invalid 2  skipped 3`: skipped counts preferences,
    /// expiry and rate limits together.
    static func progressLine(status: NotificationStatus, counts: [String: JSONValue]) -> String {
        func count(_ name: String) -> Int64 {
            if case .number(let number)? = counts[name] { return number.integerValue ?? 0 }
            return 0
        }
        let skipped = count("skipped_preferences") + count("skipped_expired") + count("rate_limited")
        return status.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)
            + " targeted \(count("targeted"))  sent \(count("sent"))  failed \(count("failed"))  "
            + "invalid \(count("invalid"))  skipped \(skipped)"
    }

    private func call(_ method: String, _ url: String, key: String, body: JSONValue?) async throws -> (Int, JSONValue) {
        var request = HTTPClientRequest(url: url)
        request.method = .init(rawValue: method)
        request.headers.add(name: "Authorization", value: "Bearer \(key)")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body.serialized()))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), (try? JSONValue.parse(bytes.readableBytesView)) ?? .null)
    }

    private func sendDirect(_ request: JSONValue) async throws {
        guard let token, let serviceName = service, let service = PushService(rawValue: serviceName),
            let environment = PushEnvironment(rawValue: environment)
        else { throw ValidationError("--direct needs --token, --service apns|fcm and a valid --environment.") }
        let configuration = try await common.load()
        guard let providers = configuration.providers[app],
            let transports = try TransportFactory.make([app: providers])[app]
        else { throw ValidationError("The configuration has no push credentials for app '\(app)'.") }
        let reader = try JSONObjectReader(request)
        let notification = PushNotification(
            id: Identifier.make(now: Date()), appID: app,
            target: try NotificationTarget(parsing: reader.members["target"] ?? .null),
            payload: try NotificationPayload(parsing: reader.members["payload"] ?? .null), createdAt: Date())
        let outcome = await transports.send(
            notification, token: token, service: service, environment: environment,
            platform: service == .apns ? .ios : .android)
        await transports.shutdown()
        print("\(outcome)")
        if case .delivered = outcome { return }
        throw ExitCode(1)
    }
}

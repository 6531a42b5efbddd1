import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldSNS
import HeraldSigV4
import HeraldTestSupport
import NIOCore
import NIOHTTP1
import Synchronization

/// moto (getmoto.org), a Python server that answers the AWS APIs, SNS and IAM among them, run as
/// a child process on 127.0.0.1 for one suite: started on a port the OS picks, stopped after.
public final class MotoServer: Sendable {
    /// moto's account id in every ARN it makes.
    public static let accountID = "123456789012"

    public let port: Int
    private let process: Process
    private let reader: FileHandle
    private let output: Collected

    /// The URL to point an `SNSClient` at.
    public var endpoint: String { "http://127.0.0.1:\(port)" }

    private init(process: Process, port: Int, reader: FileHandle, output: Collected) {
        self.process = process
        self.port = port
        self.reader = reader
        self.output = output
    }

    /// Starts moto on a free port of 127.0.0.1 and waits until it answers.
    public static func start(timeout: Duration = .seconds(60)) async throws -> MotoServer {
        let process = Process()
        // scripts/bootstrap's tools environment has moto; without it, this throws naming the script.
        process.executableURL = URL(fileURLWithPath: try TestPython.tools.interpreter())
        // Port 0: the OS picks a free one, which werkzeug prints ("Running on http://127.0.0.1:<port>").
        process.arguments = ["-m", "moto.server", "-H", "127.0.0.1", "-p", "0"]
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONUNBUFFERED"] = "1"
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let collected = Collected()
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            collected.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
        var started: MotoServer?
        do {
            try await waitUntil("moto to answer", timeout: timeout, every: .milliseconds(100)) {
                if let port = Self.port(in: collected.text.withLock { $0 }) {
                    let server = MotoServer(
                        process: process, port: port, reader: pipe.fileHandleForReading, output: collected)
                    if try await server.answers() {
                        started = server
                        return true
                    }
                }
                return !process.isRunning
            }
        } catch is WaitTimedOut {}
        if let started { return started }
        forceStop(process)
        throw MotoServerError(message: "moto did not start; it printed:\n\(collected.text.withLock { $0 })")
    }

    /// Stops the server and waits for it to exit.
    public func stop() {
        reader.readabilityHandler = nil
        Self.forceStop(process)
    }

    /// SIGKILL to the process this suite started, by its id: a child spawned from a thread of the
    /// test runner inherits that thread's blocked signals, SIGTERM among them, so moto would
    /// never see a `terminate()`.
    private static func forceStop(_ process: Process) {
        guard process.isRunning else { return }
        _ = kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// What moto printed (its request log), for failure messages.
    public var log: String { output.text.withLock { $0 } }

    /// moto's recorded state (`/moto-api/data.json`): every model instance by service and class.
    public func modelData() async throws -> JSONValue {
        let (status, body) = try await send(method: .GET, path: "/moto-api/data.json")
        guard status == 200 else { throw MotoServerError(message: "data.json answered \(status)") }
        return try JSONValue.parse(body)
    }

    /// The messages moto recorded as published to an endpoint, by message id.
    public func messages(endpointARN: String) async throws -> [String: String] {
        guard case .array(let endpoints)? = try await modelData().objectValue?["sns"]?.objectValue?["PlatformEndpoint"]
        else { return [:] }
        for endpoint in endpoints where endpoint.objectValue?["arn"] == .string(endpointARN) {
            var messages: [String: String] = [:]
            for (id, message) in endpoint.objectValue?["messages"]?.objectValue ?? [:] {
                if case .string(let text) = message { messages[id] = text }
            }
            return messages
        }
        return [:]
    }

    /// Turns IAM authentication on from the next request (`/moto-api/reset-auth`): moto then checks
    /// every request's SigV4 signature against the IAM users' access keys, and their policies.
    public func enableAuthentication() async throws {
        let (status, _) = try await send(method: .POST, path: "/moto-api/reset-auth", body: "0")
        guard status == 200 else { throw MotoServerError(message: "reset-auth answered \(status)") }
    }

    /// Calls moto's IAM (Query API, signed for `iam`) and returns the answer's text.
    public func iam(_ action: String, _ parameters: [(String, String)]) async throws -> String {
        let body = ([("Action", action), ("Version", "2010-05-08")] + parameters)
            .map { "\(SigV4.uriEncode($0.0))=\(SigV4.uriEncode($0.1))" }.joined(separator: "&")
        var request = SigV4Request(
            method: "POST",
            headers: ["Host": "127.0.0.1:\(port)", "Content-Type": "application/x-www-form-urlencoded; charset=utf-8"],
            body: Array(body.utf8))
        SigV4(
            credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "x"), region: "us-east-1",
            service: "iam"
        )
        .sign(&request, date: Date())
        let (status, answer) = try await send(method: .POST, path: "/", headers: request.headers, body: body)
        let text = String(decoding: answer, as: UTF8.self)
        guard status == 200 else { throw MotoServerError(message: "IAM \(action) answered \(status): \(text)") }
        return text
    }

    /// Makes an IAM user with an access key, allowed every SNS action when `allowSNS`, and returns
    /// its credentials (call before ``enableAuthentication()``).
    public func accessKey(user: String, allowSNS: Bool) async throws -> AWSCredentials {
        _ = try await iam("CreateUser", [("UserName", user)])
        if allowSNS {
            let policy = #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sns:*","Resource":"*"}]}"#
            _ = try await iam("PutUserPolicy", [("UserName", user), ("PolicyName", "sns"), ("PolicyDocument", policy)])
        }
        let answer = try await iam("CreateAccessKey", [("UserName", user)])
        guard let id = Self.text("AccessKeyId", in: answer), let secret = Self.text("SecretAccessKey", in: answer)
        else { throw MotoServerError(message: "CreateAccessKey answered no key: \(answer)") }
        return AWSCredentials(accessKeyID: id, secretAccessKey: secret)
    }

    /// The text of the first `<element>` of an XML answer.
    public static func text(_ element: String, in xml: String) -> String? {
        guard let open = xml.range(of: "<\(element)>"),
            let close = xml.range(of: "</\(element)>", range: open.upperBound..<xml.endIndex)
        else { return nil }
        return String(xml[open.upperBound..<close.lowerBound])
    }

    // MARK: - Internals

    final class Collected: Sendable {
        let text = Mutex("")
    }

    private func answers() async throws -> Bool {
        do {
            let (status, _) = try await send(method: .GET, path: "/moto-api/data.json")
            return status == 200
        } catch {
            return false
        }
    }

    /// Sends a request to moto and returns its status and body.
    public func send(
        method: HTTPMethod, path: String, headers: HTTPHeaders = [:], body: String? = nil
    )
        async throws -> (Int, [UInt8])
    {
        var request = HTTPClientRequest(url: "\(endpoint)\(path)")
        request.method = method
        request.headers = headers
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        return (Int(response.status.code), Array(buffer: bytes))
    }

    private static func port(in text: String) -> Int? {
        guard let range = text.range(of: "Running on http://127.0.0.1:") else { return nil }
        let digits = text[range.upperBound...].prefix { $0.isNumber }
        return Int(digits)
    }
}

/// moto failed to start or answered its own API unexpectedly.
public struct MotoServerError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }

    /// Creates an error.
    public init(message: String) { self.message = message }
}

import Foundation
import HeraldTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The built `herald` binary, run as an operator would.
struct HeraldProcess {
    /// The executable beside the test bundle (`swift build` puts both in one folder).
    static var executable: URL {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for folder in [beside, beside.deletingLastPathComponent()] {
            let candidate = folder.appendingPathComponent("herald")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/herald")
    }

    let process = Process()
    /// The process's standard output and error, one file: a pipe's end can arrive long after the process is gone
    /// (a copy of its write end inherited by another process started at the same moment), a file is complete the
    /// moment the process exits. The folder goes when the test process exits.
    private let outputPath: String

    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = Self.executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HERALD_") }
        env.merge(environment) { $1 }
        process.environment = env
        outputPath = try TemporaryDirectory().file("output")
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        defer { try? output.close() }
        process.standardOutput = output
        process.standardError = output
        try process.run()
    }

    /// Everything the process printed so far.
    var text: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// Waits until the output contains a line starting with `prefix`, and returns the rest of it.
    func line(startingWith prefix: String, timeout: Duration = .seconds(60)) async throws -> String {
        var found: String?
        do {
            try await waitUntil("a line starting with '\(prefix)'", timeout: timeout, every: .milliseconds(50)) {
                // Whether it ran is read before the output: once it has exited, the file holds all it printed.
                let running = process.isRunning
                found = text.split(separator: "\n").first { $0.hasPrefix(prefix) }.map {
                    String($0.dropFirst(prefix.count))
                }
                return found != nil || !running
            }
        } catch is WaitTimedOut {}
        if let found { return found }
        throw HeraldProcessError(message: "no line starting with '\(prefix)'; output:\n\(text)")
    }

    /// Waits for the process to exit and returns its status.
    func exitStatus(timeout: Duration = .seconds(30)) async throws -> Int32 {
        do {
            try await waitUntil("the process's exit", timeout: timeout, every: .milliseconds(50)) { !process.isRunning }
        } catch is WaitTimedOut {
            process.interrupt()
            throw HeraldProcessError(message: "process did not exit; output:\n\(text)")
        }
        return process.terminationStatus
    }
}

struct HeraldProcessError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// A small HTTP call with URLSession.
func request(
    _ method: String, _ url: String, bearer: String? = nil, json: String? = nil
) async throws -> (status: Int, body: String) {
    let answer = try await call(method, url, bearer: bearer, json: json)
    return (answer.status, answer.body)
}

/// An HTTP call with URLSession that sends and returns headers (names lower-cased).
func call(
    _ method: String, _ url: String, bearer: String? = nil, json: String? = nil, headers: [String: String] = [:]
) async throws -> (status: Int, body: String, headers: [String: String]) {
    var request = URLRequest(url: URL(string: url)!)
    request.httpMethod = method
    if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    if let json {
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(json.utf8)
    }
    let (data, response) = try await URLSession.shared.data(for: request)
    let http = response as? HTTPURLResponse
    var fields: [String: String] = [:]
    for (name, value) in http?.allHeaderFields ?? [:] { fields["\(name)".lowercased()] = "\(value)" }
    return (http?.statusCode ?? 0, String(decoding: data, as: UTF8.self), fields)
}

/// Runs `herald` with a pseudo-terminal for its output (util-linux `script`); returns its status and text.
func runOnTerminal(_ arguments: [String], timeout: Duration = .seconds(60)) async throws -> (Int32, String) {
    let command = ([HeraldProcess.executable.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
    process.arguments = ["-qec", command, "/dev/null"]
    process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HERALD_") }
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardInput = FileHandle.nullDevice
    try process.run()
    try? await waitUntil("herald's exit", timeout: timeout, every: .milliseconds(50)) { !process.isRunning }
    guard !process.isRunning else {
        process.terminate()
        throw HeraldProcessError(message: "herald \(arguments.first ?? "") did not exit on a terminal")
    }
    return (process.terminationStatus, String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
}
@Suite("herald as a process", .serialized)
struct ServeProcessTests {
    @Test("serve with no configuration: keys printed once, healthz, a registration, SIGTERM exits 0")
    func serveLifecycle() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = directory.file("herald.sqlite")
        let server = try HeraldProcess(["serve", "--port", "0", "--database", database])
        let address = try await server.line(startingWith: "Herald is listening on ")
        let serverKey = try await server.line(startingWith: "server key: ")
        let clientKey = try await server.line(startingWith: "client key: ")
        #expect(serverKey.hasPrefix("hsk_"))
        // One line each, so `grep 'server key'` finds exactly the key.
        #expect(server.text.split(separator: "\n").filter { $0.contains("server key") }.count == 1)
        #expect(clientKey.hasPrefix("hck_"))

        let health = try await request("GET", "\(address)/healthz")
        #expect(health.status == 200)
        #expect(try await request("GET", "\(address)/readyz").status == 200)
        let token = Fixtures.apnsToken()
        let created = try await request(
            "POST", "\(address)/v1/installations", bearer: clientKey,
            json: #"{"platform":"ios","token":"\#(token)","channels":["news"]}"#)
        #expect(created.status == 201)
        let listed = try await request("GET", "\(address)/v1/installations", bearer: serverKey)
        #expect(listed.status == 200)
        #expect(listed.body.contains(String(token.suffix(8))))
        #expect(!listed.body.contains(token))
        let bad = try await request(
            "POST", "\(address)/v1/installations", bearer: serverKey, json: #"{"platform":"ios","token":"xyz"}"#)
        #expect(bad.status == 400)
        #expect(bad.body.contains("invalid_token"))

        server.process.terminate()  // SIGTERM
        #expect(try await server.exitStatus() == 0)
        // Logs never carry keys or tokens.
        let logs = server.text.split(separator: "\n").filter {
            !$0.hasPrefix("server key:") && !$0.hasPrefix("client key:")
        }
        for secret in [serverKey, clientKey, token] {
            #expect(!logs.joined(separator: "\n").contains(secret))
        }
        #expect(FileManager.default.fileExists(atPath: database + ".key"))
        let permissions = try FileManager.default.attributesOfItem(atPath: database + ".key")[.posixPermissions] as? Int
        #expect(permissions == 0o600)

        // A second start keeps the keys and does not print them; `keys show` does.
        let again = try HeraldProcess(["serve", "--port", "0", "--database", database])
        _ = try await again.line(startingWith: "Herald is listening on ")
        again.process.interrupt()  // SIGINT
        #expect(try await again.exitStatus() == 0)
        #expect(!again.text.contains(serverKey))
        let show = try HeraldProcess(["keys", "show", "--database", database])
        #expect(try await show.exitStatus() == 0)
        #expect(show.text.contains("server key: \(serverKey)"))
        #expect(show.text.contains("client key: \(clientKey)"))
    }

    @Test(
        "listen registers a direct-only installation, prints the push sent to it and confirms it; a second run reuses it"
    )
    func listen() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try HeraldProcess(["serve", "--port", "0", "--database", directory.file("herald.sqlite")])
        let address = try await server.line(startingWith: "Herald is listening on ")
        let serverKey = try await server.line(startingWith: "server key: ")
        let state = directory.file("listen.json")

        let listener = try HeraldProcess([
            "listen", "--server", address, "--key", serverKey, "--state", state, "--count", "1",
        ])
        let id = try await listener.line(startingWith: "listening: installation ")
        #expect(
            (try FileManager.default.attributesOfItem(atPath: state)[.posixPermissions] as? NSNumber)?.intValue == 0o600
        )
        // The listener subscribes just after it prints; a push sent before lands once it does.
        let sender = try HeraldProcess([
            "send", "--server", address, "--key", serverKey, "--installation-id", id, "--title", "Hello",
            "--body", "from Herald", "--wait",
        ])
        #expect(try await sender.exitStatus() == 0, "\(sender.text)")
        #expect(try await listener.exitStatus() == 0, "\(listener.text)")
        #expect(listener.text.contains("Hello — from Herald"), "\(listener.text)")
        #expect(sender.text.contains(#""sent":1"#), "\(sender.text)")
        #expect(!listener.text.contains(serverKey))

        let again = try HeraldProcess(["listen", "--server", address, "--state", state, "--count", "1"])
        #expect(try await again.line(startingWith: "listening: installation ") == id)
        _ = try await request(
            "POST", "\(address)/v1/notifications", bearer: serverKey,
            json: #"{"target":{"installation_ids":["\#(id)"]},"payload":{"body":"again"}}"#)
        #expect(try await again.exitStatus() == 0, "\(again.text)")
        #expect(again.text.contains("reusing installation \(id)"))
        #expect(again.text.contains("again"))

        server.process.terminate()
        #expect(try await server.exitStatus() == 0)
    }

    @Test("vapid writes a 0600 PEM private key and prints the applicationServerKey; it never overwrites silently")
    func vapid() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("vapid.pem")
        let first = try HeraldProcess(["vapid", "--out", file])
        #expect(try await first.exitStatus() == 0)
        let publicKey = try await first.line(startingWith: "public key: ")
        // base64url of a 65-byte uncompressed P-256 point, unpadded.
        #expect(publicKey.count == 87)
        #expect(publicKey.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let pem = try String(contentsOfFile: file, encoding: .utf8)
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let again = try HeraldProcess(["vapid", "--out", file])
        #expect(try await again.exitStatus() != 0)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == pem)
    }

    @Test("migrate creates the database and exits 0; configuration comes from the environment and a file")
    func migrateAndConfiguration() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let migrate = try HeraldProcess(["migrate"], environment: ["HERALD_DATABASE": directory.file("env.sqlite")])
        #expect(try await migrate.exitStatus() == 0)
        #expect(FileManager.default.fileExists(atPath: directory.file("env.sqlite")))

        let config = directory.file("herald.yaml")
        try """
        server:
          port: 0
        database: sqlite://\(directory.file("file.sqlite"))
        apps: [shop]
        app:
          shop:
            server_key: hsk_from-the-config-file-000
            client_key: hck_from-the-config-file-000
        """.write(toFile: config, atomically: false, encoding: .utf8)
        let server = try HeraldProcess(["serve", "--config", config])
        let address = try await server.line(startingWith: "Herald is listening on ")
        let listed = try await request("GET", "\(address)/v1/installations", bearer: "hsk_from-the-config-file-000")
        #expect(listed.status == 200)
        #expect(!server.text.contains("server key:"))
        server.process.terminate()
        #expect(try await server.exitStatus() == 0)

        let broken = try HeraldProcess(["serve", "--port", "0"], environment: ["HERALD_LOG_LEVEL": "loud"])
        #expect(try await broken.exitStatus() != 0)
        #expect(broken.text.contains("log.level"))
    }

    @Test("a database sealed under one master key refuses a process holding another, before anything is written")
    func masterKeyCheck() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = directory.file("herald.sqlite")
        let first = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let second = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let migrate = try HeraldProcess(
            ["migrate", "--database", database], environment: ["HERALD_SECRET_KEY": first])
        #expect(try await migrate.exitStatus() == 0, "\(migrate.text)")
        let again = try HeraldProcess(["migrate", "--database", database], environment: ["HERALD_SECRET_KEY": first])
        #expect(try await again.exitStatus() == 0, "\(again.text)")
        let other = try HeraldProcess(
            ["serve", "--port", "0", "--database", database], environment: ["HERALD_SECRET_KEY": second])
        #expect(try await other.exitStatus() != 0)
        #expect(other.text.contains("sealed with another master key"), "\(other.text)")
        #expect(!other.text.contains("Herald is listening"))
    }

    @Test("a second serve on the same SQLite database is refused while the first runs, and starts once it is gone")
    func singleNodeLock() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = directory.file("herald.sqlite")
        let first = try HeraldProcess(["serve", "--port", "0", "--database", database])
        _ = try await first.line(startingWith: "Herald is listening on ")
        let second = try HeraldProcess(["serve", "--port", "0", "--database", database])
        #expect(try await second.exitStatus() != 0)
        #expect(second.text.contains("Another herald serve is using"), "\(second.text)")
        kill(first.process.processIdentifier, SIGKILL)
        _ = try await first.exitStatus()
        let third = try HeraldProcess(["serve", "--port", "0", "--database", database])
        _ = try await third.line(startingWith: "Herald is listening on ")
        third.process.terminate()
        #expect(try await third.exitStatus() == 0)
    }

    @Test("a connection that sends no request is closed after http.header_timeout_seconds, and no error is logged")
    func silentConnections() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try HeraldProcess(
            ["serve", "--port", "0", "--database", directory.file("herald.sqlite")],
            environment: ["HERALD_HTTP_HEADER_TIMEOUT_SECONDS": "1"])
        let address = try await server.line(startingWith: "Herald is listening on ")
        let port = try #require(URL(string: address)?.port)
        // A client that says nothing is hung up on; one that connects and leaves (a load balancer's TCP check) is
        // nothing to report either.
        let silent = try RawConnection.open(port: port)
        #expect(try await silent.waitForClose(within: .seconds(10)), "the header timeout closed the connection")
        silent.close()
        for _ in 0..<3 {
            try RawConnection.open(port: port).close()
        }
        #expect(try await request("GET", "\(address)/healthz").status == 200)
        server.process.terminate()
        #expect(try await server.exitStatus() == 0)
        // Text lines are "<time> <level> <logger>: …", JSON lines carry "level".
        let errors = server.text.split(separator: "\n").filter { line in
            ["error", "critical"].contains { level in
                line.split(separator: " ").dropFirst().first == Substring(level)
                    || line.contains(#""level":"\#(level)""#)
            }
        }
        #expect(errors.isEmpty, "\(errors)")
    }
}

/// A TCP connection to Herald that sends nothing, for the read timeouts.
final class RawConnection: Sendable {
    let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Connects to 127.0.0.1:`port`.
    static func open(port: Int) throws -> RawConnection {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw HeraldProcessError(message: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(descriptor)
            throw HeraldProcessError(message: "connect: errno \(errno)")
        }
        return RawConnection(descriptor: descriptor)
    }

    /// Whether the server closed the connection (a read returns end of file) within `limit`.
    func waitForClose(within limit: Duration) async throws -> Bool {
        var pending = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        do {
            try await waitUntil("the connection readable", timeout: limit, every: .milliseconds(50)) {
                poll(&pending, 1, 0) > 0
            }
        } catch is WaitTimedOut {
            return false
        }
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, 0) <= 0
    }

    func close() {
        Glibc.close(descriptor)
    }
}

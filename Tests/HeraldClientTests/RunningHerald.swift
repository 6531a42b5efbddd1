import Foundation
import HeraldProviderMocks
import HeraldTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `herald serve` as a separate process on a free port, its `default` app sending through a mock
/// APNs and taking HS256 user tokens: the server the client library calls over real HTTP.
struct RunningHerald {
    static let topic = "com.example.client"
    static let jwtSecret = "herald-client-tests-hs256-secret-0123456789"

    let directory: TemporaryDirectory
    let apns: MockAPNsServer
    let process: Process
    let address: URL
    let serverKey: String
    let clientKey: String
    let users: UserTokenIssuer

    private init(
        directory: TemporaryDirectory, apns: MockAPNsServer, process: Process, address: URL, serverKey: String,
        clientKey: String, users: UserTokenIssuer
    ) {
        self.directory = directory
        self.apns = apns
        self.process = process
        self.address = address
        self.serverKey = serverKey
        self.clientKey = clientKey
        self.users = users
    }

    /// The `herald` binary `swift build` put beside the test bundle.
    static var executable: URL {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [beside, beside.deletingLastPathComponent()].map { $0.appendingPathComponent("herald") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/herald")
    }

    /// Starts the mock APNs and the server, and waits until it listens and has printed its keys.
    static func start() async throws -> RunningHerald {
        let directory = try TemporaryDirectory()
        let ca = try TestCertificateAuthority()
        let key = TestAPNsAuthKey()
        let apns = try await MockAPNsServer.start(ca: ca, credentials: [key.credential(topics: [topic])])
        let keyFile = directory.file("AuthKey.p8")
        try key.p8PEM.write(toFile: keyFile, atomically: false, encoding: .utf8)
        let caFile = directory.file("ca.pem")
        try ca.rootPEM.write(toFile: caFile, atomically: false, encoding: .utf8)
        let config = directory.file("herald.yaml")
        try """
        database: \(directory.file("herald.sqlite"))
        app:
          default:
            apns:
              key_file: \(keyFile)
              key_id: \(key.keyID)
              team_id: \(key.teamID)
              topic: \(topic)
              url: https://127.0.0.1:\(apns.port)
              ca_file: \(caFile)
            jwt:
              hs256_secret: \(jwtSecret)
        engine:
          poll_interval_ms: 100
        """.write(toFile: config, atomically: false, encoding: .utf8)

        // Output goes to a file the test reads, never to a pipe a busy server could fill.
        let log = directory.file("herald.log")
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        let process = Process()
        process.executableURL = executable
        process.arguments = ["serve", "--config", config, "--port", "0"]
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HERALD_") }
        process.standardOutput = output
        process.standardError = output
        try process.run()

        func value(after prefix: String) async throws -> String {
            var found: String?
            try? await waitUntil("'\(prefix)' printed", timeout: .seconds(60), every: .milliseconds(50)) {
                // Whether it ran is read before the output: once it has exited, the file holds all it printed.
                let running = process.isRunning
                let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                found = text.split(separator: "\n").first { $0.hasPrefix(prefix) }.map {
                    String($0.dropFirst(prefix.count))
                }
                return found != nil || !running
            }
            if let found { return found }
            process.terminate()
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw TestSetupError("herald printed no '\(prefix)'; output:\n\(text)")
        }
        let address = try await value(after: "Herald is listening on ")
        return RunningHerald(
            directory: directory, apns: apns, process: process, address: URL(string: address)!,
            serverKey: try await value(after: "server key: "), clientKey: try await value(after: "client key: "),
            users: await UserTokenIssuer.hs256(secret: jwtSecret))
    }

    /// Stops the server (SIGTERM) and the mock, and removes the files.
    func stop() async {
        process.terminate()
        try? await waitUntil("herald's exit", every: .milliseconds(50)) { !process.isRunning }
        try? await apns.shutdown()
        directory.remove()
    }

    /// A user token for `subject`, valid for an hour.
    func userToken(_ subject: String) async throws -> String {
        try await users.token(subject: subject)
    }

    /// Calls the native API with the server key; the status and the JSON object answered.
    func call(_ method: String, _ path: String, json: String? = nil) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: address.appendingPathComponent(path))
        request.httpMethod = method
        request.setValue("Bearer \(serverKey)", forHTTPHeaderField: "Authorization")
        if let json {
            request.httpBody = Data(json.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, object)
    }
}

/// A failure in a test's own set-up.
struct TestSetupError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

import Foundation
import HeraldCore
import HeraldProviderMocks
import HeraldTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A broadcast under way: a slow mock APNs (40 ms an answer), `devices` imported installations,
/// `herald serve` running, and one notification to all of them accepted.
struct RunningBroadcast {
    let directory: TemporaryDirectory
    let apns: MockAPNsServer
    let tokens: [String]
    let config: String
    let server: HeraldProcess
    let serverKey: String
    let notificationID: String

    static func start(devices: Int, pageSize: Int) async throws -> Self {
        let directory = try TemporaryDirectory()
        let ca = try TestCertificateAuthority()
        let key = TestAPNsAuthKey()
        let apns = try await MockAPNsServer.start(ca: ca, credentials: [key.credential(topics: ["com.example.crash"])])
        let tokens = (0..<devices).map { _ in Fixtures.apnsToken() }
        // A slow provider: the broadcast takes seconds, so a stop lands mid-way.
        for token in tokens { apns.script(token: token, .success(after: .milliseconds(40))) }
        let config = try ProviderFixture.config(
            directory: directory, ca: ca, key: key, apnsPort: apns.port, pageSize: pageSize)
        let importFile = directory.file("devices.jsonl")
        try tokens.map { #"{"platform":"ios","token":"\#($0)"}"# }.joined(separator: "\n")
            .write(toFile: importFile, atomically: false, encoding: .utf8)
        let importer = try HeraldProcess(["import", importFile, "--config", config])
        #expect(try await importer.exitStatus(timeout: .seconds(300)) == 0, "\(importer.text)")
        #expect(importer.text.contains("imported \(devices) installations"))

        let server = try HeraldProcess(["serve", "--config", config, "--port", "0"])
        let address = try await server.line(startingWith: "Herald is listening on ")
        let serverKey = try await server.line(startingWith: "server key: ")
        let sent = try await request(
            "POST", "\(address)/v1/notifications", bearer: serverKey,
            json: #"{"target":{"all":true},"payload":{"title":"Broadcast"}}"#)
        #expect(sent.status == 202, "\(sent.body)")
        let id = try #require(
            (try JSONSerialization.jsonObject(with: Data(sent.body.utf8)) as? [String: Any])?["id"] as? String)
        return Self(
            directory: directory, apns: apns, tokens: tokens, config: config, server: server, serverKey: serverKey,
            notificationID: id)
    }

    /// Starts `herald serve` again and waits until the notification is `done`; returns its record.
    func restartUntilDone() async throws -> [String: Any] {
        let second = try HeraldProcess(["serve", "--config", config, "--port", "0"])
        let address = try await second.line(startingWith: "Herald is listening on ")
        let record = try await doneRecord(of: notificationID, at: address, key: serverKey)
        second.process.terminate()
        #expect(try await second.exitStatus() == 0)
        return record
    }

    func finish() async throws {
        try await apns.shutdown()
        directory.remove()
    }
}

@Suite("herald survives kill -9 mid-broadcast", .serialized)
struct CrashRecoveryTests {
    /// 2,000 devices (10 pages of 200) by default, so CI stays short; `HERALD_CRASH_BROADCAST_DEVICES=20000` for the
    /// long run.
    static let devices =
        ProcessInfo.processInfo.environment["HERALD_CRASH_BROADCAST_DEVICES"].flatMap(Int.init) ?? 2_000
    static let pageSize = 200

    @Test("Every device gets the broadcast at least once after a kill -9, with at most one page sent twice")
    func killDuringBroadcast() async throws {
        let broadcast = try await RunningBroadcast.start(devices: Self.devices, pageSize: Self.pageSize)
        try await broadcast.apns.waitForRequests(count: Self.devices / 4, timeout: .seconds(120))
        kill(broadcast.server.process.processIdentifier, SIGKILL)
        _ = try await broadcast.server.exitStatus()
        #expect(broadcast.apns.requests.count < Self.devices, "the kill came after the broadcast finished")

        let record = try await broadcast.restartUntilDone()
        #expect(record["status"] as? String == "done")
        let received = broadcast.apns.requests.compactMap(\.token)
        let distinct = Set(received)
        #expect(Set(broadcast.tokens).subtracting(distinct).isEmpty)
        let duplicates = received.count - distinct.count
        #expect(duplicates <= Self.pageSize, "\(duplicates) duplicates")
        try await broadcast.finish()
    }
}

@Suite("herald keeps what waits across a kill -9", .serialized)
struct WaitingWorkCrashTests {
    @Test(
        "kill -9 while a delivery waits for its Retry-After and a notification for its push time: both go out once after a restart"
    )
    func killWhileWaiting() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let ca = try TestCertificateAuthority()
        let key = TestAPNsAuthKey()
        let apns = try await MockAPNsServer.start(ca: ca, credentials: [key.credential(topics: ["com.example.crash"])])
        let config = try ProviderFixture.config(directory: directory, ca: ca, key: key, apnsPort: apns.port)
        let tokens = (0..<3).map { _ in Fixtures.apnsToken() }
        // The first device asks for a pause of its own (429 with Retry-After: 2), then takes the push.
        apns.script(token: tokens[0], .tooManyRequests(retryAfter: 2), times: 1)

        let server = try HeraldProcess(["serve", "--config", config, "--port", "0"])
        let address = try await server.line(startingWith: "Herald is listening on ")
        let serverKey = try await server.line(startingWith: "server key: ")
        for token in tokens {
            let created = try await request(
                "POST", "\(address)/v1/installations", bearer: serverKey,
                json: #"{"platform":"ios","token":"\#(token)","user_id":"ann"}"#)
            #expect(created.status == 201, "\(created.body)")
        }
        func send(_ json: String) async throws -> String {
            let sent = try await request("POST", "\(address)/v1/notifications", bearer: serverKey, json: json)
            #expect(sent.status == 202, "\(sent.body)")
            return try #require(
                (try JSONSerialization.jsonObject(with: Data(sent.body.utf8)) as? [String: Any])?["id"] as? String)
        }
        let pushTime = ISO8601DateFormatter().string(from: Date().addingTimeInterval(4))
        let now = try await send(#"{"target":{"user_ids":["ann"]},"payload":{"title":"Now"}}"#)
        let later = try await send(
            #"{"target":{"user_ids":["ann"]},"payload":{"title":"Later"},"push_time":"\#(pushTime)"}"#)

        // Killed once the first notification's page is committed with one delivery waiting for its retry.
        try await apns.waitForRequests(count: 3, timeout: .seconds(30))
        let database = directory.file("herald.sqlite")
        try await waitUntil("the retry stored", timeout: .seconds(10)) {
            let (_, out, _) = try await ScriptProcess.run(
                ["sqlite3", database, "SELECT count(*) FROM pending_deliveries"])
            return out.trimmingCharacters(in: .whitespacesAndNewlines) == "1"
        }
        kill(server.process.processIdentifier, SIGKILL)
        _ = try await server.exitStatus()
        #expect(apns.requests.count == 3, "the retry or the scheduled push went out before the kill")

        let second = try HeraldProcess(["serve", "--config", config, "--port", "0"])
        let secondAddress = try await second.line(startingWith: "Herald is listening on ")
        var records: [String: [String: Any]] = [:]
        for id in [now, later] {
            records[id] = try await doneRecord(of: id, at: secondAddress, key: serverKey, timeout: .seconds(60))
        }
        second.process.terminate()
        #expect(try await second.exitStatus() == 0)
        for id in [now, later] {
            #expect(records[id]?["status"] as? String == "done", "\(records[id] ?? [:])")
            #expect((records[id]?["counts"] as? [String: Any])?["sent"] as? Int == 3, "\(records[id] ?? [:])")
        }
        // Each device got each notification once; the first device's 429 and its retry are one delivery.
        func received(_ id: String) -> [String] {
            apns.requests.filter { request in
                guard let herald = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any]
                else { return false }
                return (herald["herald"] as? [String: Any])?["id"] as? String == id && request.status == 200
            }.compactMap(\.token)
        }
        #expect(received(now).sorted() == tokens.sorted())
        #expect(received(later).sorted() == tokens.sorted())
        #expect(apns.requests.count == 7, "\(apns.requests.map { "\($0.status) …\($0.token?.suffix(8) ?? "")" })")
        try await apns.shutdown()
    }
}

@Suite("herald stops gracefully mid-broadcast", .serialized)
struct GracefulShutdownTests {
    static let devices = 2_000
    static let pageSize = 200

    @Test(
        "SIGTERM mid-broadcast: in-flight batches finish and commit, the job is released, exit 0; a restart finishes with no duplicate"
    )
    func terminateDuringBroadcast() async throws {
        let broadcast = try await RunningBroadcast.start(devices: Self.devices, pageSize: Self.pageSize)
        try await broadcast.apns.waitForRequests(count: Self.devices / 4, timeout: .seconds(120))
        broadcast.server.process.terminate()  // SIGTERM
        #expect(try await broadcast.server.exitStatus(timeout: .seconds(60)) == 0, "\(broadcast.server.text)")
        #expect(broadcast.apns.requests.count < Self.devices, "the broadcast finished before the stop")

        let record = try await broadcast.restartUntilDone()
        #expect(record["status"] as? String == "done")
        #expect((record["counts"] as? [String: Any])?["sent"] as? Int == Self.devices, "\(record)")
        // Every batch on the wire at the stop finished and committed before exit: nothing twice.
        let received = broadcast.apns.requests.compactMap(\.token)
        #expect(Set(received) == Set(broadcast.tokens))
        #expect(received.count == Self.devices, "\(received.count - Set(received).count) duplicates")
        try await broadcast.finish()
    }
}

/// Reads a notification from a running server until it is `done` (at most `timeout`) and returns
/// its record.
func doneRecord(
    of id: String, at address: String, key: String, timeout: Duration = .seconds(300)
) async throws -> [String: Any] {
    var record: [String: Any] = [:]
    try await waitUntil(
        "notification \(id) done", timeout: timeout, every: .milliseconds(200),
        detail: { "status \(record["status"] ?? "none")" }
    ) {
        let response = try await request("GET", "\(address)/v1/notifications/\(id)", bearer: key)
        record = (try JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any]) ?? [:]
        return record["status"] as? String == "done"
    }
    return record
}

@Suite("Live Activity updates survive kill -9 in flight", .serialized)
struct LiveActivityCrashTests {
    @Test(
        "Updates in flight when the server is killed: after a restart each is final, the device saw revisions in order (one again at most), the last one last"
    )
    func killDuringUpdates() async throws {
        let directory = try TemporaryDirectory()
        let ca = try TestCertificateAuthority()
        let key = TestAPNsAuthKey()
        let apns = try await MockAPNsServer.start(ca: ca, credentials: [key.credential(topics: ["com.example.crash"])])
        let config = try ProviderFixture.config(directory: directory, ca: ca, key: key, apnsPort: apns.port)
        let server = try HeraldProcess(["serve", "--config", config, "--port", "0"])
        let address = try await server.line(startingWith: "Herald is listening on ")
        let serverKey = try await server.line(startingWith: "server key: ")
        func json(_ body: String) -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]) ?? [:]
        }
        let registered = try await request(
            "POST", "\(address)/v1/installations", bearer: serverKey,
            json: #"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
        let installation = try #require(json(registered.body)["id"] as? String, "\(registered)")
        let token = Fixtures.apnsToken()
        // A slow APNs: the kill lands while updates are being sent.
        apns.script(token: token, .success(after: .milliseconds(150)))
        let joined = try await request(
            "PUT", "\(address)/v1/installations/\(installation)/live-activities/delivery-7", bearer: serverKey,
            json: #"{"attributes_type":"DeliveryAttributes","token":"\#(token)"}"#)
        #expect(joined.status == 200, "\(joined)")
        let updates = 15
        var notifications: [String] = []
        for n in 1...updates {
            let sent = try await request(
                "POST", "\(address)/v1/live-activities/delivery-7/updates", bearer: serverKey,
                json: #"{"event":"update","content_state":{"n":\#(n)}}"#)
            #expect(sent.status == 202, "\(sent)")
            notifications.append(json(sent.body)["notification_id"] as? String ?? "")
        }
        try await apns.waitForRequests(count: 1, timeout: .seconds(30))
        kill(server.process.processIdentifier, SIGKILL)
        _ = try await server.exitStatus()
        let beforeRestart = apns.requests.count

        let second = try HeraldProcess(["serve", "--config", config, "--port", "0"])
        let again = try await second.line(startingWith: "Herald is listening on ")
        for id in notifications {
            let record = try await doneRecord(of: id, at: again, key: serverKey, timeout: .seconds(60))
            #expect(record["status"] as? String == "done", "\(record)")
        }
        let received = apns.requests.filter { $0.token == token }.compactMap { request -> Int? in
            let state = request.json?.objectValue?["aps"]?.objectValue?["content-state"]?.objectValue
            guard case .number(let n)? = state?["n"] else { return nil }
            return n.integerValue.map(Int.init)
        }
        #expect(received.last == updates, "\(received)")
        #expect(received == received.sorted(), "a revision after a later one: \(received)")
        #expect(received.count - Set(received).count <= 1, "more than one revision sent again: \(received)")
        second.process.terminate()
        #expect(try await second.exitStatus() == 0)
        print("live activity crash: \(beforeRestart) sent before the kill; received \(received)")
        try await apns.shutdown()
        directory.remove()
    }
}

/// A Herald configuration whose `default` app sends through a mock APNs.
enum ProviderFixture {
    static func config(
        directory: TemporaryDirectory, ca: TestCertificateAuthority, key: TestAPNsAuthKey, apnsPort: Int,
        pageSize: Int = 500, deliveryLog: String = "failures", database: String? = nil, secretKey: String? = nil
    ) throws -> String {
        let keyFile = directory.file("AuthKey.p8")
        try key.p8PEM.write(toFile: keyFile, atomically: false, encoding: .utf8)
        let caFile = directory.file("ca.pem")
        try ca.rootPEM.write(toFile: caFile, atomically: false, encoding: .utf8)
        let config = directory.file("herald.yaml")
        try """
        database: \(database ?? directory.file("herald.sqlite"))
        \(secretKey.map { "secret_key: \($0)" } ?? "")
        app:
          default:
            delivery_log: \(deliveryLog)
            apns:
              key_file: \(keyFile)
              key_id: \(key.keyID)
              team_id: \(key.teamID)
              topic: com.example.crash
              url: https://127.0.0.1:\(apnsPort)
              ca_file: \(caFile)
        engine:
          page_size: \(pageSize)
          poll_interval_ms: 100
        """.write(toFile: config, atomically: false, encoding: .utf8)
        return config
    }
}

@Suite("herald send, import and cleanup as processes", .serialized)
struct SendCommandTests {
    @Test("send through a running server waits for done; send --direct reaches one token; cleanup reports")
    func sendVerbs() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let ca = try TestCertificateAuthority()
        let key = TestAPNsAuthKey()
        let apns = try await MockAPNsServer.start(ca: ca, credentials: [key.credential(topics: ["com.example.crash"])])
        let config = try ProviderFixture.config(directory: directory, ca: ca, key: key, apnsPort: apns.port)
        let registered = Fixtures.apnsToken()
        let server = try HeraldProcess(["serve", "--config", config, "--port", "0"])
        let address = try await server.line(startingWith: "Herald is listening on ")
        let serverKey = try await server.line(startingWith: "server key: ")
        let created = try await request(
            "POST", "\(address)/v1/installations", bearer: serverKey,
            json: #"{"platform":"ios","token":"\#(registered)","user_id":"ann"}"#)
        #expect(created.status == 201)

        let send = try HeraldProcess(
            ["send", "--server", address, "--key", serverKey, "--user-id", "ann", "--title", "Hi", "--wait"])
        #expect(try await send.exitStatus(timeout: .seconds(60)) == 0, "\(send.text)")
        #expect(send.text.contains(#""status":"done""#), "\(send.text)")
        #expect(apns.requests.map(\.token) == [registered])
        server.process.terminate()
        #expect(try await server.exitStatus() == 0)

        let direct = Fixtures.apnsToken()
        let once = try HeraldProcess(
            ["send", "--direct", "--config", config, "--token", direct, "--service", "apns", "--title", "Direct"])
        #expect(try await once.exitStatus(timeout: .seconds(60)) == 0, "\(once.text)")
        #expect(once.text.contains("delivered"))
        #expect(apns.requests.last?.token == direct)
        apns.script(token: direct, .unregistered())
        let refused = try HeraldProcess(
            ["send", "--direct", "--config", config, "--token", direct, "--service", "apns", "--title", "Again"])
        #expect(try await refused.exitStatus(timeout: .seconds(60)) == 1)
        #expect(refused.text.contains("invalidToken"))

        let cleanup = try HeraldProcess(["cleanup", "--config", config])
        #expect(try await cleanup.exitStatus() == 0)
        #expect(cleanup.text.contains("invalid installations deleted: 0"))
        try await apns.shutdown()
    }
}

import Foundation
import HeraldCore
import HeraldProviderMocks
import HeraldTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Several `herald serve` processes on one PostgreSQL database, with one mock APNs.
struct Cluster {
    let directory: TemporaryDirectory
    let database: PostgresTestDatabase
    let ca: TestCertificateAuthority
    let key: TestAPNsAuthKey
    let apns: MockAPNsServer
    let config: String

    /// - Parameters:
    ///   - engine: More `engine:` settings, one `key: value` per line.
    ///   - server: The PostgreSQL cluster's URL, when not `HERALD_TEST_POSTGRES`'s.
    static func start(
        pageSize: Int = 500, lease: Int = 3, extra: String = "", engine: [String] = [], server: String? = nil
    ) async throws -> Self {
        let directory = try TemporaryDirectory()
        let database =
            if let server { try await PostgresTestDatabase.create(server: server) } else {
                try await PostgresTestDatabase.create()
            }
        let ca = try TestCertificateAuthority()
        let key = TestAPNsAuthKey()
        let apns = try await MockAPNsServer.start(ca: ca, credentials: [key.credential(topics: ["com.example.crash"])])
        let keyFile = directory.file("AuthKey.p8")
        try key.p8PEM.write(toFile: keyFile, atomically: false, encoding: .utf8)
        let caFile = directory.file("ca.pem")
        try ca.rootPEM.write(toFile: caFile, atomically: false, encoding: .utf8)
        // Every node must hold the same master key: the tokens one seals, the others open.
        let secret = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let config = directory.file("herald.yaml")
        try """
        database: \(database.url)
        secret_key: \(secret)
        app:
          default:
            apns:
              key_file: \(keyFile)
              key_id: \(key.keyID)
              team_id: \(key.teamID)
              topic: com.example.crash
              url: https://127.0.0.1:\(apns.port)
              ca_file: \(caFile)
        \(extra)
        engine:
          page_size: \(pageSize)
          poll_interval_ms: 200
          lease_seconds: \(lease)
        \(engine.map { "  \($0)" }.joined(separator: "\n"))
        """.write(toFile: config, atomically: false, encoding: .utf8)
        return Self(directory: directory, database: database, ca: ca, key: key, apns: apns, config: config)
    }

    /// Registers an iOS device for each APNs token with `herald import`.
    func importDevices(_ tokens: [String]) async throws {
        try await importDevices(lines: tokens.map { #"{"platform":"ios","token":"\#($0)"}"# })
    }

    /// Registers the installations of `herald import`'s JSON lines.
    func importDevices(lines: [String]) async throws {
        let importFile = directory.file("devices.jsonl")
        try lines.joined(separator: "\n").write(toFile: importFile, atomically: false, encoding: .utf8)
        let importer = try HeraldProcess(["import", importFile, "--config", config])
        #expect(try await importer.exitStatus(timeout: .seconds(300)) == 0, "\(importer.text)")
    }

    /// Starts a node; the first one on the database prints the generated server key.
    func node(environment: [String: String] = [:]) async throws -> (process: HeraldProcess, address: String) {
        let process = try HeraldProcess(["serve", "--config", config, "--port", "0"], environment: environment)
        return (process, try await process.line(startingWith: "Herald is listening on "))
    }

    /// Runs one SQL query with psql and returns its rows as text.
    func query(_ sql: String) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["psql", database.url, "-Atc", sql]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    func finish() async throws {
        try await apns.shutdown()
        try await database.drop()
        directory.remove()
    }
}

@Suite("Several herald nodes on one PostgreSQL database", .serialized)
struct MultiNodeTests {
    /// 2,000 devices (10 pages of 200) by default, so CI stays short; `HERALD_MULTINODE_DEVICES=50000` for the long run.
    static let devices = ProcessInfo.processInfo.environment["HERALD_MULTINODE_DEVICES"].flatMap(Int.init) ?? 2_000
    static let pageSize = 200

    @Test(
        "Two nodes, a broadcast to 2,000 devices (HERALD_MULTINODE_DEVICES), the node sending it killed with kill -9: the other finishes it, every device served, duplicates within one page"
    )
    func broadcastSurvivesKill() async throws {
        // One worker sends the whole target (no ranges): what a node's death does to it.
        let cluster = try await Cluster.start(pageSize: Self.pageSize, engine: ["range_size: 0"])
        let tokens = (0..<Self.devices).map { _ in Fixtures.apnsToken() }
        // A slow provider: the broadcast takes seconds, so the kill lands mid-way.
        for token in tokens { cluster.apns.script(token: token, .success(after: .milliseconds(50))) }
        try await cluster.importDevices(tokens)

        let first = try await cluster.node()
        let serverKey = try await first.process.line(startingWith: "server key: ")
        let second = try await cluster.node()
        let id = try await Self.broadcast(through: second, serverKey: serverKey)
        try await cluster.apns.waitForRequests(count: Self.devices / 4, timeout: .seconds(120))

        // The node whose worker holds the job (its owner name carries the process id) dies.
        let holder = try #require(try cluster.query("SELECT locked_by FROM jobs WHERE kind = 'notification'").first)
        let nodes = [first, second]
        let victim = try #require(
            nodes.firstIndex { holder.contains("-\($0.process.process.processIdentifier)-") }, "holder \(holder)")
        let survivor = nodes[1 - victim]
        kill(nodes[victim].process.process.processIdentifier, SIGKILL)
        _ = try await nodes[victim].process.exitStatus()
        #expect(cluster.apns.requests.count < Self.devices, "the kill came after the broadcast finished")

        let record = try await doneRecord(of: id, at: survivor.address, key: serverKey)
        let received = cluster.apns.requests.compactMap(\.token)
        let distinct = Set(received)
        #expect(Set(tokens).subtracting(distinct).isEmpty)
        let duplicates = received.count - distinct.count
        #expect(duplicates <= Self.pageSize, "\(duplicates) duplicates")
        survivor.process.process.terminate()
        #expect(try await survivor.process.exitStatus() == 0)
        try await cluster.finish()
    }

    /// 6,000 devices by default (30 ranges), so CI stays short; `HERALD_RANGED_DEVICES=100000` for the long run.
    static let rangedDevices = ProcessInfo.processInfo.environment["HERALD_RANGED_DEVICES"].flatMap(Int.init) ?? 6_000
    static let metricsToken = "metrics-token-0123456789"

    @Test(
        "Three nodes work one broadcast to 6,000 devices (HERALD_RANGED_DEVICES) in 30 ranges, each node a share; a node killed with kill -9 mid-way: the others finish its ranges, every device served, duplicates within one page per range it held (and per job a starved survivor lost)"
    )
    func rangedBroadcastAcrossNodes() async throws {
        let devices = Self.rangedDevices
        let cluster = try await Cluster.start(
            pageSize: Self.pageSize, lease: 10, extra: "metrics:\n  token: \(Self.metricsToken)",
            engine: ["range_size: \(max(Self.pageSize, devices / 30))"])
        let tokens = (0..<devices).map { _ in Fixtures.apnsToken() }
        // A slow provider: the broadcast takes seconds, so the kill lands mid-way.
        for token in tokens { cluster.apns.script(token: token, .success(after: .milliseconds(100))) }
        try await cluster.importDevices(tokens)

        let first = try await cluster.node()
        let serverKey = try await first.process.line(startingWith: "server key: ")
        let nodes = [first, try await cluster.node(), try await cluster.node()]
        let started = ContinuousClock.now
        let id = try await Self.broadcast(through: nodes[1], serverKey: serverKey)

        // Every node sends a share before one of them dies.
        var shares = [0, 0, 0]
        try await waitUntil(
            "every node sending a share", timeout: .seconds(120), every: .milliseconds(50),
            detail: { "shares before the kill: \(shares)" }
        ) {
            for (index, node) in nodes.enumerated() { shares[index] = try await Self.delivered(by: node) }
            return shares.allSatisfy { $0 > 0 } && cluster.apns.requests.count >= devices / 4
        }

        // A node holding ranges dies (a worker's owner name carries its process id).
        let rangeHolders = "SELECT locked_by FROM jobs WHERE kind = 'range' AND locked_by IS NOT NULL"
        let holders = try cluster.query(rangeHolders)
        let victim = try #require(
            nodes.indices.first { index in
                holders.contains { $0.contains("-\(nodes[index].process.process.processIdentifier)-") }
            }, "holders \(holders)")
        let victimOwner = "-\(nodes[victim].process.process.processIdentifier)-"
        shares[victim] = try await Self.delivered(by: nodes[victim])
        kill(nodes[victim].process.process.processIdentifier, SIGKILL)
        _ = try await nodes[victim].process.exitStatus()
        // The ranges it held when it died: their locks stay until their leases (10 s) run out. (Counted
        // before the kill, a loaded machine let it claim more ranges in between: more duplicates than
        // the count allowed.)
        let held = try cluster.query(rangeHolders).filter { $0.contains(victimOwner) }.count
        #expect(cluster.apns.requests.count < devices, "the kill came after the broadcast finished")
        let survivors = nodes.indices.filter { $0 != victim }

        let record = try await doneRecord(
            of: id, at: nodes[survivors[0]].address, key: serverKey, timeout: .seconds(600))
        let elapsed = ContinuousClock.now - started
        let counts = record["counts"] as? [String: Any]
        #expect(counts?["targeted"] as? Int == devices, "\(record)")
        #expect(counts?["sent"] as? Int == devices, "\(record)")
        let received = cluster.apns.requests.compactMap(\.token)
        let distinct = Set(received)
        #expect(Set(tokens).subtracting(distinct).isEmpty)
        let duplicates = received.count - distinct.count
        // A job whose lease ran out under a live worker (a starved machine) is taken over: more duplicates.
        let locksLost = survivors.map { nodes[$0].process.text.components(separatedBy: "job lock lost").count - 1 }
        // Why a live worker's lease ran out: a renewal that failed, or none in time (a stalled node).
        let renewalsFailed = survivors.map {
            nodes[$0].process.text.components(separatedBy: "lease not renewed").count - 1
        }
        // Each job taken over — a range the killed node held, or one a starved survivor's lease lost — may
        // send its page in flight again: at most a page each.
        #expect(
            duplicates <= (held + locksLost.reduce(0, +)) * Self.pageSize,
            """
            \(duplicates) duplicates, \(held) ranges held by the killed node, jobs lost by the survivors \(locksLost), \
            renewals failed \(renewalsFailed)
            """)
        for index in survivors { shares[index] = try await Self.delivered(by: nodes[index]) }
        let ranges = try cluster.query("SELECT count(*) FROM fanout_ranges WHERE cursor = 'done'").first ?? "?"
        // The figures the documentation quotes (printed, not asserted on).
        print(
            "ranged broadcast: \(devices) devices, \(ranges) ranges, \(elapsed), shares \(shares) (node \(victim) killed "
                + "holding \(held) ranges; its share as of the kill), \(received.count) requests, \(duplicates) duplicates, "
                + "jobs lost by the survivors' workers \(locksLost)"
        )
        for index in survivors {
            nodes[index].process.process.terminate()
            #expect(try await nodes[index].process.exitStatus() == 0)
        }
        try await cluster.finish()
    }

    /// Sends a broadcast to every device through a node and returns its id.
    static func broadcast(
        through node: (process: HeraldProcess, address: String), serverKey: String
    ) async throws
        -> String
    {
        let sent = try await request(
            "POST", "\(node.address)/v1/notifications", bearer: serverKey,
            json: #"{"target":{"all":true},"payload":{"title":"Broadcast"}}"#)
        #expect(sent.status == 202, "\(sent.body)")
        return try #require(
            (try JSONSerialization.jsonObject(with: Data(sent.body.utf8)) as? [String: Any])?["id"] as? String)
    }

    /// Pushes a node's APNs client delivered, from its `/metrics`.
    static func delivered(by node: (process: HeraldProcess, address: String)) async throws -> Int {
        try await delivered(by: node, counter: "herald_deliveries_total")
    }

    /// A node's `counter{…outcome="delivered"…}`, summed over its other labels, from its `/metrics`.
    static func delivered(by node: (process: HeraldProcess, address: String), counter: String) async throws -> Int {
        let metrics = try await request("GET", "\(node.address)/metrics", bearer: metricsToken).body
        return metrics.split(separator: "\n").filter {
            $0.hasPrefix("\(counter){") && $0.contains(#"outcome="delivered""#)
        }.reduce(0) { $0 + (Int(Double($1.split(separator: " ").last ?? "") ?? 0)) }
    }

    @Test("A device listening on node A (no workers) gets a push node B sends, and confirms it through node B")
    func channelAcrossNodes() async throws {
        let cluster = try await Cluster.start(
            extra: """
                    delivery_log: all
                """)
        // Node A sends nothing itself: the fan-out runs on node B, which must reach A's channel.
        let a = try await cluster.node(environment: ["HERALD_ENGINE_WORKERS": "0"])
        let serverKey = try await a.process.line(startingWith: "server key: ")
        let b = try await cluster.node()
        let listener = try HeraldProcess([
            "listen", "--server", a.address, "--key", serverKey, "--state", cluster.directory.file("listen.json"),
            "--count", "1",
        ])
        let installation = try await listener.line(startingWith: "listening: installation ")
        let sender = try HeraldProcess([
            "send", "--server", b.address, "--key", serverKey, "--installation-id", installation, "--title", "Across",
            "--body", "nodes", "--wait",
        ])
        #expect(try await sender.exitStatus() == 0, "\(sender.text)")
        #expect(try await listener.exitStatus() == 0, "\(listener.text)")
        #expect(listener.text.contains("Across — nodes"), "\(listener.text)")
        #expect(sender.text.contains(#""sent":1"#), "\(sender.text)")
        // The ledger (successes kept: delivery_log all) says the channel on node A confirmed it.
        let outcomes = try cluster.query("SELECT outcome, provider_id FROM deliveries")
        #expect(outcomes == ["delivered|direct:confirmed"], "\(outcomes)")
        for node in [a, b] {
            node.process.process.terminate()
            #expect(try await node.process.exitStatus() == 0)
        }
        try await cluster.finish()
    }

    @Test("The Home Assistant relay's daily maximum holds across two nodes")
    func relayLimitAcrossNodes() async throws {
        let cluster = try await Cluster.start(
            extra: """
                    home_assistant:
                      relay: true
                      max_per_day: 10
                """)
        let a = try await cluster.node()
        let serverKey = try await a.process.line(startingWith: "server key: ")
        let b = try await cluster.node()
        let token = Fixtures.apnsToken()
        let registered = try await request(
            "POST", "\(a.address)/v1/installations", bearer: serverKey,
            json: #"{"platform":"ios","token":"\#(token)"}"#)
        #expect(registered.status == 201, "\(registered.body)")
        func relay(_ node: (process: HeraldProcess, address: String), _ number: Int) async throws -> (Int, String) {
            let answer = try await request(
                "POST", "\(node.address)/ha/push",
                json:
                    #"{"message":"Message \#(number)","push_token":"\#(token)","registration_info":{"app_id":"io.robbie.HomeAssistant","app_version":"2024.3","os_version":"17.4","webhook_id":"w1"}}"#
            )
            return (answer.status, answer.body)
        }
        // The messages alternate between the nodes; the day's count is one, in the database.
        for number in 1...10 {
            let (status, body) = try await relay(number.isMultiple(of: 2) ? a : b, number)
            #expect(status == 201, "message \(number): \(body)")
        }
        for (node, number) in [(a, 11), (b, 12)] {
            let (status, body) = try await relay(node, number)
            #expect(status == 429, "message \(number): \(body)")
            #expect(body.contains("RateLimited"), "\(body)")
        }
        for node in [a, b] {
            node.process.process.terminate()
            #expect(try await node.process.exitStatus() == 0)
        }
        try await cluster.finish()
    }
}

extension MultiNodeTests {
    /// The webhook lease the test configures (`webhooks.lease_seconds`, 30 s at the least): the kill case waits it out.
    static let webhookLease = 30

    @Test(
        "Three nodes, one configured endpoint for every event: the node attempting the first event is killed with kill -9 mid-attempt and another delivers it once the lease ends; meanwhile a broadcast with dead tokens runs on the other two, each of its events sent once, every event its facts imply, all verified"
    )
    func webhooksAcrossNodes() async throws {
        let secret = "whsec_" + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        // The first request gets no answer for longer than the test lasts: the node attempting it is killed meanwhile.
        let receiver = try ConversationProcess(
            try TestPython.tools.command(
                TestPython.script("webhook-receiver.py"),
                ["--port", "0", "--secret", secret, "--answers", "timeout", "--timeout-sleep", "300"]))
        defer { Task { await receiver.finish(timeout: .seconds(5)) } }
        let port = try #require(try await receiver.next()["listening"] as? Int, "\(receiver.errors)")
        let cluster = try await Cluster.start(
            pageSize: 20, lease: 10,
            extra: """
                    webhooks: [backend]
                    webhook:
                      backend:
                        url: http://127.0.0.1:\(port)/hook
                        events: ['*']
                        secret: \(secret)
                webhooks:
                  allow_http: true
                  allow_networks: ["127.0.0.1/32"]
                  lease_seconds: \(Self.webhookLease)
                metrics:
                  token: \(Self.metricsToken)
                """,
            engine: ["range_size: 40", "workers: 1"])
        // 400 devices in 10 ranges, a tenth of them dead (410 Unregistered since after their registration). A slow
        // provider, one worker a node: the nodes commit pages one after another over seconds, each with its
        // events, so both deliverers find some.
        let tokens = (0..<400).map { _ in Fixtures.apnsToken() }
        let dead = Set(tokens.enumerated().filter { $0.offset.isMultiple(of: 10) }.map(\.element))
        var lines: [String] = []
        for (index, token) in tokens.enumerated() {
            let user = dead.contains(token) ? "dead-\(index)" : "live-\(index)"
            lines.append(#"{"platform":"ios","token":"\#(token)","user_id":"\#(user)"}"#)
            cluster.apns.script(
                token: token,
                dead.contains(token)
                    ? .error(
                        status: 410, reason: "Unregistered", timestamp: Date().addingTimeInterval(3600),
                        after: .milliseconds(300))
                    : .success(after: .milliseconds(300)))
        }

        let first = try await cluster.node()
        let serverKey = try await first.process.line(startingWith: "server key: ")
        var nodes = [first, try await cluster.node(), try await cluster.node()]
        defer {
            for node in nodes where node.process.process.isRunning {
                kill(node.process.process.processIdentifier, SIGKILL)
            }
        }
        var received: [[String: Any]] = []
        func next(_ what: String) async throws -> [String: Any] {
            do {
                let line = try await receiver.next(timeout: .seconds(Self.webhookLease * 3))
                received.append(line)
                return line
            } catch {
                let outbox =
                    (try? cluster.query(
                        "SELECT event_id, event_type, state, attempts, locked_by FROM webhook_deliveries ORDER BY id"))
                    ?? []
                throw TestFailure(
                    "waiting for \(what): \(error)\nreceived \(received.count): \(received.map { "\($0["id"] ?? "?") \($0["answer"] ?? "?")" })\noutbox:\n\(outbox.joined(separator: "\n"))"
                )
            }
        }

        // The kill case: a test event, whose first attempt hangs; the node making it dies mid-attempt.
        let queued = try await request(
            "POST", "\(nodes[1].address)/v1/webhooks/backend/test", bearer: serverKey)
        #expect(queued.status == 202, "\(queued.body)")
        let testEvent = try #require(
            (try JSONSerialization.jsonObject(with: Data(queued.body.utf8)) as? [String: Any])?["event_id"] as? String)
        let hanging = try await next("the test event's first attempt")
        #expect(hanging["id"] as? String == testEvent && hanging["answer"] as? String == "timeout", "\(hanging)")
        let leased =
            "SELECT state, attempts, locked_by, locked_until FROM webhook_deliveries WHERE event_id = '\(testEvent)'"
        let claim = try #require(try cluster.query(leased).first).split(separator: "|").map(String.init)
        let victim = try #require(
            nodes.firstIndex { claim[2].hasSuffix("-\($0.process.process.processIdentifier)-webhooks") }, "\(claim)")
        kill(nodes[victim].process.process.processIdentifier, SIGKILL)
        _ = try await nodes[victim].process.exitStatus()
        nodes.remove(at: victim)
        // Killed mid-attempt: nothing of the attempt recorded, the row still leased to the dead node.
        let afterKill = try #require(try cluster.query(leased).first).split(separator: "|").map(String.init)
        #expect(afterKill == claim, "the attempt was recorded before the kill: \(afterKill) against \(claim)")
        #expect(claim.prefix(2) == ["pending", "0"], "\(claim)")
        let leaseEnd = try #require(Double(claim[3]), "\(claim)")

        // Meanwhile (the lease runs), a broadcast on the other two nodes: each of its events is sent once.
        try await cluster.importDevices(lines: lines)
        let broadcastStart = ContinuousClock.now
        let notification = try await Self.broadcast(through: nodes[0], serverKey: serverKey)
        let record = try await doneRecord(
            of: notification, at: nodes[1].address, key: serverKey, timeout: .seconds(120))
        let broadcastTime = ContinuousClock.now - broadcastStart
        let counts = try #require(record["counts"] as? [String: Any], "\(record)")
        #expect(counts["targeted"] as? Int == tokens.count, "\(record)")
        #expect(counts["invalid"] as? Int == dead.count, "\(record)")
        #expect(counts["sent"] as? Int == tokens.count - dead.count, "\(record)")
        // Per dead token an installation.invalidated and a delivery.failed, then the notification.completed; then
        // the test event again, from another node once its lease has ended.
        let expected = 2 * dead.count + 1
        while received.count < 1 + expected + 1 {
            _ = try await next("\(1 + expected + 1) requests")
        }
        var pushShares: [Int] = []
        var webhookShares: [Int] = []
        for node in nodes {
            pushShares.append(try await Self.delivered(by: node))
            webhookShares.append(try await Self.delivered(by: node, counter: "herald_webhook_deliveries_total"))
        }
        // No node sends anything more: stopped, every request they made has been read.
        for node in nodes {
            node.process.process.terminate()
            #expect(try await node.process.exitStatus() == 0, "\(node.process.text)")
        }
        do {
            let late = try await receiver.next(timeout: .seconds(1))
            Issue.record("a request after the nodes stopped: \(late)")
        } catch is ConversationFailure {}

        // Every request verified by both libraries.
        for line in received {
            #expect(line["verified_standardwebhooks"] as? Bool == true, "\(line)")
            #expect(line["verified_svix"] as? Bool == true, "\(line)")
        }
        // Each event once, but the test event: its hanging attempt, then one more, after the lease.
        var attempts: [String: [[String: Any]]] = [:]
        for line in received { attempts[line["id"] as? String ?? "", default: []].append(line) }
        let repeated = attempts.filter { $0.value.count > 1 && $0.key != testEvent }
        #expect(repeated.isEmpty, "sent more than once: \(repeated.mapValues { $0.map { $0["answer"] ?? "?" } })")
        let retried = attempts[testEvent] ?? []
        #expect(retried.map { $0["answer"] as? String } == ["timeout", "204"], "\(retried)")
        if let again = retried.last, let signed = (again["timestamp"] as? String).flatMap(Double.init) {
            #expect(signed >= leaseEnd.rounded(.down), "sent again at \(signed), the lease ended at \(leaseEnd)")
        }

        // What the outbox holds: one row per event received, each delivered by one recorded attempt (the
        // killed attempt left none).
        let outbox = try cluster.query("SELECT event_id, state, attempts FROM webhook_deliveries ORDER BY id")
        #expect(Set(outbox.map { String($0.split(separator: "|")[0]) }) == Set(attempts.keys), "\(outbox)")
        #expect(outbox.allSatisfy { $0.hasSuffix("|delivered|1") }, "\(outbox)")
        #expect(outbox.count == attempts.count, "\(outbox)")
        for log in nodes.map(\.process.text) {
            #expect(!log.contains("lease was lost"), "\(log)")
        }

        // The events the database's facts imply, and nothing else.
        let bodies = received.filter { $0["id"] as? String != testEvent }.compactMap { $0["body"] as? [String: Any] }
        #expect(bodies.count == expected)
        func of(_ type: String) -> [[String: Any]] {
            bodies.filter { $0["type"] as? String == type }.compactMap { $0["data"] as? [String: Any] }
        }
        let invalid = try cluster.query("SELECT id, user_id FROM installations WHERE NOT valid").map {
            $0.split(separator: "|").map(String.init)
        }
        #expect(Set(invalid.map { $0[1] }) == Set(lines.indices.filter { $0.isMultiple(of: 10) }.map { "dead-\($0)" }))
        let hashes = try cluster.query(
            "SELECT encode(sha256(convert_to(t, 'UTF8')), 'hex') FROM unnest(ARRAY['\(dead.joined(separator: "','"))']) t"
        )
        let invalidated = of("installation.invalidated")
        #expect(invalidated.count == dead.count)
        #expect(Set(invalidated.compactMap { $0["installation_id"] as? String }) == Set(invalid.map { $0[0] }))
        #expect(Set(invalidated.compactMap { $0["user_id"] as? String }) == Set(invalid.map { $0[1] }))
        #expect(Set(invalidated.compactMap { $0["token_sha256"] as? String }) == Set(hashes))
        #expect(
            invalidated.allSatisfy {
                $0["notification_id"] as? String == notification && $0["reason"] as? String == "Unregistered"
            }, "\(invalidated)")
        let failed = of("delivery.failed")
        #expect(failed.count == dead.count)
        #expect(Set(failed.compactMap { $0["installation_id"] as? String }) == Set(invalid.map { $0[0] }))
        #expect(
            failed.allSatisfy { $0["outcome"] as? String == "invalid" && $0["will_retry"] as? Bool == false },
            "\(failed)")
        let completed = of("notification.completed")
        #expect(completed.count == 1)
        #expect(completed.first?["notification_id"] as? String == notification)
        #expect(completed.first?["status"] as? String == "done")
        let completedCounts = completed.first?["counts"] as? [String: Any] ?? [:]
        #expect(Set(completedCounts.keys) == Set(counts.keys), "\(completedCounts) against \(counts)")
        for (key, value) in counts {
            #expect(
                completedCounts[key] as? Int == value as? Int, "counts.\(key): \(completedCounts) against \(counts)")
        }
        // No token, whole, in any event.
        let sent = String(decoding: try JSONSerialization.data(withJSONObject: bodies), as: UTF8.self)
        #expect(tokens.allSatisfy { !sent.contains($0) })
        print(
            "webhooks across nodes: node \(victim) killed mid-attempt; deliveries by the other two \(webhookShares) "
                + "(the broadcast's \(expected) events, the test event again after its lease), pushes \(pushShares), "
                + "the broadcast in \(broadcastTime)")
        try await cluster.finish()
    }

    @Test(
        "Live Activity updates accepted by two nodes in turn, for an activity one of them started: the iPhone gets them in revision order, the last one last"
    )
    func liveActivityAcrossNodes() async throws {
        let cluster = try await Cluster.start()
        let first = try await cluster.node()
        let serverKey = try await first.process.line(startingWith: "server key: ")
        let second = try await cluster.node()
        let nodes = [first, second]
        func json(_ body: String) -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]) ?? [:]
        }
        let registered = try await request(
            "POST", "\(first.address)/v1/installations", bearer: serverKey,
            json: #"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
        let installation = try #require(json(registered.body)["id"] as? String, "\(registered)")
        let startToken = Fixtures.apnsToken()
        let stored = try await request(
            "PUT", "\(second.address)/v1/installations/\(installation)/live-activities/push-to-start/Score",
            bearer: serverKey, json: #"{"token":"\#(startToken)"}"#)
        #expect(stored.status == 200, "\(stored)")
        let started = try await request(
            "POST", "\(first.address)/v1/live-activities", bearer: serverKey,
            json: #"""
                {"target":{"installation_ids":["\#(installation)"]},"attributes_type":"Score",
                 "content_state":{"n":0},"alert":{"title":"Kick-off"}}
                """#)
        let activity = try #require(json(started.body)["id"] as? String, "\(started)")
        try await cluster.apns.waitForRequests(count: 1, timeout: .seconds(30))
        #expect(cluster.apns.requests.first?.token == startToken)

        // The activity reports its token through the other node; APNs answers slowly, so sends overlap.
        let activityToken = Fixtures.apnsToken()
        cluster.apns.script(token: activityToken, .success(after: .milliseconds(40)))
        let reported = try await request(
            "PUT", "\(second.address)/v1/installations/\(installation)/live-activities/\(activity)",
            bearer: serverKey, json: #"{"attributes_type":"Score","token":"\#(activityToken)"}"#)
        #expect(reported.status == 200, "\(reported)")
        let updates = 20
        var last = ""
        for n in 1...updates {
            let node = nodes[n % 2]
            let sent = try await request(
                "POST", "\(node.address)/v1/live-activities/\(activity)/updates", bearer: serverKey,
                json: #"{"event":"update","content_state":{"n":\#(n)}}"#)
            #expect(sent.status == 202, "\(sent)")
            #expect(json(sent.body)["revision"] as? Int == n + 1, "\(sent)")
            last = json(sent.body)["notification_id"] as? String ?? ""
        }
        _ = try await doneRecord(of: last, at: first.address, key: serverKey, timeout: .seconds(60))
        let received = cluster.apns.requests.filter { $0.token == activityToken }.compactMap { recorded in
            Self.integer(recorded.json?.objectValue?["aps"]?.objectValue?["content-state"]?.objectValue?["n"])
        }
        #expect(received.last == updates, "\(received)")
        #expect(received == received.sorted() && Set(received).count == received.count, "\(received)")
        for node in nodes {
            node.process.process.terminate()
            #expect(try await node.process.exitStatus() == 0, "\(node.process.text)")
        }
        print("live activity across nodes: \(received.count) of \(updates) updates sent, in order: \(received)")
        try await cluster.finish()
    }

    /// An integer JSON value's number.
    static func integer(_ value: JSONValue?) -> Int? {
        guard case .number(let number)? = value else { return nil }
        return number.integerValue.map(Int.init)
    }
}

extension MultiNodeTests {
    @Test(
        "An updatable notification to 200 devices changed through the other node while its first send is going, and again, first attempts failing for a fifth of the devices: no device is sent an older revision after a newer one, and each is sent the last"
    )
    func revisionsAcrossNodes() async throws {
        let cluster = try await Cluster.start(
            pageSize: 20, lease: 3, engine: ["range_size: 40", "retry:", "    base_ms: 200", "    cap_seconds: 1"])
        let tokens = (0..<200).map { _ in Fixtures.apnsToken() }
        for (index, token) in tokens.enumerated() {
            // A slow provider: the revisions overlap on the wire; a fifth fail first and are retried.
            if index.isMultiple(of: 5) {
                cluster.apns.script(
                    token: token, .error(status: 500, reason: "InternalServerError", after: .milliseconds(30)), times: 1
                )
            }
            cluster.apns.script(token: token, .success(after: .milliseconds(30)))
        }
        try await cluster.importDevices(tokens)
        let first = try await cluster.node()
        let serverKey = try await first.process.line(startingWith: "server key: ")
        let nodes = [first, try await cluster.node()]
        defer {
            for node in nodes where node.process.process.isRunning {
                kill(node.process.process.processIdentifier, SIGKILL)
            }
        }
        let sent = try await request(
            "POST", "\(nodes[0].address)/v1/notifications", bearer: serverKey,
            json: #"{"target":{"all":true},"updatable":true,"payload":{"body":"revision 1"}}"#)
        #expect(sent.status == 202, "\(sent.body)")
        let id = try #require(
            (try JSONSerialization.jsonObject(with: Data(sent.body.utf8)) as? [String: Any])?["id"] as? String)
        try await waitUntil("the first send under way", timeout: .seconds(60), every: .milliseconds(10)) {
            cluster.apns.requests.count >= 10
        }
        var revisions = [id]
        for (number, node) in [(2, nodes[1]), (3, nodes[0])] {
            let changed = try await request(
                "PATCH", "\(node.address)/v1/notifications/\(id)", bearer: serverKey,
                json: #"{"payload":{"body":"revision \#(number)"}}"#)
            #expect(changed.status == 202, "\(changed.body)")
            let record = try JSONSerialization.jsonObject(with: Data(changed.body.utf8)) as? [String: Any]
            #expect((record?["revision"] as? [String: Any])?["number"] as? Int == number, "\(changed.body)")
            revisions.append(try #require(record?["id"] as? String))
            try await Task.sleep(for: .milliseconds(150))
        }
        for revision in revisions {
            _ = try await doneRecord(of: revision, at: nodes[1].address, key: serverKey, timeout: .seconds(300))
        }
        // In the order the mock received them: per device, revision numbers never go down.
        var sentTo: [String: [Int]] = [:]
        var delivered: [String: Int] = [:]
        for request in cluster.apns.requests {
            guard let token = request.token,
                case .string(let body)? = request.json?.objectValue?["aps"]?.objectValue?["alert"]?.objectValue?["body"],
                let number = Int(body.dropFirst("revision ".count))
            else { continue }
            sentTo[token, default: []].append(number)
            if request.status == 200 { delivered[token] = number }
        }
        var patterns: [[Int]: Int] = [:]
        for token in tokens {
            let numbers = sentTo[token] ?? []
            patterns[numbers, default: 0] += 1
            #expect(numbers == numbers.sorted(), "\(token.suffix(8)): \(numbers)")
            #expect(delivered[token] == 3, "\(token.suffix(8)): \(numbers)")
        }
        // What each device was sent, in order, and how many devices were sent that (printed, not asserted on).
        print("revisions across nodes: \(patterns.sorted { $0.value > $1.value })")
        for node in nodes {
            node.process.process.terminate()
            #expect(try await node.process.exitStatus() == 0)
        }
        try await cluster.finish()
    }
}

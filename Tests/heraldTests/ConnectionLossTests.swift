import Foundation
import HeraldProviderMocks
import HeraldTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// PostgreSQL ending Herald's sessions under load (what a fail-over or a connection proxy's restart does):
/// every backend of the database terminated again and again, or the whole server restarted again and again,
/// while registrations, sends and a broadcast run against a `herald serve` process.
@Suite("PostgreSQL ends Herald's connections mid-traffic", .serialized)
struct ConnectionLossTests {
    /// How long the backends are terminated, or PostgreSQL restarted, again and again: 6 s in CI,
    /// `HERALD_CONNECTION_LOSS_SECONDS` for a longer run.
    static let seconds = ProcessInfo.processInfo.environment["HERALD_CONNECTION_LOSS_SECONDS"].flatMap(Int.init) ?? 6
    /// The node's deadline for one store call (`postgres.call_timeout_ms`).
    static let callTimeoutMilliseconds = 2000
    /// A request with no answer this long is taken as hung: several store calls, each bounded by the
    /// deadline, fit in it many times over.
    static let hung: TimeInterval = 30

    @Test(
        "Every backend terminated every 200 ms during sends, registrations and a broadcast: every request is answered (201, 202 or 503), nothing accepted is lost, the node recovers without a restart"
    )
    func terminateBackends() async throws {
        let cluster = try await Cluster.start(pageSize: 50)
        try await Self.survive(on: cluster, disruption: "backends terminated") { _ in
            let rows = try cluster.query(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    + "WHERE datname = current_database() AND pid <> pg_backend_pid()")
            try await Task.sleep(for: .milliseconds(200))
            return rows.first.flatMap { Int($0) } ?? 0
        }
    }

    @Test(
        "PostgreSQL restarted again and again (fast and immediate shutdowns) during sends, registrations and a broadcast: every request is answered (201, 202 or 503), nothing accepted is lost, the node recovers without a restart"
    )
    func restartPostgres() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let server = environment["HERALD_TEST_POSTGRES_RESTARTABLE"], !server.isEmpty,
            let restart = environment["HERALD_TEST_POSTGRES_RESTART"], !restart.isEmpty
        else {
            throw PostgresTestDatabaseError(
                "HERALD_TEST_POSTGRES_RESTARTABLE and HERALD_TEST_POSTGRES_RESTART are unset: scripts/test sets them "
                    + "(HERALD_PG_PROFILE=restart scripts/postgres starts the cluster; its restart command is "
                    + "`env HERALD_PG_PROFILE=restart scripts/postgres restart`)")
        }
        let cluster = try await Cluster.start(pageSize: 50, server: server)
        try await Self.survive(on: cluster, disruption: "restarts of PostgreSQL") { round in
            // A clean shutdown (sessions ended, a checkpoint), then a crash and its recovery, in turn.
            let mode = round % 2 == 0 ? "fast" : "immediate"
            let (status, _, errors) = try await ScriptProcess.run(["sh", "-c", "\(restart) \(mode)"])
            #expect(status == 0, "\(restart) \(mode): \(errors)")
            try await Task.sleep(for: .seconds(1))
            return 1
        }
    }

    /// Sends, registrations and a broadcast through one node while `disrupt` runs again and again for ``seconds``
    /// (given its round, 0, 1, 2…, and returning how many disruptions it made); then every request must have been answered with
    /// 201, 202 or 503, the node must be ready again without a restart, and everything accepted delivered.
    static func survive(
        on cluster: Cluster, disruption: String, _ disrupt: @escaping @Sendable (_ round: Int) async throws -> Int
    ) async throws {
        let audience = (0..<300).map { _ in Fixtures.apnsToken() }
        // A slow provider: the broadcast's pages span the disruptions.
        for token in audience { cluster.apns.script(token: token, .success(after: .milliseconds(20))) }
        try await cluster.importDevices(audience)
        // At debug, a node that does not stop shows which service it waits for (ServiceLifecycle's lines).
        let node = try await cluster.node(environment: [
            "HERALD_POSTGRES_CALL_TIMEOUT_MS": "\(Self.callTimeoutMilliseconds)", "HERALD_LOG_LEVEL": "debug",
        ])
        let serverKey = try await node.process.line(startingWith: "server key: ")
        let broadcast = try await Self.call(
            "POST", "\(node.address)/v1/notifications", serverKey,
            #"{"target":{"all":true},"payload":{"title":"Broadcast"}}"#)
        #expect(broadcast.status == 202, "\(broadcast.body)")
        let broadcastID = try #require(Self.id(broadcast.body))

        let end = ContinuousClock.now + .seconds(Self.seconds)
        let disruptor = Task {
            var disruptions = 0
            var round = 0
            while ContinuousClock.now < end {
                disruptions += try await disrupt(round)
                round += 1
            }
            return disruptions
        }
        // One device registered and sent to after another, as an app backend would.
        var accepted: [(id: String, token: String)] = []
        var statuses: [Int: Int] = [:]
        var refusals: [String] = []
        while ContinuousClock.now < end {
            let token = Fixtures.apnsToken()
            let registered = try await Self.call(
                "POST", "\(node.address)/v1/installations", serverKey, #"{"platform":"ios","token":"\#(token)"}"#)
            statuses[registered.status, default: 0] += 1
            guard registered.status == 201, let installation = Self.id(registered.body) else {
                if registered.status != 503 { refusals.append(registered.body) }
                continue
            }
            let sent = try await Self.call(
                "POST", "\(node.address)/v1/notifications", serverKey,
                #"{"target":{"installation_ids":["\#(installation)"]},"payload":{"title":"Hello"}}"#)
            statuses[sent.status, default: 0] += 1
            if sent.status == 202, let id = Self.id(sent.body) {
                accepted.append((id, token))
            } else if sent.status != 503 {
                refusals.append(sent.body)
            }
        }
        let disruptions = try await disruptor.value
        print("connection-loss: \(disruptions) \(disruption) in \(Self.seconds) s; answers \(statuses)")
        #expect(disruptions > 0)
        #expect(Set(statuses.keys).isSubset(of: [201, 202, 503]), "\(statuses): \(refusals.prefix(3))")
        #expect(!accepted.isEmpty)

        // Recovered without a restart: ready, and everything accepted is delivered.
        var ready = 0
        for _ in 0..<100 where ready != 200 {
            ready = try await Self.call("GET", "\(node.address)/readyz", nil, nil).status
            if ready != 200 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(ready == 200)
        for id in [broadcastID] + accepted.map(\.id) {
            do {
                #expect(try await Self.finished(id, node.address, serverKey) == "done", "notification \(id)")
            } catch {
                print(Self.diagnosis(of: id, on: cluster, log: node.process.text))
                throw error
            }
        }
        let received = Set(cluster.apns.requests.compactMap(\.token))
        #expect(Set(audience).subtracting(received).isEmpty, "broadcast devices not reached")
        #expect(Set(accepted.map(\.token)).subtracting(received).isEmpty, "accepted sends not delivered")
        node.process.process.terminate()
        #expect(try await node.process.exitStatus() == 0)
        try await cluster.finish()
    }

    /// What the store and the node's log say about a notification that did not finish: its row, its jobs (who holds
    /// them, until when), what is pending, and the node's lines that name it, with the log's last lines.
    static func diagnosis(of id: String, on cluster: Cluster, log: String) -> String {
        let rows = { (sql: String) in (try? cluster.query(sql).joined(separator: "\n")) ?? "(query failed)" }
        let lines = log.split(separator: "\n")
        return """
            connection-loss: notification \(id) did not finish
            store now: \(rows("SELECT extract(epoch from now())"))
            notification: \(rows("SELECT status, targeted, sent, failed FROM notifications WHERE id = '\(id)'"))
            jobs (kind|reference|run_at|attempts|locked_by|locked_until|last_error):
            \(rows("SELECT kind, reference, run_at, attempts, locked_by, locked_until, last_error FROM jobs WHERE reference LIKE '%\(id)%'"))
            pending: \(rows("SELECT count(*) FROM pending_deliveries WHERE notification_id = '\(id)'"))
            node lines naming it:
            \(lines.filter { $0.contains(id) }.suffix(100).joined(separator: "\n"))
            node's last lines:
            \(lines.suffix(200).joined(separator: "\n"))
            """
    }

    /// A request that fails the test if it is not answered within ``hung`` seconds.
    static func call(
        _ method: String, _ url: String, _ bearer: String?, _ json: String?
    ) async throws -> (status: Int, body: String) {
        var request = URLRequest(url: URL(string: url)!, timeoutInterval: hung)
        request.httpMethod = method
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(json.utf8)
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    static func id(_ body: String) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["id"] as? String
    }

    /// The notification's status once it is final (waiting at most 120 s for it).
    static func finished(_ id: String, _ address: String, _ key: String) async throws -> String? {
        var status: String?
        try await waitUntil(
            "notification \(id) final", timeout: .seconds(120), every: .milliseconds(200),
            detail: { "status \(status ?? "none")" }
        ) {
            let answer = try await call("GET", "\(address)/v1/notifications/\(id)", key, nil)
            status =
                (try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])?["status"]
                as? String
            return status.map { ["done", "canceled", "expired", "failed"].contains($0) } ?? false
        }
        return status
    }
}

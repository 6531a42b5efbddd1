import Foundation
import HeraldCore
import HeraldProviderMocks
import HeraldTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The value of one sample in a Prometheus exposition: the line `name{labels} value` whose labels
/// include every pair given (nil when there is none).
func sample(_ exposition: String, _ name: String, _ labels: [String: String] = [:]) -> Double? {
    for line in exposition.split(separator: "\n") where !line.hasPrefix("#") {
        guard line.hasPrefix(name + "{") || line.hasPrefix(name + " ") else { continue }
        let parts = line.split(separator: " ")
        guard let value = parts.last.flatMap({ Double($0) }) else { continue }
        if labels.allSatisfy({ line.contains("\($0.key)=\"\($0.value)\"") }) { return value }
    }
    return nil
}

/// One Herald process with an app `demo` whose APNs is a mock, configured by a file the test may
/// rewrite (hot reload).
private struct ObservedServer {
    static let serverKey = "hsk_observability-server-key-0123456789"
    static let clientKey = "hck_observability-client-key-0123456789"
    static let metricsToken = "metrics-token-0123456789"

    let directory: TemporaryDirectory
    let ca: TestCertificateAuthority
    let apns: MockAPNsServer
    let config: String
    let certificate: TestAPNsCertificate

    static func make() async throws -> Self {
        let directory = try TemporaryDirectory()
        let ca = try TestCertificateAuthority()
        let certificate = try ca.apnsCertificate(bundleID: "com.example.observed")
        let apns = try await MockAPNsServer.start(ca: ca, credentials: [])
        let server = Self(
            directory: directory, ca: ca, apns: apns, config: directory.file("herald.yaml"),
            certificate: certificate)
        try certificate.certificatePEM.write(toFile: directory.file("apns.pem"), atomically: false, encoding: .utf8)
        try certificate.privateKeyPEM.write(toFile: directory.file("apns-key.pem"), atomically: false, encoding: .utf8)
        try ca.rootPEM.write(toFile: directory.file("ca.pem"), atomically: false, encoding: .utf8)
        try server.writeConfig(serverKey: serverKey)
        return server
    }

    func writeConfig(serverKey: String, extra: String = "", level: String = "debug") throws {
        try """
        database: \(directory.file("herald.sqlite"))
        log:
          format: json
          level: \(level)
        metrics:
          token: \(Self.metricsToken)
        apps: [demo]
        app:
          demo:
            server_key: \(serverKey)
            client_key: \(Self.clientKey)
            apns:
              certificate_file: \(directory.file("apns.pem"))
              certificate_key_file: \(directory.file("apns-key.pem"))
              topic: com.example.observed
              url: https://127.0.0.1:\(apns.port)
              ca_file: \(directory.file("ca.pem"))
        \(extra)
        engine:
          poll_interval_ms: 100
        """.write(toFile: config, atomically: false, encoding: .utf8)
    }

    func start() async throws -> (process: HeraldProcess, address: String) {
        let process = try HeraldProcess(["serve", "--config", config, "--port", "0"])
        return (process, try await process.line(startingWith: "Herald is listening on "))
    }

    func finish() async throws {
        try await apns.shutdown()
        directory.remove()
    }
}

@Suite("Metrics, logs and reload of a running herald", .serialized)
struct ObservabilityTests {
    /// A string member of a JSON object answer.
    static func member(_ name: String, of body: String) -> String? {
        guard case .string(let value) = try? JSONValue.parse(Array(body.utf8)).objectValue?[name] else { return nil }
        return value
    }

    @Test("/metrics after real traffic counts what happened; JSON logs carry the request id into the job")
    func metricsAndLogs() async throws {
        let server = try await ObservedServer.make()
        let (herald, address) = try await server.start()
        // A webhook endpoint whose name does not resolve: its events wait, failing (docs/webhooks.md).
        let hook = try await call(
            "POST", "\(address)/v1/webhooks", bearer: ObservedServer.serverKey,
            json: #"{"id":"ops","url":"https://hooks.invalid/x","events":["notification.completed"]}"#)
        #expect(hook.status == 201)
        let tokens = (0..<3).map { _ in Fixtures.apnsToken() }
        var installations: [String] = []
        for token in tokens {
            let created = try await call(
                "POST", "\(address)/v1/installations", bearer: ObservedServer.clientKey,
                json: #"{"platform":"ios","token":"\#(token)","channels":["news"]}"#)
            #expect(created.status == 201)
            #expect(created.headers["x-request-id"].map { $0.count == 32 } == true, "a generated request id")
            installations.append(try #require(Self.member("id", of: created.body)))
        }
        let sent = try await call(
            "POST", "\(address)/v1/notifications", bearer: ObservedServer.serverKey,
            json: #"{"target":{"channels":["news"]},"payload":{"title":"Hi","body":"There"}}"#,
            headers: ["X-Request-Id": "trace-0123.send"])
        #expect(sent.status == 202)
        #expect(sent.headers["x-request-id"] == "trace-0123.send")
        try await server.apns.waitForRequests(count: 3, timeout: .seconds(30))
        _ = try await herald.line(startingWith: #"{"#, timeout: .seconds(5))
        // A dialect's notification is counted under its name: a UnifiedPush message.
        let endpoint = try await call(
            "POST", "\(address)/v1/installations/\(installations[0])/push-endpoints", bearer: ObservedServer.serverKey)
        let path = try #require(Self.member("endpoint", of: endpoint.body).flatMap { URL(string: $0)?.path })
        #expect(try await call("POST", address + path, json: "opaque", headers: ["TTL": "60"]).status == 201)
        try await server.apns.waitForRequests(count: 4, timeout: .seconds(30))
        // Wait for both jobs to close the books.
        try await waitUntil("both jobs done") { herald.text.components(separatedBy: "notification done").count >= 3 }
        let refused = try await call("GET", "\(address)/metrics")
        #expect(refused.status == 401)
        let wrong = try await call("GET", "\(address)/metrics", bearer: "not-the-metrics-token")
        #expect(wrong.status == 401)
        // Both completions written to the outbox and attempted once each (the deliverer polls every second).
        try await waitUntil("the webhook events attempted", timeout: .seconds(20)) {
            let metrics = try await call("GET", "\(address)/metrics", bearer: ObservedServer.metricsToken).body
            return sample(metrics, "herald_webhook_deliveries_total", ["outcome": "retrying"]) == 2
        }
        let scraped = try await call("GET", "\(address)/metrics", bearer: ObservedServer.metricsToken)
        #expect(scraped.status == 200)
        #expect(scraped.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        let metrics = scraped.body
        #expect(sample(metrics, "herald_notifications_accepted_total", ["app": "demo", "dialect": "native"]) == 1)
        #expect(sample(metrics, "herald_notifications_accepted_total", ["app": "demo", "dialect": "unifiedpush"]) == 1)
        #expect(sample(metrics, "herald_notifications_finished_total", ["app": "demo", "status": "done"]) == 2)
        #expect(
            sample(
                metrics, "herald_deliveries_total",
                ["app": "demo", "service": "apns", "outcome": "delivered"]) == 4)
        #expect(sample(metrics, "herald_provider_request_duration_seconds_count", ["service": "apns"]) == 4)
        #expect(sample(metrics, "herald_webhook_backlog", ["app": "demo", "webhook": "ops", "scope": "cluster"]) == 2)
        #expect(sample(metrics, "herald_webhook_delivery_duration_seconds_count") == 2)
        #expect(
            sample(
                metrics, "herald_http_requests_total",
                ["route": "/v1/installations", "method": "POST", "status": "201"]) == 3)
        #expect(
            sample(
                metrics, "herald_http_requests_total",
                ["route": "/v1/notifications", "method": "POST", "status": "202"]) == 1)
        #expect(
            sample(metrics, "herald_http_request_duration_seconds_count", ["route": "/v1/installations"]) == 3)
        #expect(sample(metrics, "herald_queue_jobs", ["state": "due", "scope": "cluster"]) == 0)
        #expect(sample(metrics, "herald_queue_oldest_due_age_seconds", ["scope": "cluster"]) == 0)
        // This node's own work: nothing in hand once the notification is done.
        #expect(sample(metrics, "herald_node_jobs", ["state": "running"]) == 0)
        #expect(sample(metrics, "herald_node_jobs", ["state": "waiting"]) == 0)
        #expect((sample(metrics, "herald_pool_connections", ["app": "demo", "service": "apns"]) ?? 0) >= 1)
        #expect(sample(metrics, "herald_pool_streams_in_use", ["app": "demo", "service": "apns"]) == 0)
        #expect(sample(metrics, "herald_channel_connections") == 0)
        #expect(sample(metrics, "herald_database_up") == 1)
        // The test certificate is valid for a day: exported, and warned about.
        let expiry = try #require(
            sample(metrics, "herald_credential_expiry_timestamp_seconds", ["app": "demo", "provider": "apns"]))
        #expect(abs(expiry - Date().addingTimeInterval(86_400).timeIntervalSince1970) < 7200)

        herald.process.terminate()
        #expect(try await herald.exitStatus() == 0)
        // Every line is one JSON object with a time, level, logger and message.
        let lines = herald.text.split(separator: "\n").filter { $0.hasPrefix("{") }
        #expect(lines.count > 5)
        var objects: [[String: JSONValue]] = []
        for line in lines {
            guard case .object(let object) = try JSONValue.parse(Array(line.utf8)) else {
                Issue.record("not a JSON object: \(line)")
                continue
            }
            #expect(object["ts"] != nil && object["level"] != nil && object["msg"] != nil && object["logger"] != nil)
            objects.append(object)
        }
        // The request lines carry their request id; the send's id is on the lines its job logs.
        let requests = objects.filter { $0["msg"] == .string("request") }
        #expect(requests.count >= 5)
        #expect(requests.allSatisfy { $0["request_id"] != nil })
        for message in ["notification accepted", "notification done"] {
            let line = objects.first { $0["msg"] == .string(message) }
            #expect(line?["request_id"] == .string("trace-0123.send"), "\(message)")
        }
        #expect(
            objects.contains {
                $0["msg"] == .string("APNs certificate expires soon: replace it and reload (SIGHUP)")
                    && $0["level"] == .string("warning")
            })
        // No secret in any line.
        for secret in tokens + [ObservedServer.serverKey, ObservedServer.clientKey, ObservedServer.metricsToken] {
            #expect(!herald.text.contains(secret))
        }
        try await server.finish()
    }

    @Test(
        "At info a one-device send logs one line, its request's: what the notification does on its way (accepted, sent, done) is at debug"
    )
    func infoLogsOneLinePerRequest() async throws {
        let server = try await ObservedServer.make()
        try server.writeConfig(serverKey: ObservedServer.serverKey, level: "info")
        let (herald, address) = try await server.start()
        let created = try await call(
            "POST", "\(address)/v1/installations", bearer: ObservedServer.clientKey,
            json: #"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
        let installation = try #require(Self.member("id", of: created.body))
        let sent = try await call(
            "POST", "\(address)/v1/notifications", bearer: ObservedServer.serverKey,
            json: #"{"target":{"installation_ids":["\#(installation)"]},"payload":{"title":"Hi"}}"#,
            headers: ["X-Request-Id": "trace-info.send"])
        #expect(sent.status == 202)
        let notification = try #require(Self.member("id", of: sent.body))
        try await waitUntil("the notification done") {
            let read = try await call(
                "GET", "\(address)/v1/notifications/\(notification)", bearer: ObservedServer.serverKey)
            return Self.member("status", of: read.body) == "done"
        }
        #expect(server.apns.requests.count == 1)
        herald.process.terminate()
        #expect(try await herald.exitStatus() == 0)
        let lines = herald.text.split(separator: "\n").filter { $0.contains("trace-info.send") }
        #expect(lines.count == 1, "\(lines)")
        let line = try lines.first.map { try JSONValue.parse(Array($0.utf8)).objectValue }
        #expect(line??["msg"] == .string("request"), "\(lines)")
        try await server.finish()
    }

    @Test("SIGHUP and a changed file reload app keys without a restart; a bad file changes nothing")
    func hotReload() async throws {
        let server = try await ObservedServer.make()
        let (herald, address) = try await server.start()
        let token = Fixtures.apnsToken()
        let created = try await call(
            "POST", "\(address)/v1/installations", bearer: ObservedServer.clientKey,
            json: #"{"platform":"ios","token":"\#(token)"}"#)
        #expect(created.status == 201)
        #expect(try await call("GET", "\(address)/v1/installations", bearer: ObservedServer.serverKey).status == 200)

        // A new server key, taken on SIGHUP.
        let rotated = "hsk_rotated-server-key-0123456789abcdef"
        try server.writeConfig(serverKey: rotated)
        kill(herald.process.processIdentifier, SIGHUP)
        try await waitUntil("the rotated key accepted") {
            try await call("GET", "\(address)/v1/installations", bearer: rotated).status == 200
        }
        #expect(try await call("GET", "\(address)/v1/installations", bearer: ObservedServer.serverKey).status == 401)
        // The new clients deliver.
        let sent = try await call(
            "POST", "\(address)/v1/notifications", bearer: rotated,
            json: #"{"target":{"tokens":[{"service":"apns","token":"\#(token)"}]},"payload":{"title":"After reload"}}"#)
        #expect(sent.status == 202)
        try await server.apns.waitForRequests(count: 1, timeout: .seconds(30))

        // A broken file is refused: the running configuration stays.
        try "app: [unterminated".write(toFile: server.config, atomically: false, encoding: .utf8)
        kill(herald.process.processIdentifier, SIGHUP)
        try await waitUntil("the bad file logged") { herald.text.contains("configuration not reloaded") }
        #expect(try await call("GET", "\(address)/v1/installations", bearer: rotated).status == 200)

        // Without a signal: the file watcher sees the change.
        let third = "hsk_third-server-key-0123456789abcdefgh"
        try server.writeConfig(serverKey: third, extra: "http:\n  max_body_bytes: 2048")
        try await waitUntil("the third key accepted") {
            try await call("GET", "\(address)/v1/installations", bearer: third).status == 200
        }
        #expect(try await call("GET", "\(address)/v1/installations", bearer: rotated).status == 401)
        // The new key may be in force a moment before the reload's notice is written.
        try await waitUntil("the restart notice logged") { herald.text.contains("some changes need a restart") }
        #expect(herald.text.contains("http.max_body_bytes"))

        herald.process.terminate()
        #expect(try await herald.exitStatus() == 0)
        for secret in [token, rotated, third, ObservedServer.serverKey] { #expect(!herald.text.contains(secret)) }
        try await server.finish()
    }
}

import Crypto
import Foundation
import HTTPTypes
import HeraldAPNs
import HeraldCore
import HeraldProviderMocks
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import HeraldWebhooks
import Logging
import Testing

/// Webhooks through the real API, the engine, the outbox and a real receiver that verifies every
/// signature with the `standardwebhooks` and `svix` libraries (`scripts/webhook-receiver.py`).
@Suite("Webhooks")
struct WebhookTests {
    /// Loopback receivers are refused unless listed: the tests list theirs, as an operator would.
    static let policy = WebhookNetworkPolicy(allowHTTP: true, allowNetworks: [try! IPNetwork("127.0.0.1/32")])

    /// The receiver, started with the endpoint's secret; its first line is its port.
    static func receiver(secrets: [String], answers: [String] = []) async throws -> (ConversationProcess, Int) {
        // Every body is also checked against the `webhooks` of the committed /openapi.yaml.
        let openAPI = TestPython.repository.appendingPathComponent("docs/openapi.yaml").path
        var arguments = try TestPython.tools.command(
            TestPython.script("webhook-receiver.py"), ["--port", "0", "--openapi", openAPI])
        for secret in secrets { arguments += ["--secret", secret] }
        if !answers.isEmpty { arguments += ["--answers", answers.joined(separator: ",")] }
        let process = try ConversationProcess(arguments)
        guard let port = try await process.next()["listening"] as? Int else {
            throw TestFailure("the receiver did not say its port: \(process.errors)")
        }
        return (process, port)
    }

    /// Creates an endpoint for every event type, then points it at a receiver started with its secret.
    static func endpoint(_ api: API, answers: [String] = []) async throws -> (id: String, receiver: ConversationProcess)
    {
        let created = try await api.call(
            .post, "/v1/webhooks", body: #"{"url":"http://127.0.0.1:9/unused","events":["*"],"description":"backend"}"#)
        #expect(created.status == .created)
        guard let id = created.string("id"), let secret = created.string("secret") else {
            throw TestFailure("creating an endpoint answered \(created.status): \(String(describing: created.json))")
        }
        #expect(secret.hasPrefix("whsec_"))
        let (receiver, port) = try await receiver(secrets: [secret], answers: answers)
        let patched = try await api.call(
            .patch, "/v1/webhooks/\(id)", body: #"{"url":"http://127.0.0.1:\#(port)/hook"}"#)
        #expect(patched.status == .ok)
        #expect(patched["secret"] == nil, "the secret is shown once")
        return (id, receiver)
    }

    /// Runs `body` with a deliverer on the harness's store and clock, then shuts its sender down.
    static func withDeliverer(_ harness: EngineHarness, _ body: (WebhookDeliverer) async throws -> Void) async throws {
        guard let store = harness.server.store as? any WebhookStore else {
            throw TestFailure("the store keeps no webhooks")
        }
        let clock = harness.server.clock
        let sender = WebhookSender(policy: policy)
        do {
            try await body(WebhookDeliverer(store: store, sender: sender, now: { clock.date }))
        } catch {
            await sender.shutdown()
            throw error
        }
        await sender.shutdown()
    }

    @Test(
        "A broadcast with dead tokens: one installation.invalidated per dead token, one notification.completed with the API's counts, every request verified"
    )
    func broadcastWithDeadTokens() async throws {
        let harness = try await EngineHarness(webhooks: Self.policy)
        try await harness.run { api in
            let tokens = (0..<6).map { _ in Fixtures.apnsToken() }
            var ids: [String: String] = [:]
            for token in tokens {
                ids[token] = try await api.register(
                    #"{"platform":"ios","token":"\#(token)","user_id":"u-\#(token.prefix(6))"}"#)
            }
            let dead = Array(tokens.prefix(2))
            for token in dead {
                harness.apns.script(
                    token: token, .unregistered(since: harness.server.clock.date.addingTimeInterval(60)))
            }
            let (endpointID, receiver) = try await Self.endpoint(api)
            defer { Task { await receiver.finish() } }

            let notification = try await api.send(#"{"target":{"all":true},"payload":{"title":"Broadcast"}}"#)
            try await harness.drain()
            let record = try await api.notification(notification)
            #expect(record.string("status") == "done")
            #expect(record.int("counts.invalid") == 2)

            var attempted = 0
            try await Self.withDeliverer(harness) { deliverer in
                while case let count = try await deliverer.deliverDue(), count > 0 { attempted += count }
            }
            #expect(attempted == 5, "two invalidations, their two failed deliveries and the completion")
            var events: [[String: Any]] = []
            for _ in 0..<attempted { events.append(try await receiver.next(timeout: .seconds(20))) }
            for event in events {
                #expect(event["verified_standardwebhooks"] as? Bool == true, "\(event)")
                #expect(event["verified_svix"] as? Bool == true, "\(event)")
                #expect(event["schema_valid"] as? Bool == true, "\(event["schema_error"] ?? "")")
            }
            let bodies = events.compactMap { $0["body"] as? [String: Any] }
            func of(_ type: String) -> [[String: Any]] {
                bodies.filter { $0["type"] as? String == type }.compactMap { $0["data"] as? [String: Any] }
            }
            let invalidated = of("installation.invalidated")
            let hashes = Set(dead.map { SHA256.hash(data: Array($0.utf8)).map { String(format: "%02x", $0) }.joined() })
            #expect(Set(invalidated.compactMap { $0["token_sha256"] as? String }) == hashes)
            #expect(
                Set(invalidated.compactMap { $0["installation_id"] as? String }) == Set(dead.compactMap { ids[$0] }))
            #expect(invalidated.allSatisfy { ($0["user_id"] as? String)?.hasPrefix("u-") == true })
            #expect(of("delivery.failed").count == 2)
            #expect(
                of("delivery.failed").allSatisfy {
                    $0["will_retry"] as? Bool == false && $0["outcome"] as? String == "invalid"
                })
            let completed = of("notification.completed")
            #expect(completed.count == 1)
            #expect(completed.first?["notification_id"] as? String == notification)
            let counts = completed.first?["counts"] as? [String: Any]
            for key in [
                "targeted", "sent", "failed", "invalid", "skipped_preferences", "skipped_expired", "rate_limited",
            ] {
                #expect(counts?[key] as? Int == record.int("counts.\(key)"), "\(key)")
            }
            // No token, whole, anywhere in what was sent.
            let sent = String(decoding: try JSONSerialization.data(withJSONObject: bodies), as: UTF8.self)
            #expect(!tokens.contains { sent.contains($0) })
            // The endpoint's health and history.
            let endpoint = try await api.call(.get, "/v1/webhooks/\(endpointID)")
            #expect(endpoint.int("backlog") == 0)
            #expect(endpoint["last_success_at"] != .null)
            let history = try await api.call(.get, "/v1/webhooks/\(endpointID)/deliveries")
            #expect(history.items.count == 5)
            #expect(history.items.allSatisfy { $0.objectValue?["state"] == .string("delivered") })
        }
    }

    @Test("No endpoint, no outbox row; a test event reaches the endpoint asked")
    func noEndpointNoRow() async throws {
        let harness = try await EngineHarness(webhooks: Self.policy)
        try await harness.run { api in
            let token = Fixtures.apnsToken()
            _ = try await api.register(#"{"platform":"ios","token":"\#(token)"}"#)
            harness.apns.script(token: token, .unregistered(since: harness.server.clock.date.addingTimeInterval(60)))
            _ = try await api.send(#"{"target":{"all":true},"payload":{"title":"x"}}"#)
            try await harness.drain()
            try await Self.withDeliverer(harness) { deliverer in
                let attempted = try await deliverer.deliverDue()
                #expect(attempted == 0)
            }
            let (endpointID, receiver) = try await Self.endpoint(api)
            defer { Task { await receiver.finish() } }
            let test = try await api.call(.post, "/v1/webhooks/\(endpointID)/test")
            #expect(test.status == .accepted)
            try await Self.withDeliverer(harness) { deliverer in
                let attempted = try await deliverer.deliverDue()
                #expect(attempted == 1)
            }
            let line = try await receiver.next(timeout: .seconds(20))
            #expect(line["verified_standardwebhooks"] as? Bool == true)
            #expect((line["body"] as? [String: Any])?["type"] as? String == "webhook.test")
            #expect(line["id"] as? String == test.string("event_id"))
        }
    }

    @Test("Client and publish keys and another app's server key can neither see nor change an app's webhooks")
    func serverKeyOnly() async throws {
        let harness = try await EngineHarness(otherApps: ["other"], webhooks: Self.policy)
        try await harness.run { api in
            let created = try await api.call(
                .post, "/v1/webhooks", body: #"{"url":"https://example.com/hook","events":["delivery.failed"]}"#)
            #expect(created.status == .created)
            let id = created.string("id") ?? ""
            // A client key is forbidden; a publish key is no credential at all on the native API.
            for (key, status) in [
                (ServerHarness.clientKey, HTTPResponse.Status.forbidden), (ServerHarness.publishKey, .unauthorized),
            ] {
                #expect(try await api.call(.get, "/v1/webhooks", bearer: key).status == status)
                #expect(try await api.call(.delete, "/v1/webhooks/\(id)", bearer: key).status == status)
                #expect(try await api.call(.post, "/v1/webhooks/\(id)/rotate-secret", bearer: key).status == status)
            }
            let other = ServerHarness.otherServerKey("other")
            #expect(try await api.call(.get, "/v1/webhooks/\(id)", bearer: other).status == .notFound)
            #expect(try await api.call(.get, "/v1/webhooks", bearer: other).items.isEmpty)
            #expect(try await api.call(.delete, "/v1/webhooks/\(id)", bearer: other).status == .notFound)
            #expect(try await api.call(.get, "/v1/webhooks/\(id)").status == .ok)
        }
    }

    @Test(
        "Bad endpoints are refused with the field at fault and change nothing",
        arguments: [
            (#"{"url":"http://example.com/hook","events":["*"]}"#, "invalid_webhook_url", "url", false),
            (#"{"url":"https://10.1.2.3/hook","events":["*"]}"#, "webhook_address_refused", "url", true),
            (#"{"url":"https://[::ffff:127.0.0.1]/hook","events":["*"]}"#, "webhook_address_refused", "url", true),
            (#"{"url":"https://localhost/hook","events":["*"]}"#, "webhook_address_refused", "url", true),
            (#"{"url":"https://example.com/hook","events":[]}"#, "invalid_value", "events", true),
            (#"{"url":"https://example.com/hook","events":["notification.sent"]}"#, "invalid_value", "events[0]", true),
            (#"{"url":"https://example.com/hook"}"#, "missing_field", "events", true),
            (#"{"url":"https://user:pw@example.com/hook","events":["*"]}"#, "invalid_webhook_url", "url", true),
        ])
    func refused(body: String, code: String, field: String, allowHTTP: Bool) async throws {
        let harness = try await EngineHarness(webhooks: WebhookNetworkPolicy(allowHTTP: allowHTTP))
        try await harness.run { api in
            let response = try await api.call(.post, "/v1/webhooks", body: body)
            #expect(response.status == .badRequest, "\(String(describing: response.json))")
            #expect(response.errorCode == code)
            #expect(response.errorField == field)
            #expect(try await api.call(.get, "/v1/webhooks").items.isEmpty)
        }
    }
}

extension WebhookTests {
    @Test(
        "A receiver that answers 500, then times out, then 410: retried on the schedule of the injected clock, then disabled; enabled again, it receives events again"
    )
    func retriesThenGone() async throws {
        let harness = try await EngineHarness(webhooks: Self.policy)
        try await harness.run { api in
            let (endpointID, receiver) = try await Self.endpoint(api, answers: ["500", "timeout"])
            defer { Task { await receiver.finish() } }
            guard let store = harness.server.store as? any WebhookStore else { throw TestFailure("no webhook store") }
            let clock = harness.server.clock
            let sender = WebhookSender(
                policy: Self.policy, timeouts: .init(connect: .seconds(2), response: .seconds(2)))
            let deliverer = WebhookDeliverer(store: store, sender: sender, now: { clock.date })
            func round() async throws -> Int { try await deliverer.deliverDue() }
            func history() async throws -> JSONValue? {
                try await api.call(.get, "/v1/webhooks/\(endpointID)/deliveries").items.first
            }
            #expect(try await api.call(.post, "/v1/webhooks/\(endpointID)/test").status == .accepted)

            // 1: 500. The next attempt 5 s later (±20 %), not before.
            #expect(try await round() == 1)
            #expect(try await receiver.next(timeout: .seconds(20))["answer"] as? String == "500")
            var row = try await history()?.objectValue
            #expect(row?["attempts"] == .number(1))
            #expect(row?["last_status"] == .number(500))
            let next = try #require(row?["next_attempt_at"]?.stringValue.flatMap { try? Date($0, strategy: .iso8601) })
            #expect((4...6).contains(next.timeIntervalSince(clock.date)), "\(next) against \(clock.date)")
            #expect(try await round() == 0)
            #expect(try await api.call(.get, "/v1/webhooks/\(endpointID)")["failing_since"] != .null)

            // 2: no answer within the sender's bound. The next 5 min later (±20 %).
            clock.advance(by: .seconds(7))
            #expect(try await round() == 1)
            #expect(try await receiver.next(timeout: .seconds(20))["answer"] as? String == "timeout")
            row = try await history()?.objectValue
            #expect(row?["attempts"] == .number(2))
            #expect(row?["last_status"] == .null)
            clock.advance(by: .seconds(200))
            #expect(try await round() == 0)

            // 3: the endpoint, moved to another receiver, answers 410 Gone: the event fails, the endpoint is disabled.
            let gone = try await Self.receiver(secrets: [], answers: ["410"])
            defer { Task { await gone.0.finish() } }
            let patched = try await api.call(
                .patch, "/v1/webhooks/\(endpointID)", body: #"{"url":"http://127.0.0.1:\#(gone.1)/hook"}"#)
            #expect(patched.status == .ok)
            clock.advance(by: .seconds(200))
            #expect(try await round() == 1)
            #expect(try await gone.0.next(timeout: .seconds(20))["answer"] as? String == "410")
            let endpoint = try await api.call(.get, "/v1/webhooks/\(endpointID)")
            #expect(endpoint["enabled"] == .bool(false))
            #expect(endpoint.string("disabled_reason") == "gone")
            #expect(try await history()?.objectValue?["state"] == .string("failed"))
            // Disabled: nothing is sent, a test event is refused.
            #expect(try await api.call(.post, "/v1/webhooks/\(endpointID)/test").status == .conflict)

            // Enabled again: the next event is delivered (the receiver answers 204 after its 410).
            #expect(try await api.call(.patch, "/v1/webhooks/\(endpointID)", body: #"{"enabled":true}"#).status == .ok)
            #expect(try await api.call(.post, "/v1/webhooks/\(endpointID)/test").status == .accepted)
            #expect(try await round() == 1)
            #expect(try await gone.0.next(timeout: .seconds(20))["answer"] as? String == "204")
            let healthy = try await api.call(.get, "/v1/webhooks/\(endpointID)")
            #expect(healthy["enabled"] == .bool(true))
            #expect(healthy["failing_since"] == .null)
            #expect(healthy["last_success_at"] != .null)
            await sender.shutdown()
        }
    }
}

extension WebhookTests {
    static func configuration(_ webhooks: String) async throws -> HeraldConfiguration {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("herald.yaml")
        try """
        apps: [demo]
        app:
          demo:
            server_key: \(ServerHarness.serverKey)
            client_key: \(ServerHarness.clientKey)
        \(webhooks)
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return try await HeraldConfiguration.load(file: path, environment: [:])
    }

    @Test(
        "An endpoint in the configuration wins over the API's of the same id, cannot be changed through the API, and goes when it leaves the configuration"
    )
    func configuredEndpoints() async throws {
        let harness = try await EngineHarness(webhooks: Self.policy)
        let secret = WebhookSecret.generate().value
        let previous = WebhookSecret.generate().value
        try await harness.run { api in
            let made = try await api.call(
                .post, "/v1/webhooks", body: #"{"id":"backend","url":"https://api.example.com/a","events":["*"]}"#)
            #expect(made.status == .created)
            let configuration = try await Self.configuration(
                """
                    webhooks: [backend]
                    webhook:
                      backend:
                        url: https://hooks.example.com/herald
                        events: [installation.invalidated, notification.completed]
                        secret: \(secret)
                        previous_secret: \(previous)
                        description: from the file
                """)
            guard let store = harness.server.store as? any WebhookStore else { throw TestFailure("no webhook store") }
            try await ConfiguredWebhooks.apply(
                configuration.configuredWebhooks, appIDs: ["demo"], store: store, now: harness.server.clock.date,
                logger: Logger(label: "test"))
            let endpoint = try await api.call(.get, "/v1/webhooks/backend")
            #expect(endpoint["configured"] == .bool(true))
            #expect(endpoint.string("url") == "https://hooks.example.com/herald")
            #expect(
                endpoint["events"] == .array([.string("installation.invalidated"), .string("notification.completed")]))
            #expect(
                try await store.webhookEndpoint(appID: "demo", id: "backend")?.secrets.map(\.value) == [
                    secret, previous,
                ])
            // The API reads it, changes nothing of it.
            let patch = try await api.call(.patch, "/v1/webhooks/backend", body: #"{"enabled":false}"#)
            #expect(patch.status == .conflict)
            #expect(patch.errorCode == "webhook_configured")
            #expect(try await api.call(.delete, "/v1/webhooks/backend").status == .conflict)
            #expect(try await api.call(.post, "/v1/webhooks/backend/rotate-secret").status == .conflict)
            // Out of the configuration: gone. The API's other endpoints stay.
            let other = try await api.call(
                .post, "/v1/webhooks", body: #"{"url":"https://api.example.com/b","events":["*"]}"#)
            try await ConfiguredWebhooks.apply(
                [], appIDs: ["demo"], store: store, now: harness.server.clock.date, logger: Logger(label: "test"))
            #expect(try await api.call(.get, "/v1/webhooks/backend").status == .notFound)
            #expect(try await api.call(.get, "/v1/webhooks/\(other.string("id") ?? "")").status == .ok)
        }
    }

    @Test(
        "A configured endpoint with a bad secret, no secret, a refused URL or an unknown event type is refused, naming the key"
    )
    func configuredEndpointRefused() async throws {
        let good = WebhookSecret.generate().value
        let cases: [(String, String)] = [
            ("url: https://h.example.com/x\n        events: ['*']\n        secret: nope", "app.demo.webhook.b.secret"),
            ("url: https://h.example.com/x\n        events: ['*']", "app.demo.webhook.b.secret"),
            ("url: https://127.0.0.1/x\n        events: ['*']\n        secret: \(good)", "app.demo.webhook.b.url"),
            (
                "url: https://h.example.com/x\n        events: [notification.sent]\n        secret: \(good)",
                "app.demo.webhook.b.events"
            ),
        ]
        for (body, key) in cases {
            do {
                _ = try await Self.configuration("    webhooks: [b]\n    webhook:\n      b:\n        " + body)
                Issue.record("accepted: \(body)")
            } catch let error as HeraldError {
                #expect(error.code == "invalid_configuration")
                #expect(error.field == key, "\(error)")
            }
        }
    }
}

extension WebhookTests {
    @Test("Replay sends an endpoint's kept events again with their ids; a backlog over its limit loses its oldest")
    func replayAndBacklog() async throws {
        let harness = try await EngineHarness(webhooks: Self.policy)
        try await harness.run { api in
            let (endpointID, receiver) = try await Self.endpoint(api)
            defer { Task { await receiver.finish() } }
            guard let store = harness.server.store as? any WebhookStore else { throw TestFailure("no webhook store") }
            let clock = harness.server.clock
            let sender = WebhookSender(policy: Self.policy)
            let deliverer = WebhookDeliverer(
                store: store, sender: sender, configuration: .init(maxBacklog: 2), now: { clock.date })
            var ids: [String] = []
            for _ in 0..<3 {
                ids.append(try await api.call(.post, "/v1/webhooks/\(endpointID)/test").string("event_id") ?? "")
                clock.advance(by: .seconds(1))
            }
            #expect(try await deliverer.deliverDue() == 3)
            var seen: [String] = []
            for _ in 0..<3 { seen.append(try await receiver.next(timeout: .seconds(20))["id"] as? String ?? "") }
            #expect(seen == ids, "one endpoint's events in order")

            // From the second on, again.
            let since = WebhookEvent.timestamp(clock.date.addingTimeInterval(-2.5))
            let replay = try await api.call(.post, "/v1/webhooks/\(endpointID)/replay", body: #"{"since":"\#(since)"}"#)
            #expect(replay.status == .accepted)
            #expect(replay.int("replayed") == 2)
            #expect(try await deliverer.deliverDue() == 2)
            seen = []
            for _ in 0..<2 { seen.append(try await receiver.next(timeout: .seconds(20))["id"] as? String ?? "") }
            #expect(seen == Array(ids.suffix(2)))
            let refused = try await api.call(
                .post, "/v1/webhooks/\(endpointID)/replay", body: #"{"since":"yesterday"}"#)
            #expect(refused.status == .badRequest)
            #expect(refused.errorField == "since")

            // Five waiting, two allowed: the three oldest are dropped, the two newest delivered.
            var waiting: [String] = []
            for _ in 0..<5 {
                let event = WebhookEvent(appID: "demo", type: .webhookTest, occurredAt: clock.date, data: [:])
                try await store.enqueueWebhookEvents([event], endpointID: endpointID)
                waiting.append(event.id)
            }
            try await deliverer.trimBacklogs()
            #expect(try await store.webhookBacklog(appID: "demo", endpointID: endpointID) == 2)
            #expect(try await deliverer.deliverDue() == 2)
            seen = []
            for _ in 0..<2 { seen.append(try await receiver.next(timeout: .seconds(20))["id"] as? String ?? "") }
            #expect(seen == Array(waiting.suffix(2)))
            let states = try await api.call(.get, "/v1/webhooks/\(endpointID)/deliveries?limit=5").items
                .compactMap { $0.objectValue?["state"]?.stringValue }
            #expect(states == ["delivered", "delivered", "dropped", "dropped", "dropped"])
            await sender.shutdown()
        }
    }
}

extension WebhookTests {
    @Test(
        "A rotated secret: both sign during the overlap (a receiver knowing either verifies), the old one stops after it"
    )
    func rotation() async throws {
        let harness = try await EngineHarness(webhooks: Self.policy)
        try await harness.run { api in
            let created = try await api.call(
                .post, "/v1/webhooks", body: #"{"id":"r","url":"http://127.0.0.1:9/x","events":["*"]}"#)
            let old = try #require(created.string("secret"))
            // A short overlap: the receivers check the signing time against their own clock (five minutes).
            let rotated = try await api.call(.post, "/v1/webhooks/r/rotate-secret", body: #"{"overlap_seconds":2}"#)
            #expect(rotated.status == .ok)
            let new = try #require(rotated.string("secret"))
            #expect(new != old && new.hasPrefix("whsec_"))
            #expect(rotated["previous_secrets_expire_at"] != .null)
            let (knowsOld, oldPort) = try await Self.receiver(secrets: [old])
            defer { Task { await knowsOld.finish() } }
            let (knowsNew, newPort) = try await Self.receiver(secrets: [new])
            defer { Task { await knowsNew.finish() } }
            guard let store = harness.server.store as? any WebhookStore else { throw TestFailure("no webhook store") }
            let clock = harness.server.clock
            let sender = WebhookSender(policy: Self.policy)
            let deliverer = WebhookDeliverer(store: store, sender: sender, now: { clock.date })
            func deliver(to port: Int) async throws -> [String: Any] {
                let patched = try await api.call(
                    .patch, "/v1/webhooks/r", body: #"{"url":"http://127.0.0.1:\#(port)/h"}"#)
                #expect(patched.status == .ok)
                #expect(try await api.call(.post, "/v1/webhooks/r/test").status == .accepted)
                #expect(try await deliverer.deliverDue() == 1)
                return try await (port == oldPort ? knowsOld : knowsNew).next(timeout: .seconds(20))
            }
            func signatures(_ line: [String: Any]) -> Int {
                ((line["headers"] as? [String: Any])?["webhook-signature"] as? String)?.split(separator: " ").count ?? 0
            }
            // During the overlap: two signatures, each receiver verifies.
            var line = try await deliver(to: oldPort)
            #expect(line["verified_standardwebhooks"] as? Bool == true)
            #expect(signatures(line) == 2)
            line = try await deliver(to: newPort)
            #expect(line["verified_standardwebhooks"] as? Bool == true)
            // After it: only the new secret signs.
            clock.advance(by: .seconds(3))
            line = try await deliver(to: oldPort)
            #expect(line["verified_standardwebhooks"] as? Bool == false)
            #expect(signatures(line) == 1)
            line = try await deliver(to: newPort)
            #expect(line["verified_svix"] as? Bool == true)
            // Rotating again drops what expired.
            _ = try await api.call(.post, "/v1/webhooks/r/rotate-secret")
            #expect(try await store.webhookEndpoint(appID: "demo", id: "r")?.secrets.count == 2)
            await sender.shutdown()
        }
    }

    @Test("An endpoint failing every attempt for five days is disabled (failing); its events wait")
    func failingForDays() async throws {
        let harness = try await EngineHarness(webhooks: Self.policy)
        try await harness.run { api in
            // A name that does not resolve: every attempt fails.
            let created = try await api.call(
                .post, "/v1/webhooks", body: #"{"id":"f","url":"http://hooks.invalid/x","events":["*"]}"#)
            #expect(created.status == .created)
            guard let store = harness.server.store as? any WebhookStore else { throw TestFailure("no webhook store") }
            let clock = harness.server.clock
            let sender = WebhookSender(policy: Self.policy)
            let deliverer = WebhookDeliverer(store: store, sender: sender, now: { clock.date })
            #expect(try await api.call(.post, "/v1/webhooks/f/test").status == .accepted)
            #expect(try await deliverer.deliverDue() == 1)
            let failing = try await api.call(.get, "/v1/webhooks/f")
            #expect(failing["enabled"] == .bool(true))
            #expect(failing["failing_since"] != .null)
            clock.advance(by: .seconds(5 * 86_400))
            #expect(try await api.call(.post, "/v1/webhooks/f/test").status == .accepted)
            #expect(try await deliverer.deliverDue() == 2)
            let disabled = try await api.call(.get, "/v1/webhooks/f")
            #expect(disabled["enabled"] == .bool(false))
            #expect(disabled.string("disabled_reason") == "failing")
            // Both events wait: the one that failed within its schedule, and the one never attempted (the
            // deliverer left the endpoint's other rows once it saw the endpoint disabled).
            #expect(disabled.int("backlog") == 2)
            clock.advance(by: .seconds(86_400))
            #expect(try await deliverer.deliverDue() == 0)
            await sender.shutdown()
        }
    }
}

extension WebhookTests {
    @Test("Malformed JSON, wrong types, unknown, missing and oversized fields: a 4xx naming the field, nothing changed")
    func badInput() async throws {
        let harness = try await EngineHarness(webhooks: Self.policy)
        try await harness.run { api in
            let made = try await api.call(
                .post, "/v1/webhooks", body: #"{"id":"w","url":"https://a.example.com/h","events":["*"]}"#)
            #expect(made.status == .created)
            let long = String(repeating: "a", count: WebhookEndpointChange.maxURLLength)
            let cases: [(HTTPRequest.Method, String, String, String?)] = [
                (.post, "/v1/webhooks", "{", nil),
                (.post, "/v1/webhooks", #"{"url":5,"events":["*"]}"#, "url"),
                (.post, "/v1/webhooks", #"{"url":"https://a.example.com/h","events":"*"}"#, "events"),
                (.post, "/v1/webhooks", #"{"url":"https://a.example.com/h","events":["*"],"colour":1}"#, "colour"),
                (.post, "/v1/webhooks", #"{"events":["*"]}"#, "url"),
                (.post, "/v1/webhooks", #"{"url":"https://a.example.com/\#(long)","events":["*"]}"#, "url"),
                (.post, "/v1/webhooks", #"{"id":"a b","url":"https://a.example.com/h","events":["*"]}"#, "id"),
                (.post, "/v1/webhooks", #"{"id":"w","url":"https://a.example.com/h","events":["*"]}"#, "id"),
                (.patch, "/v1/webhooks/w", #"{"enabled":"yes"}"#, "enabled"),
                (.patch, "/v1/webhooks/w", #"{"id":"x"}"#, "id"),
                (.patch, "/v1/webhooks/w", "[]", nil),
                (.post, "/v1/webhooks/w/rotate-secret", #"{"overlap_seconds":-1}"#, "overlap_seconds"),
                (.post, "/v1/webhooks/w/replay", #"{}"#, "since"),
                (.post, "/v1/webhooks/w/replay", #"{"since":7}"#, "since"),
            ]
            let before = try await api.call(.get, "/v1/webhooks/w").json
            for (method, path, body, field) in cases {
                let answer = try await api.call(method, path, body: body)
                #expect((400..<500).contains(Int(answer.status.code)), "\(method) \(path) \(body): \(answer.status)")
                #expect(answer.errorCode != nil, "\(body)")
                if let field { #expect(answer.errorField == field, "\(body): \(answer.errorField ?? "none")") }
            }
            let oversized = try await api.call(
                .post, "/v1/webhooks",
                body:
                    #"{"url":"https://a.example.com/h","events":["*"],"description":"\#(String(repeating: "d", count: 70_000))"}"#
            )
            #expect(oversized.status == .contentTooLarge)
            #expect(try await api.call(.get, "/v1/webhooks/w").json == before, "nothing changed")
            #expect(try await api.call(.get, "/v1/webhooks").items.count == 1)
        }
    }
}

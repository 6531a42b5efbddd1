import Foundation
import HeraldCore
import HeraldServerTestSupport
import HeraldTestSupport
import HeraldWebhooks
import Testing

/// Where webhook requests may go (docs/webhooks.md, "Safety").
@Suite("Webhook safety")
struct WebhookSafetyTests {
    static let refused = [
        "0.0.0.0", "0.1.2.3", "10.0.0.1", "10.255.255.255", "100.64.0.1", "100.127.255.254", "127.0.0.1", "127.1.2.3",
        "169.254.169.254", "172.16.0.1", "172.31.255.255", "192.0.0.8", "192.168.1.1", "198.18.0.1", "224.0.0.1",
        "240.0.0.1", "255.255.255.255", "::", "::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::127.0.0.1",
        "fc00::1", "fd12:3456::1", "fe80::1", "ff02::1",
    ]
    static let allowed = [
        "8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.1", "172.15.255.255", "172.32.0.1",
        "2001:4860:4860::8888", "::ffff:8.8.8.8",
    ]

    @Test("Every refused range is refused, its neighbours are not, and webhooks.allow_networks lets one through")
    func ranges() throws {
        let policy = WebhookNetworkPolicy()
        for text in Self.refused {
            let address = try #require(IPAddress(text), "\(text)")
            #expect(throws: HeraldError.self, "\(text)") { try policy.check(address: address) }
        }
        for text in Self.allowed {
            let address = try #require(IPAddress(text), "\(text)")
            #expect(throws: Never.self, "\(text)") { try policy.check(address: address) }
        }
        let open = WebhookNetworkPolicy(allowNetworks: [try IPNetwork("10.1.0.0/16"), try IPNetwork("fd00::/8")])
        #expect(throws: Never.self) { try open.check(address: IPAddress("10.1.2.3")!) }
        #expect(throws: Never.self) { try open.check(address: IPAddress("fd12::1")!) }
        #expect(throws: HeraldError.self) { try open.check(address: IPAddress("10.2.0.1")!) }
    }

    @Test("URLs: https only unless allowed, no credentials, literal local addresses and localhost refused at once")
    func urls() throws {
        let policy = WebhookNetworkPolicy()
        for url in [
            "http://example.com/h", "ftp://example.com/h", "https://user:pw@example.com/h", "https://127.0.0.1/h",
            "https://[::1]/h", "https://[::ffff:169.254.169.254]/h", "https://localhost:8443/h",
            "https://a.localhost/h",
            "https://localhost./h", "example.com/h",
        ] {
            #expect(throws: HeraldError.self, "\(url)") { try policy.check(url: url) }
        }
        #expect(throws: Never.self) { try policy.check(url: "https://hooks.example.com/herald?x=1") }
        #expect(throws: Never.self) {
            try WebhookNetworkPolicy(allowHTTP: true).check(url: "http://hooks.example.com/h")
        }
    }

    @Test("A name that resolves to loopback is refused, even beside a public address; no request is made")
    func nameResolvingToLoopback() async throws {
        let (receiver, port) = try await WebhookTests.receiver(secrets: [WebhookSecret.generate().value])
        defer { Task { await receiver.finish() } }
        let resolver: @Sendable (String) async throws -> [IPAddress] = { name in
            name == "hooks.example.test" ? [IPAddress("8.8.8.8")!, IPAddress("127.0.0.1")!] : []
        }
        let sender = WebhookSender(policy: WebhookNetworkPolicy(allowHTTP: true), resolver: resolver)
        let delivery = WebhookDelivery(
            id: 1, appID: "demo", endpointID: "e", eventID: "evt_1", eventType: .webhookTest, body: Array("{}".utf8),
            createdAt: Date(), state: .pending, attempts: 0, nextAttemptAt: Date(),
            url: "http://hooks.example.test:\(port)/hook", secrets: [WebhookSecret.generate()])
        let result = await sender.send(delivery, now: Date())
        #expect(result.status == nil)
        #expect(result.error?.contains("127.0.0.1") == true, "\(result.error ?? "")")
        // The real resolver, too: the machine's own name for loopback.
        let real = WebhookSender(policy: WebhookNetworkPolicy(allowHTTP: true))
        var local = delivery
        local.url = "http://localhost:\(port)/hook"
        #expect(await real.send(local, now: Date()).status == nil)
        await sender.shutdown()
        await real.shutdown()
        // Nothing reached the receiver: the next line it prints is the one asked for now.
        local.url = "http://127.0.0.1:\(port)/probe"
        let allowed = WebhookSender(
            policy: WebhookNetworkPolicy(allowHTTP: true, allowNetworks: [try IPNetwork("127.0.0.1")]))
        #expect(await allowed.send(local, now: Date()).status == 204)
        #expect(try await receiver.next(timeout: .seconds(20))["path"] as? String == "/probe")
        await allowed.shutdown()
    }

    @Test("A redirect, to loopback or anywhere, is not followed: the attempt fails with the redirect's status")
    func redirectNotFollowed() async throws {
        let (target, targetPort) = try await WebhookTests.receiver(secrets: [])
        defer { Task { await target.finish() } }
        let (redirecting, port) = try await WebhookTests.receiver(
            secrets: [], answers: ["redirect:http://127.0.0.1:\(targetPort)/followed"])
        defer { Task { await redirecting.finish() } }
        let sender = WebhookSender(
            policy: WebhookNetworkPolicy(allowHTTP: true, allowNetworks: [try IPNetwork("127.0.0.1")]))
        let delivery = WebhookDelivery(
            id: 1, appID: "demo", endpointID: "e", eventID: "evt_1", eventType: .webhookTest, body: Array("{}".utf8),
            createdAt: Date(), state: .pending, attempts: 0, nextAttemptAt: Date(),
            url: "http://127.0.0.1:\(port)/hook", secrets: [WebhookSecret.generate()])
        let result = await sender.send(delivery, now: Date())
        #expect(result.status == 302)
        #expect(
            try await redirecting.next(timeout: .seconds(20))["answer"] as? String
                == "redirect:http://127.0.0.1:\(targetPort)/followed")
        // The target saw only what the test sends it now.
        var probe = delivery
        probe.url = "http://127.0.0.1:\(targetPort)/probe"
        #expect(await sender.send(probe, now: Date()).status == 204)
        #expect(try await target.next(timeout: .seconds(20))["path"] as? String == "/probe")
        await sender.shutdown()
    }

    @Test("Signatures: Standard Webhooks' known answer, and one per secret during a rotation")
    func signatureKnownAnswer() throws {
        // The example of the Standard Webhooks specification (its test vectors: id, timestamp, body, secret → signature).
        let secret = try WebhookSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        let body = Array(#"{"test": 2432232314}"#.utf8)
        let signature = WebhookSignature.sign(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: "1614265330", body: body, secret: secret)
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        let other = WebhookSecret.generate()
        let headers = WebhookSignature.headers(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: Date(timeIntervalSince1970: 1_614_265_330), body: body,
            secrets: [other, secret])
        let signatures = headers.first { $0.0 == "webhook-signature" }?.1.split(separator: " ").map(String.init)
        #expect(signatures?.count == 2)
        #expect(signatures?.last == signature)
    }

    @Test("The retry schedule: ten attempts over about three days, each delay within its jitter")
    func retrySchedule() {
        let schedule = WebhookRetrySchedule.standard
        #expect(schedule.attempts == 10)
        let total = schedule.delays.reduce(0) { $0 + $1.timeInterval }
        #expect((2.5 * 86_400...3.5 * 86_400).contains(total))
        var generator = SeededGenerator(state: 54)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        for (index, delay) in schedule.delays.enumerated() {
            for _ in 0..<20 {
                let next = schedule.nextAttempt(after: index + 1, now: now, using: &generator)!
                let waited = next.timeIntervalSince(now)
                #expect(waited >= delay.timeInterval * 0.8 && waited <= delay.timeInterval * 1.2)
            }
        }
        #expect(schedule.nextAttempt(after: schedule.attempts, now: now, using: &generator) == nil)
    }
}

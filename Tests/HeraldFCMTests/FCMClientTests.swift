import Foundation
import HeraldCore
import HeraldFCM
import HeraldProviderMocks
import HeraldTestSupport
import NIOCore
import Synchronization
import Testing

@Suite("FCM client against the mock FCM and OAuth endpoint", .serialized)
struct FCMClientTests {
    struct Harness {
        let fcm: MockFCMServer
        let client: FCMClient

        init(now: (@Sendable () -> Date)? = nil) async throws {
            let ca = try TestCertificateAuthority()
            let account = try TestServiceAccount()
            fcm = try await MockFCMServer.start(ca: ca, serviceAccount: account)
            let serviceAccount = try FCMServiceAccount(json: Array(account.json(tokenURI: fcm.tokenURI).utf8))
            client = try FCMClient(
                configuration: .init(
                    account: serviceAccount, host: "127.0.0.1", port: fcm.port, trustRoots: [ca.rootCertificate],
                    requestTimeout: .seconds(120)),
                now: now ?? Date.init)
        }

        func stop() async {
            await client.shutdown()
            try? await fcm.shutdown()
        }
    }

    private func message(_ token: String = Fixtures.fcmToken()) -> FCMMessage {
        FCMMessage(
            target: .token(token), notification: .init(title: "Vehicle detected", body: "At the gate"),
            data: ["cloudEventId": "42", "eventType": "vehicle"],
            android: .init(priority: .high, ttl: 86400, notification: ["channel_id": .string("security_alerts")]))
    }

    @Test("A message is delivered after one OAuth exchange, and the token is reused")
    func delivered() async throws {
        let harness = try await Harness()
        let first = try await harness.client.send(message())
        let second = try await harness.client.send(message(), validateOnly: true)
        await harness.stop()
        guard case .delivered(let name?) = first.outcome else {
            Issue.record("not delivered: \(first)")
            return
        }
        #expect(name.hasPrefix("projects/herald-test/messages/"))
        #expect(second.status == 200)
        #expect(harness.fcm.tokenRequestCount == 1)
        let recorded = try #require(harness.fcm.requests.first)
        #expect(
            recorded.json?.objectValue?["message"]?.objectValue?["data"]?.objectValue?["cloudEventId"] == .string("42"))
        #expect(harness.fcm.requests.last?.json?.objectValue?["validate_only"] == .bool(true))
    }

    @Test("A 401 renews the access token once and retries")
    func refreshOn401() async throws {
        let harness = try await Harness()
        _ = try await harness.client.send(message())
        harness.fcm.revokeAccessTokens()
        let response = try await harness.client.send(message())
        await harness.stop()
        #expect(response.status == 200)
        #expect(harness.fcm.tokenRequestCount == 2)
        #expect(await harness.client.accessTokens.exchangeCount == 2)
    }

    @Test("Tokens are renewed five minutes before expiry, and concurrent callers share one exchange")
    func renewalTiming() async throws {
        let clock = Mutex(Date())
        let harness = try await Harness(now: { clock.withLock { $0 } })
        harness.fcm.scriptAccessTokenLifetimes([600])
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 { group.addTask { try await harness.client.send(message()).status } }
            for try await status in group { #expect(status == 200) }
        }
        #expect(harness.fcm.tokenRequestCount == 1)
        clock.withLock { $0 += 4 * 60 }  // 6 minutes left: still used
        _ = try await harness.client.send(message())
        #expect(harness.fcm.tokenRequestCount == 1)
        clock.withLock { $0 += 2 * 60 }  // 4 minutes left: renewed
        _ = try await harness.client.send(message())
        #expect(harness.fcm.tokenRequestCount == 2)
        await harness.stop()
    }

    @Test("FCM errors map to outcomes through the wire")
    func errorsOverTheWire() async throws {
        let harness = try await Harness()
        let cases: [(MockFCMServer.ScriptedResponse, DeliveryOutcome)] = [
            (.unregistered, .invalidToken(reason: "UNREGISTERED", since: nil)),
            (.invalidToken, .rejectedToken(reason: "INVALID_ARGUMENT")),
            (.quotaExceeded(retryAfter: 30), .retry(reason: "QUOTA_EXCEEDED", after: .seconds(30))),
            (.unavailable(), .retry(reason: "UNAVAILABLE", after: nil)),
            (.internalError, .retry(reason: "INTERNAL", after: nil)),
            (.senderIDMismatch, .configurationFailure(reason: "SENDER_ID_MISMATCH")),
            (.thirdPartyAuthError, .configurationFailure(reason: "THIRD_PARTY_AUTH_ERROR")),
        ]
        for (script, expected) in cases {
            let token = Fixtures.fcmToken()
            harness.fcm.script(token: token, script)
            let response = try await harness.client.send(message(token))
            #expect(response.outcome == expected, "\(script)")
        }
        await harness.stop()
    }

    @Test("Oversized messages are refused before sending")
    func sizeLimit() async throws {
        let harness = try await Harness()
        let big = FCMMessage(target: .token(Fixtures.fcmToken()), data: ["blob": String(repeating: "x", count: 4100)])
        await #expect(throws: FCMError.self) { try await harness.client.send(big) }
        await harness.stop()
        #expect(harness.fcm.requests.isEmpty)
    }
}

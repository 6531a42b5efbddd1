import Foundation
import HeraldCore
import HeraldProviderMocks
import HeraldTestSupport
import NIOCore
import Synchronization
import Testing

@testable import HeraldAPNs

/// A mock APNs and a client pointed at it, over HTTP/2 + TLS with an in-memory CA.
struct APNsHarness {
    static let bundleID = "com.example.herald"
    let ca: TestCertificateAuthority
    let key: TestAPNsAuthKey
    let apns: MockAPNsServer
    let client: APNsClient

    init(
        connections: Int = 2, maxConcurrentStreams: Int = 1000, timeout: TimeAmount = .seconds(120),
        now: (@Sendable () -> Date)? = nil
    ) async throws {
        ca = try TestCertificateAuthority()
        key = TestAPNsAuthKey()
        apns = try await MockAPNsServer.start(
            ca: ca,
            credentials: [
                key.credential(topics: [Self.bundleID, Self.bundleID + ".voip", Self.bundleID + ".complication"])
            ],
            maxConcurrentStreams: maxConcurrentStreams)
        client = try APNsClient(
            configuration: APNsConfiguration(
                environment: .custom(host: "127.0.0.1", port: apns.port),
                authentication: .token(try APNsSigningKey(teamID: key.teamID, keyID: key.keyID, pem: key.p8PEM)),
                trustRoots: [ca.rootCertificate], connections: connections, requestTimeout: timeout),
            now: now ?? Date.init)
    }

    func notification(_ token: String = Fixtures.apnsToken(), type: APNsPushType = .alert) -> APNsNotification {
        APNsNotification(
            deviceToken: token, pushType: type, bundleID: Self.bundleID, collapseID: "c1",
            payload: APNsPayload(alert: .fields(.init(title: "Person detected", body: "At the door"))).bytes)
    }

    func stop() async {
        await client.shutdown()
        try? await apns.shutdown()
    }
}

@Suite("APNs client against the mock APNs", .serialized)
struct APNsClientTests {
    @Test("A notification is delivered with every header APNs reads")
    func delivered() async throws {
        let harness = try await APNsHarness()
        let token = Fixtures.apnsToken()
        let response = try await harness.client.send(harness.notification(token))
        await harness.stop()
        guard case .delivered(let id?) = response.outcome else {
            Issue.record("not delivered: \(response)")
            return
        }
        #expect(UUID(uuidString: id) != nil)
        let request = try #require(harness.apns.requests.first)
        #expect(request.path == "/3/device/\(token)")
        #expect(request.header("apns-topic") == APNsHarness.bundleID)
        #expect(request.header("apns-push-type") == "alert")
        #expect(request.header("apns-priority") == "10")
        #expect(request.header("apns-collapse-id") == "c1")
        #expect(request.providerToken?.teamID == harness.key.teamID)
        #expect(request.json?.objectValue?["aps"]?.objectValue?["alert"] != nil)
    }

    @Test("Errors APNs returns map to outcomes through the wire")
    func reasonsOverTheWire() async throws {
        let harness = try await APNsHarness()
        let since = Date(timeIntervalSince1970: 1_750_000_000)
        let cases: [(MockAPNsServer.ScriptedResponse, DeliveryOutcome)] = [
            (.unregistered(since: since), .invalidToken(reason: "Unregistered", since: since)),
            (.badDeviceToken, .rejectedToken(reason: "BadDeviceToken")),
            (.deviceTokenNotForTopic, .rejectedToken(reason: "DeviceTokenNotForTopic")),
            (.tooManyRequests(retryAfter: 7), .retry(reason: "TooManyRequests", after: .seconds(7))),
            (.internalServerError, .retry(reason: "InternalServerError", after: nil)),
            (.serviceUnavailable(), .retry(reason: "ServiceUnavailable", after: nil)),
            (.error(status: 403, reason: "BadCertificate"), .configurationFailure(reason: "BadCertificate")),
            (.error(status: 400, reason: "TopicDisallowed"), .configurationFailure(reason: "TopicDisallowed")),
            (.error(status: 400, reason: "BrandNewReason"), .rejected(reason: "BrandNewReason")),
        ]
        for (script, expected) in cases {
            let token = Fixtures.apnsToken()
            harness.apns.script(token: token, script)
            let response = try await harness.client.send(harness.notification(token))
            #expect(response.outcome == expected, "\(script)")
        }
        await harness.stop()
    }

    @Test("ExpiredProviderToken renews the token once and retries")
    func expiredProviderToken() async throws {
        let start = Date().addingTimeInterval(-70 * 60)
        let clock = Mutex(start)
        let harness = try await APNsHarness(now: { clock.withLock { $0 } })
        // Minted 70 minutes ago by the real clock: APNs calls it expired, and at 0 minutes old by
        // Herald's clock it is too young to renew.
        let first = try await harness.client.send(harness.notification())
        #expect(first.outcome == .configurationFailure(reason: "ExpiredProviderToken"))
        // 25 minutes later by Herald's clock the same token is reused, refused, renewed and retried.
        clock.withLock { $0 = start.addingTimeInterval(25 * 60) }
        let second = try await harness.client.send(harness.notification())
        guard case .delivered = second.outcome else {
            Issue.record("not delivered after renewal: \(second)")
            return
        }
        #expect(await harness.client.tokenSource?.mintedCount == 2)
        #expect(harness.apns.requests.count == 3)
        await harness.stop()
    }

    @Test("A batch: results in order, invalid notifications refused without sending")
    func batch() async throws {
        let harness = try await APNsHarness()
        let dead = Fixtures.apnsToken()
        harness.apns.script(token: dead, .unregistered())
        var notifications = (0..<50).map { _ in harness.notification() }
        notifications[10] = harness.notification(dead)
        notifications[20].deviceToken = "not-hex"
        let results = await harness.client.send(batch: notifications)
        await harness.stop()
        #expect(results.count == 50)
        for (index, result) in results.enumerated() {
            switch (index, result) {
            case (10, .success(let response)):
                guard case .invalidToken = response.outcome else {
                    Issue.record("\(response)")
                    continue
                }
            case (20, .failure(let error)): #expect(error.code == .invalidToken)
            case (_, .success(let response)): #expect(response.status == 200)
            default: Issue.record("unexpected result \(index): \(result)")
            }
        }
        #expect(harness.apns.requests.count == 49)
    }

    @Test("Payload limits on the wire: 4096 bytes accepted, VoIP 5120")
    func payloadLimits() async throws {
        let harness = try await APNsHarness()
        func notification(_ type: APNsPushType, size: Int) -> APNsNotification {
            let filler = String(repeating: "x", count: size - #"{"aps":{},"f":""}"#.utf8.count)
            return APNsNotification(
                deviceToken: Fixtures.apnsToken(), pushType: type, bundleID: APNsHarness.bundleID,
                payload: APNsPayload(custom: ["f": .string(filler)]).bytes)
        }
        let alert = try await harness.client.send(notification(.alert, size: 4096))
        let voip = try await harness.client.send(notification(.voip, size: 5120))
        await #expect(throws: APNsError.self) { try await harness.client.send(notification(.alert, size: 4097)) }
        await harness.stop()
        #expect(alert.status == 200)
        #expect(voip.status == 200)
        #expect(harness.apns.requests.count == 2)
    }

    @Test("1,000 concurrent sends through a pool of two connections, twice their stream limits, are all answered")
    func manyConcurrent() async throws {
        // Debug builds of client and mock share two cores here: allow for it in the request timeout.
        let harness = try await APNsHarness(connections: 2, maxConcurrentStreams: 250, timeout: .seconds(300))
        // Two connections of 250 streams each: half the sends wait for a stream.
        let count = 1_000
        let delivered = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<count {
                group.addTask {
                    if case .delivered = try await harness.client.send(harness.notification()).outcome { return true }
                    return false
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        await harness.stop()
        #expect(delivered == count)
        let distinct = Set(harness.apns.requests.map(\.token)).count
        #expect(distinct == count)
    }

    @Test("GOAWAY with 1,000 in flight: every request ends, none sent twice past last-stream-id")
    func goAwayMidFlight() async throws {
        let harness = try await APNsHarness(connections: 1)
        _ = try await harness.client.send(harness.notification())  // open the connection
        // The connection answers 600 streams, then GOAWAY: the other 400 go to a new connection.
        harness.apns.goAway(afterStreams: 600)
        let tokens = (0..<1000).map { _ in Fixtures.apnsToken() }
        let outcomes = try await withThrowingTaskGroup(of: DeliveryOutcome.self) { group in
            for token in tokens { group.addTask { try await harness.client.send(harness.notification(token)).outcome } }
            return try await group.reduce(into: [DeliveryOutcome]()) { $0.append($1) }
        }
        await harness.stop()
        #expect(outcomes.count == 1000)
        let delivered = outcomes.filter { if case .delivered = $0 { true } else { false } }.count
        #expect(delivered == 1000, "\(outcomes.filter { if case .delivered = $0 { false } else { true } })")
        let answered = harness.apns.requests.filter { $0.status == 200 }.compactMap(\.token)
        var seen: [String: Int] = [:]
        for token in answered { seen[token, default: 0] += 1 }
        let answeredOnce = seen.values.allSatisfy { $0 == 1 }
        let allAnswered = Set(tokens).isSubset(of: Set(answered))
        #expect(answeredOnce)
        #expect(allAnswered)
        #expect(harness.apns.connectionCount >= 2)
    }

    @Test("SETTINGS_MAX_CONCURRENT_STREAMS 1, then 1000")
    func streamLimit() async throws {
        let harness = try await APNsHarness(connections: 1)
        _ = try await harness.client.send(harness.notification())
        let acknowledged = harness.apns.settingsAcknowledged
        harness.apns.setMaxConcurrentStreams(1)
        // The new limit is in force once the client has acknowledged the SETTINGS frame that carries it.
        try await waitUntil("the client to acknowledge SETTINGS", timeout: .seconds(10), every: .milliseconds(2)) {
            harness.apns.settingsAcknowledged > acknowledged
        }
        async let narrow = withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<50 { group.addTask { try await harness.client.send(harness.notification()).status } }
            return try await group.reduce(0) { $0 + ($1 == 200 ? 1 : 0) }
        }
        #expect(try await narrow == 50)
        harness.apns.setMaxConcurrentStreams(1000)
        let wide = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<500 { group.addTask { try await harness.client.send(harness.notification()).status } }
            return try await group.reduce(0) { $0 + ($1 == 200 ? 1 : 0) }
        }
        await harness.stop()
        #expect(wide == 500)
        #expect(harness.apns.peakConcurrentStreams > 1)
    }

    @Test("A dropped connection: every request still ends, in a response or a retry outcome")
    func droppedConnection() async throws {
        let harness = try await APNsHarness(connections: 1)
        _ = try await harness.client.send(harness.notification())
        harness.apns.dropConnections(afterStreams: 100)
        let outcomes = try await withThrowingTaskGroup(of: DeliveryOutcome.self) { group in
            for _ in 0..<500 { group.addTask { try await harness.client.send(harness.notification()).outcome } }
            return try await group.reduce(into: [DeliveryOutcome]()) { $0.append($1) }
        }
        harness.apns.clearConnectionScripts()
        // A connection opened while the script was active may still be closing: a later send may
        // meet it once, as an engine's retry would; within three sends the pool has a fresh one.
        var after = try await harness.client.send(harness.notification())
        for _ in 0..<2 {
            guard case .retry = after.outcome else { break }
            after = try await harness.client.send(harness.notification())
        }
        await harness.stop()
        var delivered = 0
        var retried = 0
        for outcome in outcomes {
            switch outcome {
            case .delivered: delivered += 1
            case .retry: retried += 1
            default: Issue.record("unexpected outcome \(outcome)")
            }
        }
        // The first 100 streams were answered before the drop; the ones in flight then end as retries.
        #expect(delivered >= 100)
        #expect(retried >= 1)
        guard case .delivered = after.outcome else {
            Issue.record("no reconnect: \(after)")
            return
        }
    }
}

import Foundation
import HeraldAPNs
import HeraldCore
import HeraldEngine
import HeraldFCM
import HeraldProviderMocks
import HeraldSNS
import HeraldSQLite
import HeraldServer
import HeraldServerTestSupport
import HeraldSigV4
import HeraldTestSupport
import HeraldWebPush
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import HeraldAPI

/// The provider fault matrix: a broadcast (`target: all`) to devices of two providers while the mock of one of them
/// misbehaves over its real protocol (HTTP/2 over TLS). For each fault: (a) every device gets the notification once
/// the fault clears, before its expiry; (b) the requests the failing provider saw during the fault stay within a
/// bound derived from the retry policy; (c) the other provider's devices all get it while the fault is still on;
/// (d) the ledger shows the attempts.
///
/// The engine's workers run on the wall clock, with a small retry base, so a fault window is a second or two.
/// Figures are printed (`fault-matrix …` lines) for docs/reliability.md.
@Suite("Provider fault matrix", .serialized)
struct ProviderFaultTests {
    /// What the mock does wrong.
    enum Fault: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// Every request answered 500 or 503 (no `Retry-After`) until the fault clears.
        case serverErrors
        /// Every request answered 429 with `Retry-After: 1`.
        case tooManyRequestsRetryAfter
        /// Every request answered 429 without `Retry-After`.
        case tooManyRequests
        /// Every request answered 503 with `Retry-After: 1` (provider-wide for APNs and FCM: a pause).
        case serviceUnavailableRetryAfter
        /// Every connection sends GOAWAY after 5 streams, again and again.
        case goAwayStorm
        /// Every connection is reset (TCP RST) after 5 streams.
        case connectionResets
        /// New connections complete TLS, then the server sends nothing.
        case stall
        /// New connections present a certificate Herald does not trust.
        case untrustedCertificate
        /// The port is closed (connections refused), then the provider comes back on it.
        case down

        var testDescription: String { rawValue }

        /// Whether the mock answers each request (and logs it) during the fault.
        var answersRequests: Bool {
            [.serverErrors, .tooManyRequestsRetryAfter, .tooManyRequests, .serviceUnavailableRetryAfter].contains(self)
        }

        /// Whether the answer carries `Retry-After`.
        var retriesAfter: Bool {
            self == .tooManyRequestsRetryAfter || self == .serviceUnavailableRetryAfter
        }

        /// Whether every request fails while the fault is on (the first attempt of every device then fails).
        var failsEveryRequest: Bool {
            ![.goAwayStorm, .connectionResets].contains(self)
        }
    }

    static let devicesPerProvider = 100

    @Test("APNs faults during a broadcast to APNs and FCM devices", arguments: Fault.allCases)
    func apns(_ fault: Fault) async throws {
        try await FaultScenario(faulted: .apns, other: .fcm, fault: fault).run()
    }

    @Test("FCM faults during a broadcast to FCM and APNs devices", arguments: Fault.allCases)
    func fcm(_ fault: Fault) async throws {
        try await FaultScenario(faulted: .fcm, other: .apns, fault: fault).run()
    }

    @Test("Web Push faults during a broadcast to browsers and APNs devices", arguments: Fault.allCases)
    func webPush(_ fault: Fault) async throws {
        try await FaultScenario(faulted: .webpush, other: .apns, fault: fault).run()
    }

    /// moto cannot misbehave: a proxy in front of it answers `Publish` with AWS's errors (`InternalFailure` 500 for
    /// the 5xx burst, `Throttling` 400 — SNS's way to say 429). Connection-level faults are not played for SNS: its
    /// client is AsyncHTTPClient over HTTP/1.1, not Herald's pool.
    @Test(
        "SNS faults (through a fault-injecting proxy in front of moto) during a broadcast to SNS and APNs devices",
        arguments: [Fault.serverErrors, .tooManyRequests])
    func sns(_ fault: Fault) async throws {
        try await FaultScenario(faulted: .sns, other: .apns, fault: fault).run()
    }
}

extension ProviderFaultTests {
    /// How long the long outages last at least: 5 s by default (CI: the same recovery path as a long one, a stall
    /// then lasts one connect timeout); `HERALD_FAULT_OUTAGE_SECONDS=600` makes a provider down for minutes.
    static let outageSeconds =
        ProcessInfo.processInfo.environment["HERALD_FAULT_OUTAGE_SECONDS"].flatMap(Int.init) ?? 5

    /// A long outage of APNs during a broadcast, with Herald's default timeouts and pauses.
    enum Outage: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// APNs accepts connections and completes TLS, then sends nothing.
        case stall
        /// APNs's port is closed.
        case down

        var testDescription: String { rawValue }
    }

    @Test(
        "An APNs outage (5 s, HERALD_FAULT_OUTAGE_SECONDS for longer) holds FCM back by one connect timeout at most",
        arguments: Outage.allCases)
    func longOutage(_ outage: Outage) async throws {
        // Herald's defaults: a connection must be ready (TCP, TLS, the server's HTTP/2 preface) within 10 s, a request
        // answered within 30 s; an unreachable provider pauses for 1 s, doubling up to 30 s.
        let connectTimeout = 10
        let defaults = EngineConfiguration().unreachablePause
        let harness = try await FaultHarness(
            requestTimeoutMilliseconds: 30_000, connectTimeoutMilliseconds: Int64(connectTimeout) * 1000,
            unreachablePause: defaults)
        do {
            try await harness.run { api in
                var ios: [FaultDevice] = []
                var android: [FaultDevice] = []
                for _ in 0..<Self.devicesPerProvider {
                    ios.append(try await harness.register(.apns, api))
                    android.append(try await harness.register(.fcm, api))
                }
                _ = try await harness.fcmClient.accessTokens.accessToken()
                switch outage {
                case .stall: try harness.apns.setAcceptFault(.stall)
                case .down: await harness.apns.stopListening()
                }
                let began = ContinuousClock.now
                let id = try await api.send(
                    #"{"target":{"all":true},"payload":{"title":"Outage"},"expiration_interval":3600}"#)
                let fcmKeys = Set(android.map(\.key))
                // Each batch mixes both providers and commits once its last answer is in, `pipelineDepth` in
                // flight: the first batches wait for APNs' connection (a stall: until the connect timeout), then
                // APNs is paused and the later batches send to FCM alone. Every FCM device is delivered within the
                // outage, and within one connect timeout (a second one, 20 s, would be a batch waiting on APNs
                // again); the 10 s beside it are for the rest of the broadcast on a loaded machine (CI runs
                // this beside five other streams: 5 s was once too few).
                try await waitUntil(
                    "FCM devices delivered while APNs is out",
                    timeout: .seconds(max(Self.outageSeconds, connectTimeout + 10))
                ) {
                    harness.delivered(.fcm).isSuperset(of: fcmKeys)
                }
                let fcmDone = seconds(ContinuousClock.now - began)
                #expect(harness.delivered(.apns).isEmpty, "APNs answered nothing during the outage")
                // The outage goes on for its length (a stall lasts at least the connect timeout above).
                try await Task.sleep(until: began + .seconds(Self.outageSeconds))
                let outageLasted = seconds(ContinuousClock.now - began)
                // Attempts are made when a batch finds APNs unpaused: the first batches, then one probe per pause, the
                // pauses doubling from 1 s up to 30 s. Each probe is a page of waiting devices (at most all of them)
                // and opens at most the pool's two connections.
                let probes =
                    1
                    + FaultScenario.pauses(
                        in: outageLasted, base: seconds(defaults.base), cap: seconds(defaults.cap))
                let connections = harness.connectionCount(.apns)
                let connectionBound = FaultHarness.connections * probes
                #expect(connections <= connectionBound, "\(connections) connections, bound \(connectionBound)")
                let attempts = try await harness.ledger(api, notification: id).filter { $0.outcome == "retrying" }.count
                let attemptBound = Self.devicesPerProvider * probes
                #expect(attempts <= attemptBound, "\(attempts) failed attempts, bound \(attemptBound)")
                switch outage {
                case .stall:
                    try harness.apns.setAcceptFault(nil)
                    harness.apns.closeConnections()
                case .down: try await harness.apns.resumeListening()
                }
                let cleared = ContinuousClock.now
                try await waitUntil("the notification done", timeout: .seconds(120)) {
                    try await api.notification(id).string("status") == "done"
                }
                let recovery = seconds(ContinuousClock.now - cleared)
                let record = try await api.notification(id)
                #expect(record.int("counts.sent") == 2 * Self.devicesPerProvider)
                #expect(record.int("counts.failed") == 0)
                #expect(harness.delivered(.fcm).isSuperset(of: fcmKeys))
                #expect(harness.delivered(.apns).isSuperset(of: Set(ios.map(\.key))))
                let duplicates = harness.successCounts(.apns).values.filter { $0 > 1 }.count
                #expect(duplicates == 0)
                print(
                    "fault-matrix provider=apns fault=\(outage.rawValue)-\(format(outageLasted))s"
                        + " connect-timeout=\(connectTimeout)s fcm-delivered=\(fcmKeys.count)/\(fcmKeys.count)"
                        + " fcm-done=\(format(fcmDone))s apns-connections=\(connections) connection-bound=\(connectionBound)"
                        + " apns-failed-attempts=\(attempts) attempt-bound=\(attemptBound) recovery=\(format(recovery))s"
                        + " duplicates=\(duplicates)")
            }
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }
}

/// A provider of the matrix.
enum FaultProvider: String, Sendable {
    case apns, fcm, webpush, sns
}

/// One cell of the matrix: a fresh app and mocks, the fault injected before the broadcast, the other provider's
/// deliveries awaited while it is on, then the fault cleared and the broadcast awaited to `done`.
struct FaultScenario {
    /// The longest a fault is given to have its effect: a ceiling for a loaded machine (CI runs six test
    /// streams on two cores), not a timing the test asserts.
    static let faultWait: Duration = .seconds(120)

    let faulted: FaultProvider
    let other: FaultProvider
    let fault: ProviderFaultTests.Fault

    /// How long the notification may take: far longer than any fault window here.
    static let expirySeconds = 300
    static let retryAfterSeconds = 1

    func run() async throws {
        // A fault the mock answers every request through leaves the client's timeouts out of the test: they are
        // generous then, so that a TLS handshake slowed past 500 ms by a loaded machine is not an extra attempt the
        // mock never saw (the ledger's attempts are compared with the mock's requests below).
        let timeout = fault.answersRequests ? 10_000 : FaultHarness.requestTimeoutMilliseconds
        let harness = try await FaultHarness(
            requestTimeoutMilliseconds: timeout, connectTimeoutMilliseconds: timeout, withSNS: faulted == .sns)
        do {
            try await harness.run { api in try await scenario(harness, api) }
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }

    private func scenario(_ harness: FaultHarness, _ api: API) async throws {
        let count = ProviderFaultTests.devicesPerProvider
        // Interleaved, so that every batch of the fan-out mixes both providers.
        var faultedDevices: [FaultDevice] = []
        var otherDevices: [FaultDevice] = []
        for _ in 0..<count {
            faultedDevices.append(try await harness.register(faulted, api))
            otherDevices.append(try await harness.register(other, api))
        }
        // The FCM access token is fetched before the fault (a cached token is the normal state mid-broadcast).
        _ = try await harness.fcmClient.accessTokens.accessToken()
        let faultedKeys = Set(faultedDevices.map(\.key))
        let otherKeys = Set(otherDevices.map(\.key))

        let connectionsBefore = harness.connectionCount(faulted)
        let injected = ContinuousClock.now
        try await harness.inject(fault, on: faulted, keys: faultedDevices.map(\.key))
        let id = try await api.send(
            #"{"target":{"all":true},"payload":{"title":"Fault matrix","body":"\#(fault.rawValue)"},"#
                + #""expiration_interval":\#(Self.expirySeconds)}"#)

        let sent = ContinuousClock.now
        // (c) By ordering: the fault stays on until every device of the other provider has its notification.
        try await waitUntil("\(other) devices delivered during the \(faulted) fault") {
            harness.delivered(other).isSuperset(of: otherKeys)
        }
        let otherDone = seconds(ContinuousClock.now - sent)
        try await waitUntilFaultBit(
            harness, keys: faultedKeys, connectionsBefore: connectionsBefore, injected: injected,
            failing: Set(faultedDevices.map(\.installationID)), of: id, api)
        let log = harness.log(faulted)
        let connectionsDuring = harness.connectionCount(faulted) - connectionsBefore
        let otherDeliveredBeforeClear = harness.delivered(other).intersection(otherKeys).count
        let window = seconds(ContinuousClock.now - injected)
        try await harness.clear(fault, on: faulted)
        let cleared = ContinuousClock.now

        try await waitUntil("\(faulted) devices delivered after the fault cleared") {
            harness.delivered(faulted).isSuperset(of: faultedKeys)
        }
        let recovery = seconds(ContinuousClock.now - cleared)
        var record = try await api.notification(id)
        try await waitUntil("the notification done") {
            record = try await api.notification(id)
            return record.string("status") == "done"
        }
        let ledger = try await harness.ledger(api, notification: id)

        // (a) Everyone, once: the counts and the mocks agree.
        #expect(record.int("counts.sent") == 2 * count, "\(String(describing: record.json))")
        #expect(record.int("counts.failed") == 0)
        #expect(record.int("counts.skipped_expired") == 0)
        #expect(harness.delivered(faulted).isSuperset(of: faultedKeys))
        #expect(otherDeliveredBeforeClear == count, "(c) \(other) finished before the \(faulted) fault cleared")

        // (b) The failing provider was not hammered.
        let failures = log.filter { $0.status != 200 && $0.status != 201 }.count
        let bound = requestBound(devices: count, window: window, retry: FaultHarness.retry)
        #expect(log.count <= bound.requests, "\(log.count) requests in \(window) s, bound \(bound.requests)")
        if let connectionBound = bound.connections {
            #expect(connectionsDuring <= connectionBound, "\(connectionsDuring) connections, bound \(connectionBound)")
        }

        if fault.retriesAfter {
            // Every device is tried during the fault, not only those first in line.
            let starved = faultedKeys.subtracting(harness.failureCounts(faulted).keys)
            // A provider-wide `Retry-After` pauses the provider; when the pause ends, the devices it held back go
            // before those it refused (their retry adds its jitter to the `Retry-After`), so each pause tries others.
            #expect(starved.isEmpty, "\(starved.count) of \(count) devices never tried during the fault")
            print(
                "fault-matrix provider=\(faulted.rawValue) fault=\(fault.rawValue) starved=\(starved.count)/\(count)"
                    + " most-refused=\(harness.failureCounts(faulted).values.max() ?? 0)")
        }

        // (d) The ledger: one `delivered` row per device, carrying the attempts it took.
        let delivered = ledger.filter { $0.outcome == "delivered" }
        #expect(delivered.count == 2 * count)
        let rows = Dictionary(grouping: delivered, by: \.installationID)
        #expect(rows.values.allSatisfy { $0.count == 1 })
        let attempts = faultedDevices.map { rows[$0.installationID]?.first?.attempts ?? 0 }
        let requestsPerKey = Dictionary(grouping: harness.log(faulted).compactMap(\.key), by: { $0 }).mapValues(\.count)
        if fault.answersRequests {
            // Every answered attempt is one request the mock logged.
            for device in faultedDevices {
                #expect(rows[device.installationID]?.first?.attempts == requestsPerKey[device.key])
            }
        }
        // A device the pause held back is first tried after the fault (the starvation above).
        if fault.failsEveryRequest, !harness.pausesProvider(faulted, fault) {
            #expect(attempts.allSatisfy { $0 >= 2 }, "every first attempt fell in the fault")
        }
        #expect(attempts.allSatisfy { $0 >= 1 && $0 <= FaultHarness.retry.maxAttempts })
        let retried = faultedDevices.filter { (rows[$0.installationID]?.first?.attempts ?? 0) > 1 }
        if let sample = retried.first {
            let failedRows = ledger.filter { $0.installationID == sample.installationID && $0.outcome != "delivered" }
            // Each failed attempt that was retried has its `retrying` row, with the provider's reason.
            let expected = (rows[sample.installationID]?.first?.attempts ?? 1) - 1
            #expect(failedRows.count == expected, "one row per failed attempt, with its reason")
            #expect(failedRows.allSatisfy { $0.outcome == "retrying" && $0.reason != nil })
        }

        let duplicates = harness.successCounts(faulted).values.filter { $0 > 1 }.count
        let meanAttempts = Double(attempts.reduce(0, +)) / Double(max(attempts.count, 1))
        print(
            "fault-matrix provider=\(faulted.rawValue) fault=\(fault.rawValue) devices=\(count)+\(count)"
                + " window=\(format(window))s requests=\(log.count) failures=\(failures)"
                + " rate=\(format(Double(log.count) / window))/s"
                + " per-connection=\(format(Double(log.count) / window / Double(max(connectionsDuring, 1))))/s"
                + " connections=\(connectionsDuring) request-bound=\(bound.requests)"
                + " connection-bound=\(bound.connections.map(String.init) ?? "-")"
                + " attempts-mean=\(format(meanAttempts)) attempts-max=\(attempts.max() ?? 0)"
                + " delivered=\(harness.delivered(faulted).intersection(faultedKeys).count)/\(count)"
                + " other-delivered-during-fault=\(otherDeliveredBeforeClear)/\(count) other-done=\(format(otherDone))s"
                + " recovery=\(format(recovery))s duplicates=\(duplicates)")
    }

    /// Waits until the fault has had its effect, so that the window measures it.
    private func waitUntilFaultBit(
        _ harness: FaultHarness, keys: Set<String>, connectionsBefore: Int, injected: ContinuousClock.Instant,
        failing installations: Set<String>, of notification: String, _ api: API
    ) async throws {
        switch fault {
        case .serverErrors, .tooManyRequests:
            // Every device refused at least three times.
            try await waitUntil("three refusals per device", timeout: Self.faultWait) {
                let counts = harness.failureCounts(faulted)
                return keys.allSatisfy { counts[$0, default: 0] >= 3 }
            }
        case .tooManyRequestsRetryAfter, .serviceUnavailableRetryAfter:
            // Every device refused once, and a round more: a provider-wide pause lets a page of the waiting devices
            // through when it ends (those it held back before those it refused), so this takes a few pauses; a
            // device left waiting for good would time this out (the starvation check).
            try await waitUntil("every device refused, and a second round", timeout: Self.faultWait) {
                harness.failureCounts(faulted).keys.count >= keys.count && harness.log(faulted).count > keys.count
            }
        case .goAwayStorm, .connectionResets:
            // The storm goes on while every device gets its notification: delivery under the fault itself.
            try await waitUntil("every device delivered through the storm", timeout: Self.faultWait) {
                harness.delivered(faulted).isSuperset(of: keys)
            }
        case .stall:
            // Herald has its connections (stalled) and its requests time out at least twice on them.
            try await waitUntil("stalled connections", timeout: Self.faultWait) {
                harness.connectionCount(faulted) > connectionsBefore
            }
            try await Task.sleep(until: injected + FaultHarness.requestTimeout * 3)
        case .untrustedCertificate:
            try await waitUntil("three refused handshakes", timeout: Self.faultWait) {
                harness.connectionCount(faulted) >= connectionsBefore + 3
            }
        case .down:
            // Nothing reaches the mock: the ledger shows every device's failed attempt (retrying).
            try await waitUntil("a failed attempt per device", timeout: Self.faultWait) {
                let failed = try await harness.ledger(api, notification: notification)
                    .filter { $0.outcome == "retrying" }.map(\.installationID)
                return installations.isSubset(of: Set(failed))
            }
        }
    }

    /// The most requests (and connections) the failing provider may see in `window` seconds.
    ///
    /// Derivation. Herald retries a device at most `maxAttempts` times in all, so `devices × maxAttempts` is the
    /// hard ceiling whatever the window. Within a window the backoff bounds it tighter:
    /// - with `Retry-After: R` each device waits at least R between attempts (the engine schedules the retry R after
    ///   the batch started, so one attempt of slack): at most `⌊window / R⌋ + 2` per device;
    /// - without it, full jitter draws each wait uniformly in `[0, min(cap, base × 2^(n−1))]`; the mean waits add up
    ///   to `E` attempts in the window (``expectedAttempts(in:retry:)``), and the bound allows `2E + 2` per device
    ///   (the sum over a hundred devices cannot plausibly reach twice its mean);
    /// - GOAWAY and reset storms answer requests too: each engine attempt is at most three wire requests (the pool
    ///   retries a stream refused by GOAWAY on up to `maxAttempts` = 3 connections), so three times the above.
    /// Connections: Herald closes a connection that is not ready (TLS and the server's preface) within the connect
    /// timeout, and an unanswered batch pauses the provider; connections are opened by a batch that finds it
    /// unpaused, at most the pool's size at once: the first `pipelineDepth` batches, then one probe per pause
    /// (``pauses(in:base:cap:)``). Refused TLS handshakes are bounded the same way.
    func requestBound(devices: Int, window: Double, retry: RetryPolicy) -> (requests: Int, connections: Int?) {
        let hard = devices * retry.maxAttempts
        let perDevice: Int
        switch fault {
        case .tooManyRequestsRetryAfter, .serviceUnavailableRetryAfter:
            perDevice = Int(window / Double(Self.retryAfterSeconds)) + 2
        default:
            perDevice = 2 * Self.expectedAttempts(in: window, retry: retry) + 2
        }
        let requests = min(hard, devices * perDevice)
        switch fault {
        case .goAwayStorm, .connectionResets: return (3 * requests, nil)
        // Web Push also probes the origin's ALPN with a connection of its own, once per batch in flight until one
        // probe answers.
        case .stall, .untrustedCertificate:
            let probes = FaultHarness.pipelineDepth + Self.pauses(in: window, base: 0.1, cap: 1)
            // Web Push also probes the origin's ALPN with a connection of its own before each batch it sends there
            // while no probe has answered.
            return (requests, FaultHarness.connections * probes + (faulted == .webpush ? probes : 0))
        default: return (requests, nil)
        }
    }

    /// How many pauses of an unreachable provider begin within `window` seconds: the first at once, each next one
    /// when the one before ends, `base` seconds doubling up to `cap`.
    static func pauses(in window: Double, base: Double, cap: Double) -> Int {
        var elapsed = 0.0
        var count = 0
        while elapsed <= window {
            elapsed += min(cap, base * pow(2, Double(count)))
            count += 1
        }
        return count
    }

    /// The attempts one device makes in `window` seconds while every attempt fails, if every full-jitter wait took
    /// its mean, half of `min(cap, base × 2^(n−1))`.
    static func expectedAttempts(in window: Double, retry: RetryPolicy) -> Int {
        let base = seconds(retry.base)
        let cap = seconds(retry.cap)
        var elapsed = 0.0
        var attempts = 1
        while attempts < retry.maxAttempts {
            elapsed += min(cap, base * pow(2, Double(attempts - 1))) / 2
            if elapsed > window { break }
            attempts += 1
        }
        return attempts
    }
}

/// A registered device: its installation and the key its mock logs it by (token or subscription id).
struct FaultDevice: Sendable {
    var installationID: String
    var key: String
}

/// A ledger row, as `GET /v1/notifications/{id}/deliveries` shows it.
struct LedgerRow: Sendable {
    var installationID: String
    var outcome: String
    var reason: String?
    var attempts: Int
}

/// The app `demo` with APNs, FCM and Web Push clients on mocks, the engine's worker on the wall clock, and the
/// real router.
struct FaultHarness {
    static let topic = "com.example.herald"
    /// `engine.retry`: 100 ms base, 1 s cap, 100 attempts — far more than any fault here can use up, so that a
    /// device never runs out of attempts by the luck of the jitter (nor while the connection pool's own reconnect
    /// backoff, up to 30 s, fails its requests at once after a provider came back).
    static let retry = RetryPolicy(base: .milliseconds(100), cap: .seconds(1), maxAttempts: 100)
    /// The providers' request timeout (Herald's default is 30 s and `herald serve` cannot change it).
    static let requestTimeoutMilliseconds: Int64 = 500
    static let requestTimeout = Duration.milliseconds(requestTimeoutMilliseconds)
    static let connections = 2
    static let pipelineDepth = 4

    let directory: TemporaryDirectory
    let configuration: HeraldConfiguration
    let store: SQLiteStore
    let apps: AppDirectory
    let dispatcher: Dispatcher
    let apns: MockAPNsServer
    let fcm: MockFCMServer
    let push: MockPushService
    let fcmClient: FCMClient
    let vapidKey: VAPIDKey
    /// moto and the proxy in front of it, when the app delivers through SNS.
    let sns: (moto: MotoServer, proxy: FaultInjectingProxy)?
    let transports: AppTransports

    init(
        requestTimeoutMilliseconds: Int64 = Self.requestTimeoutMilliseconds,
        connectTimeoutMilliseconds: Int64 = Self.requestTimeoutMilliseconds,
        unreachablePause: (base: Duration, cap: Duration) = (.milliseconds(100), .seconds(1)), withSNS: Bool = false
    ) async throws {
        directory = try TemporaryDirectory()
        let ca = try TestCertificateAuthority()
        let key = TestAPNsAuthKey()
        apns = try await MockAPNsServer.start(ca: ca, credentials: [key.credential(topics: [Self.topic])])
        let account = TestServiceAccount.shared
        fcm = try await MockFCMServer.start(ca: ca, serviceAccount: account)
        push = try await MockPushService.start(ca: ca)
        let timeout = TimeAmount.milliseconds(requestTimeoutMilliseconds)
        let connectTimeout = TimeAmount.milliseconds(connectTimeoutMilliseconds)
        let apnsClient = try APNsClient(
            configuration: APNsConfiguration(
                environment: .custom(host: "127.0.0.1", port: apns.port),
                authentication: .token(try APNsSigningKey(teamID: key.teamID, keyID: key.keyID, pem: key.p8PEM)),
                trustRoots: [ca.rootCertificate], connections: Self.connections, requestTimeout: timeout,
                connectTimeout: connectTimeout))
        fcmClient = try FCMClient(
            configuration: .init(
                account: try FCMServiceAccount(json: Array(account.json(tokenURI: fcm.tokenURI).utf8)),
                host: "127.0.0.1", port: fcm.port, trustRoots: [ca.rootCertificate], connections: Self.connections,
                requestTimeout: timeout, connectTimeout: connectTimeout))
        vapidKey = VAPIDKey.generate()
        let webPushClient = try WebPushClient(
            configuration: try .init(
                vapidKey: vapidKey, subject: "mailto:ops@example.com", trustRoots: [ca.rootCertificate],
                connectionsPerOrigin: Self.connections, requestTimeout: timeout, connectTimeout: connectTimeout))
        var all: [any Transport] = [
            APNsTransport(production: apnsClient, sandbox: apnsClient, topic: Self.topic),
            FCMTransport(client: fcmClient), WebPushTransport(client: webPushClient),
        ]
        if withSNS {
            do {
                let moto = try await MotoServer.start()
                let proxy = try await FaultInjectingProxy.start(upstream: moto.endpoint)
                sns = (moto, proxy)
                let client = try SNSClient(
                    configuration: .init(
                        region: "us-east-1",
                        credentials: AWSCredentials(accessKeyID: "AKIDFAULTS", secretAccessKey: "x"),
                        endpoint: proxy.endpoint))
                all.append(SNSTransport(client: client, applications: .init()))
                let application = try await client.createPlatformApplication(
                    name: "herald-gcm", platform: .gcm, attributes: ["PlatformCredential": "test-credential"])
                all[all.count - 1] = SNSTransport(client: client, applications: .init(gcm: application))
            } catch {
                // The clients own HTTP clients that must be shut down, even when moto is missing.
                await AppTransports(all).shutdown()
                throw error
            }
        } else {
            sns = nil
        }
        transports = AppTransports(all)
        let cipher = Fixtures.cipher()
        store = try SQLiteStore(path: directory.file("herald.sqlite"), cipher: cipher)
        try await store.migrate()
        configuration = HeraldConfiguration(
            database: .sqlite(path: directory.file("herald.sqlite")),
            apps: [AppConfiguration(id: "demo", serverKey: ServerHarness.serverKey, clientKey: ServerHarness.clientKey)]
        )
        apps = try await AppDirectory(configuration: configuration, store: store)
        dispatcher = Dispatcher(
            store: store, transports: ["demo": transports],
            configuration: EngineConfiguration(
                // Batches of 10: a broadcast of 200 is 20 batches, 4 in flight, each mixing both providers.
                pageSize: 40, pipelineDepth: Self.pipelineDepth, workers: 1, pollInterval: .milliseconds(50),
                retryPolicy: Self.retry, unreachablePause: unreachablePause,
                defaultDeliveryLog: .all, cleanupInterval: nil))
    }

    /// Runs `test` against the router with the engine's worker running.
    func run(_ test: @Sendable (API) async throws -> Void) async throws {
        let router = try HeraldApplication.router(
            configuration: configuration, store: store, apps: apps, dispatcher: dispatcher
        )
        .router
        let worker = Task { [dispatcher] in try? await DispatchWorker(dispatcher: dispatcher, node: "faults").run() }
        defer { worker.cancel() }
        try await Application(router: router).test(.router) { client in try await test(API(client: client)) }
    }

    func stop() async {
        await transports.shutdown()
        try? await apns.shutdown()
        try? await fcm.shutdown()
        try? await push.shutdown()
        try? await sns?.proxy.shutdown()
        sns?.moto.stop()
        directory.remove()
    }

    /// Registers one device of `provider`.
    func register(_ provider: FaultProvider, _ api: API) async throws -> FaultDevice {
        switch provider {
        case .apns:
            let token = Fixtures.apnsToken()
            let id = try await api.register(#"{"platform":"ios","token":"\#(token)"}"#)
            return FaultDevice(installationID: id, key: token)
        case .fcm:
            let token = Fixtures.fcmToken()
            let id = try await api.register(#"{"platform":"android","token":"\#(token)"}"#)
            return FaultDevice(installationID: id, key: token)
        case .webpush:
            let subscription = push.makeSubscription(applicationServerKey: vapidKey.publicKeyBase64URL)
            let id = try await api.register(#"{"platform":"web","subscription":\#(subscription.json)}"#)
            return FaultDevice(installationID: id, key: subscription.id)
        case .sns:
            let response = try await api.call(
                .post, "/v1/installations",
                body: #"{"platform":"android","service":"sns","token":"\#(Fixtures.fcmToken())"}"#)
            guard let id = response.string("id"), let arn = response.string("sns_endpoint_arn") else {
                throw TestFailure("SNS registration: \(response.status) \(String(describing: response.json))")
            }
            return FaultDevice(installationID: id, key: arn)
        }
    }

    /// What the provider's mock received: the device each request named and the status it answered.
    func log(_ provider: FaultProvider) -> [(key: String?, status: Int)] {
        switch provider {
        case .apns: apns.requests.map { ($0.token, $0.status) }
        case .fcm: fcm.requests.map { ($0.token, $0.status) }
        case .webpush: push.requests.map { ($0.subscriptionID, $0.status) }
        case .sns:
            (sns?.proxy.requests ?? []).filter { $0.parameters["Action"] == "Publish" }.map {
                ($0.parameters["TargetArn"], $0.status)
            }
        }
    }

    /// The devices the provider accepted a notification for.
    func delivered(_ provider: FaultProvider) -> Set<String> {
        Set(successCounts(provider).keys)
    }

    /// How many times the provider accepted a notification for each device.
    func successCounts(_ provider: FaultProvider) -> [String: Int] {
        var counts: [String: Int] = [:]
        for entry in log(provider) where entry.status == 200 || entry.status == 201 {
            if let key = entry.key { counts[key, default: 0] += 1 }
        }
        return counts
    }

    /// How many times the provider refused each device.
    func failureCounts(_ provider: FaultProvider) -> [String: Int] {
        var counts: [String: Int] = [:]
        for entry in log(provider) where entry.status != 200 && entry.status != 201 {
            if let key = entry.key { counts[key, default: 0] += 1 }
        }
        return counts
    }

    /// Whether `fault` pauses the provider for the app: a provider-wide `Retry-After`, or no answer at all (a
    /// provider that cannot be reached is paused after each batch it left unanswered). Devices a pause holds back
    /// may be tried first after the fault.
    func pausesProvider(_ provider: FaultProvider, _ fault: ProviderFaultTests.Fault) -> Bool {
        switch (provider, fault) {
        case (.apns, .serviceUnavailableRetryAfter), (.fcm, .serviceUnavailableRetryAfter),
            (.fcm, .tooManyRequestsRetryAfter), (_, .stall), (_, .untrustedCertificate), (_, .down):
            true
        default: false
        }
    }

    /// TCP connections the provider's mock accepted.
    func connectionCount(_ provider: FaultProvider) -> Int {
        switch provider {
        case .apns: apns.connectionCount
        case .fcm: fcm.connectionCount
        case .webpush: push.connectionCount
        case .sns: 0
        }
    }

    func inject(_ fault: ProviderFaultTests.Fault, on provider: FaultProvider, keys: [String]) async throws {
        let retryAfter = FaultScenario.retryAfterSeconds
        if provider == .sns {
            let (status, type, code) =
                fault == .serverErrors ? (500, "Receiver", "InternalFailure") : (400, "Sender", "Throttling")
            sns?.proxy.setFault(
                .init(
                    status: status,
                    body:
                        "<ErrorResponse xmlns=\"http://sns.amazonaws.com/doc/2010-03-31/\"><Error><Type>\(type)</Type>"
                        + "<Code>\(code)</Code><Message>injected</Message></Error><RequestId>fault</RequestId>"
                        + "</ErrorResponse>",
                    headers: [("content-type", "text/xml")], matching: "Action=Publish"))
            return
        }
        switch fault {
        case .serverErrors:
            for (index, key) in keys.enumerated() {
                let five = index.isMultiple(of: 2)
                switch provider {
                case .sns: break
                case .apns: apns.script(token: key, five ? .internalServerError : .serviceUnavailable())
                case .fcm: fcm.script(token: key, five ? .internalError : .unavailable())
                case .webpush: push.script(subscription: key, five ? .internalServerError : .serviceUnavailable())
                }
            }
        case .serviceUnavailableRetryAfter:
            for key in keys {
                switch provider {
                case .sns: break
                case .apns: apns.script(token: key, .serviceUnavailable(retryAfter: retryAfter))
                case .fcm: fcm.script(token: key, .unavailable(retryAfter: retryAfter))
                case .webpush: push.script(subscription: key, .serviceUnavailable(retryAfter: String(retryAfter)))
                }
            }
        case .tooManyRequestsRetryAfter, .tooManyRequests:
            let after = fault == .tooManyRequestsRetryAfter ? retryAfter : nil
            for key in keys {
                switch provider {
                case .sns: break
                case .apns: apns.script(token: key, .tooManyRequests(retryAfter: after))
                case .fcm: fcm.script(token: key, .quotaExceeded(retryAfter: after))
                case .webpush: push.script(subscription: key, .tooManyRequests(retryAfter: after.map(String.init)))
                }
            }
        case .goAwayStorm:
            switch provider {
            case .sns: break
            case .apns: apns.goAway(afterStreams: 5)
            case .fcm: fcm.goAway(afterStreams: 5)
            case .webpush: push.goAway(afterStreams: 5)
            }
        case .connectionResets:
            switch provider {
            case .sns: break
            case .apns: apns.resetConnections(afterStreams: 5)
            case .fcm: fcm.resetConnections(afterStreams: 5)
            case .webpush: push.resetConnections(afterStreams: 5)
            }
        case .stall, .untrustedCertificate:
            let accept: AcceptFault = fault == .stall ? .stall : .untrustedCertificate
            switch provider {
            case .sns: break
            case .apns: try apns.setAcceptFault(accept)
            case .fcm: try fcm.setAcceptFault(accept)
            case .webpush: try push.setAcceptFault(accept)
            }
        case .down:
            switch provider {
            case .sns: break
            case .apns: await apns.stopListening()
            case .fcm: await fcm.stopListening()
            case .webpush: await push.stopListening()
            }
        }
    }

    func clear(_ fault: ProviderFaultTests.Fault, on provider: FaultProvider) async throws {
        if provider == .sns {
            sns?.proxy.setFault(nil)
            return
        }
        switch fault {
        case .serverErrors, .tooManyRequestsRetryAfter, .tooManyRequests, .serviceUnavailableRetryAfter:
            switch provider {
            case .sns: break
            case .apns: apns.clearScripts()
            case .fcm: fcm.clearScripts()
            case .webpush: push.clearScripts()
            }
        case .goAwayStorm, .connectionResets:
            switch provider {
            case .sns: break
            case .apns: apns.clearConnectionScripts()
            case .fcm: fcm.clearConnectionScripts()
            case .webpush: push.clearConnectionScripts()
            }
        case .stall, .untrustedCertificate:
            // A stalled connection stays stalled until someone closes it: Herald only abandons one after its read
            // timeout (30 s, not configurable), so the mock ends them as it recovers.
            switch provider {
            case .sns: break
            case .apns:
                try apns.setAcceptFault(nil)
                apns.closeConnections()
            case .fcm:
                try fcm.setAcceptFault(nil)
                fcm.closeConnections()
            case .webpush:
                try push.setAcceptFault(nil)
                push.closeConnections()
            }
        case .down:
            switch provider {
            case .sns: break
            case .apns: try await apns.resumeListening()
            case .fcm: try await fcm.resumeListening()
            case .webpush: try await push.resumeListening()
            }
        }
    }

    /// Every row of the notification's ledger, page by page.
    func ledger(_ api: API, notification id: String) async throws -> [LedgerRow] {
        var rows: [LedgerRow] = []
        var cursor: String?
        repeat {
            let query = cursor.map { "&cursor=\($0)" } ?? ""
            let page = try await api.call(.get, "/v1/notifications/\(id)/deliveries?limit=1000\(query)")
            guard page.status == .ok else { throw TestFailure("ledger: \(page.status)") }
            for item in page.items {
                let object = item.objectValue ?? [:]
                var attempts = 0
                if case .number(let value)? = object["attempts"] { attempts = value.integerValue.map(Int.init) ?? 0 }
                var reason: String?
                if case .string(let value)? = object["reason"] { reason = value }
                var installation = ""
                if case .string(let value)? = object["installation_id"] { installation = value }
                var outcome = ""
                if case .string(let value)? = object["outcome"] { outcome = value }
                rows.append(
                    LedgerRow(installationID: installation, outcome: outcome, reason: reason, attempts: attempts))
            }
            cursor = page.string("next_cursor")
        } while cursor != nil
        return rows
    }
}

private func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}

private func format(_ value: Double) -> String {
    String(format: "%.2f", value)
}

import Foundation
import HeraldCore
import HeraldProviderMocks
import HeraldTestSupport
import NIOCore
import Synchronization
import Testing

@testable import HeraldAPNs

/// The mock channel management service and the mock APNs on one channel registry, with Herald's channel client and
/// APNs client pointed at them.
struct ChannelClientHarness {
    static let bundleID = "com.example.herald"
    let ca: TestCertificateAuthority
    let key: TestAPNsAuthKey
    let management: MockAPNsChannelServer
    let apns: MockAPNsServer
    let channels: APNsChannelClient
    let client: APNsClient

    /// Starts both mocks, which accept `key`'s tokens for ``bundleID``; the clients sign with `signingKey` (by
    /// default `key`, or the certificate authentication given) on the clock `now`.
    init(
        signingKey: TestAPNsAuthKey? = nil, certificateAuthentication: Bool = false,
        now: @escaping @Sendable () -> Date = Date.init
    ) async throws {
        let ca = try TestCertificateAuthority()
        let key = TestAPNsAuthKey()
        let credentials = [key.credential(topics: [Self.bundleID])]
        let management = try await MockAPNsChannelServer.start(ca: ca, credentials: credentials)
        let apns = try await MockAPNsServer.start(ca: ca, credentials: credentials, channels: management.channels)
        let authentication: APNsConfiguration.Authentication
        if certificateAuthentication {
            let certificate = try ca.apnsCertificate(bundleID: Self.bundleID)
            authentication = .certificate(chain: certificate.chain, key: certificate.privateKey)
        } else {
            let signer = signingKey ?? key
            authentication = .token(try APNsSigningKey(teamID: signer.teamID, keyID: signer.keyID, pem: signer.p8PEM))
        }
        let configuration = { (port: Int) in
            APNsConfiguration(
                environment: .custom(host: "127.0.0.1", port: port), authentication: authentication,
                trustRoots: [ca.rootCertificate], connections: 1, requestTimeout: .seconds(30))
        }
        self.ca = ca
        self.key = key
        self.management = management
        self.apns = apns
        channels = try APNsChannelClient(configuration: configuration(management.port), now: now)
        client = try APNsClient(configuration: configuration(apns.port), now: now)
    }

    /// An ActivityKit update.
    static let update = Array(
        #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":"2-1"}}}"#.utf8)

    func broadcast(to channelID: String, expiration: Date? = nil) -> APNsChannelBroadcast {
        APNsChannelBroadcast(
            bundleID: Self.bundleID, channelID: channelID, priority: .considerate, expiration: expiration,
            payload: Self.update)
    }

    /// Starts a harness, runs `body` with it, and stops it.
    static func run(
        signingKey: TestAPNsAuthKey? = nil, certificateAuthentication: Bool = false,
        now: @escaping @Sendable () -> Date = Date.init, _ body: (ChannelClientHarness) async throws -> Void
    ) async throws {
        let harness = try await ChannelClientHarness(
            signingKey: signingKey, certificateAuthentication: certificateAuthentication, now: now)
        do {
            try await body(harness)
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }

    func stop() async {
        await channels.shutdown()
        await client.shutdown()
        try? await apns.shutdown()
        try? await management.shutdown()
    }
}

@Suite("APNs channel client and broadcasts against the mocks", .serialized)
struct APNsChannelClientTests {
    @Test(
        "A channel is created with each storage policy and reads back with it",
        arguments: APNsChannel.StoragePolicy.allCases)
    func create(policy: APNsChannel.StoragePolicy) async throws {
        try await ChannelClientHarness.run { harness in
            let requestID = UUID()
            let channel = try await harness.channels.createChannel(
                bundleID: ChannelClientHarness.bundleID, storagePolicy: policy, requestID: requestID)
            #expect(channel.storagePolicy == policy && channel.pushType == "LiveActivity")
            #expect(Data(base64Encoded: channel.id) != nil)

            let recorded = try #require(harness.management.requests.first)
            #expect(recorded.method == "POST" && recorded.path == "/1/apps/\(ChannelClientHarness.bundleID)/channels")
            #expect(recorded.status == 201 && recorded.channelID == channel.id)
            #expect(recorded.header("apns-request-id") == requestID.uuidString.lowercased())
            #expect(recorded.authentication == .token(keyID: harness.key.keyID))
            #expect(
                recorded.json
                    == .object([
                        "message-storage-policy": .number(JSONNumber(policy.rawValue)),
                        "push-type": .string("LiveActivity"),
                    ]))
            let stored = try #require(harness.management.channels.channels.first)
            #expect(stored.id == channel.id && stored.messageStoragePolicy.rawValue == policy.rawValue)

            let read = try await harness.channels.channel(channel.id, bundleID: ChannelClientHarness.bundleID)
            #expect(read == channel)
            #expect(harness.management.requests.last?.operation == .read)
        }
    }

    @Test("The list has every channel of the app; a deleted one is gone and cannot be read")
    func listAndDelete() async throws {
        try await ChannelClientHarness.run { harness in
            let bundleID = ChannelClientHarness.bundleID
            let first = try await harness.channels.createChannel(bundleID: bundleID, storagePolicy: .noMessageStored)
            let second = try await harness.channels.createChannel(
                bundleID: bundleID, storagePolicy: .mostRecentMessageStored)
            #expect(try await harness.channels.channels(bundleID: bundleID) == [first.id, second.id])

            try await harness.channels.deleteChannel(first.id, bundleID: bundleID)
            #expect(harness.management.requests.last?.status == 204)
            #expect(try await harness.channels.channels(bundleID: bundleID) == [second.id])

            let error = await #expect(throws: APNsChannelError.self) {
                try await harness.channels.channel(first.id, bundleID: bundleID)
            }
            #expect(error?.code == .rejected)
            #expect(error?.status == 400 && error?.reason == .channelNotRegistered)
            #expect(error?.requestID == harness.management.requests.last?.requestID)

            let again = await #expect(throws: APNsChannelError.self) {
                try await harness.channels.deleteChannel(first.id, bundleID: bundleID)
            }
            #expect(again?.reason == .channelNotRegistered)
        }
    }

    @Test("A broadcast reaches an existing channel with the headers Apple requires, and is refused once it is deleted")
    func broadcast() async throws {
        try await ChannelClientHarness.run { harness in
            let bundleID = ChannelClientHarness.bundleID
            let channel = try await harness.channels.createChannel(
                bundleID: bundleID, storagePolicy: .mostRecentMessageStored)
            let expiration = Date(timeIntervalSince1970: 1_900_000_000)
            var broadcast = harness.broadcast(to: channel.id, expiration: expiration)
            broadcast.requestID = UUID()

            let receipt = try await harness.client.send(broadcast: broadcast)
            #expect(receipt.requestID == broadcast.requestID?.uuidString.lowercased())
            #expect(receipt.uniqueID.flatMap(UUID.init(uuidString:)) != nil)
            let recorded = try #require(harness.apns.requests.first)
            #expect(recorded.path == "/4/broadcasts/apps/\(bundleID)")
            #expect(recorded.channelID == channel.id)
            #expect(recorded.header("apns-push-type") == "liveactivity")
            #expect(recorded.header("apns-priority") == "5")
            #expect(recorded.header("apns-expiration") == "1900000000")
            #expect(recorded.header("apns-topic") == nil)
            #expect(recorded.body == ChannelClientHarness.update)
            #expect(recorded.status == 200)

            try await harness.channels.deleteChannel(channel.id, bundleID: bundleID)
            let error = await #expect(throws: APNsChannelError.self) {
                try await harness.client.send(broadcast: harness.broadcast(to: channel.id))
            }
            #expect(error?.code == .rejected && error?.status == 400)
            #expect(error?.reason == .channelNotRegistered)
            #expect(harness.apns.requests.last?.reason == "ChannelNotRegistered")
        }
    }

    @Test("A No Message Stored channel refuses a broadcast that asks to be stored")
    func storagePolicyAndExpiration() async throws {
        try await ChannelClientHarness.run { harness in
            let channel = try await harness.channels.createChannel(
                bundleID: ChannelClientHarness.bundleID, storagePolicy: .noMessageStored)
            _ = try await harness.client.send(broadcast: harness.broadcast(to: channel.id))
            let error = await #expect(throws: APNsChannelError.self) {
                try await harness.client.send(
                    broadcast: harness.broadcast(to: channel.id, expiration: Date().addingTimeInterval(600)))
            }
            #expect(error?.reason == .badExpirationDate)
        }
    }

    @Test("A key APNs does not know is refused on both hosts with 403 InvalidProviderToken")
    func authenticationFailure() async throws {
        try await ChannelClientHarness.run(signingKey: TestAPNsAuthKey()) { harness in
            let created = await #expect(throws: APNsChannelError.self) {
                try await harness.channels.createChannel(
                    bundleID: ChannelClientHarness.bundleID, storagePolicy: .noMessageStored)
            }
            #expect(created?.code == .rejected && created?.status == 403)
            #expect(created?.reason == .invalidProviderToken)
            #expect(harness.management.channels.channels.isEmpty)

            let channel = try #require(harness.apns.channels.create(bundleID: ChannelClientHarness.bundleID))
            let sent = await #expect(throws: APNsChannelError.self) {
                try await harness.client.send(broadcast: harness.broadcast(to: channel.id))
            }
            #expect(sent?.status == 403 && sent?.reason == .invalidProviderToken)
        }
    }

    @Test("An app the key does not cover gets 403 TopicMismatch")
    func topicMismatch() async throws {
        try await ChannelClientHarness.run { harness in
            let error = await #expect(throws: APNsChannelError.self) {
                try await harness.channels.channels(bundleID: "com.example.stranger")
            }
            #expect(error?.status == 403 && error?.reason == .topicMismatch)
        }
    }

    @Test("An expired provider token is renewed and the request retried once")
    func expiredTokenRenewed() async throws {
        // The first token is signed two hours ago; every later reading of the clock is now.
        let readings = Mutex(0)
        let clock: @Sendable () -> Date = {
            let first = readings.withLock { count in
                count += 1
                return count == 1
            }
            return first ? Date().addingTimeInterval(-7200) : Date()
        }
        try await ChannelClientHarness.run(now: clock) { harness in
            let channel = try await harness.channels.createChannel(
                bundleID: ChannelClientHarness.bundleID, storagePolicy: .noMessageStored)
            #expect(harness.management.requests.map(\.status) == [403, 201])
            #expect(harness.management.requests.first?.reason == "ExpiredProviderToken")
            #expect(harness.management.channels.channels.map(\.id) == [channel.id])
        }
    }

    @Test("A client certificate authenticates channel management and broadcasts")
    func certificateAuthentication() async throws {
        try await ChannelClientHarness.run(certificateAuthentication: true) { harness in
            let channel = try await harness.channels.createChannel(
                bundleID: ChannelClientHarness.bundleID, storagePolicy: .noMessageStored)
            _ = try await harness.client.send(broadcast: harness.broadcast(to: channel.id))
            #expect(harness.management.requests.first?.header("authorization") == nil)
            #expect(
                harness.management.requests.first?.authentication
                    == .certificate(bundleID: ChannelClientHarness.bundleID))
            #expect(harness.apns.requests.first?.status == 200)
        }
    }

    @Test("What APNs would refuse is refused before anything is sent")
    func invalidRequests() async throws {
        try await ChannelClientHarness.run { harness in
            var tooLarge = harness.broadcast(to: "Y2hhbm5lbA==")
            tooLarge.payload = Array(repeating: UInt8(ascii: " "), count: APNsChannelBroadcast.maxPayloadBytes + 1)
            let cases: [() async throws -> Void] = [
                { _ = try await harness.client.send(broadcast: tooLarge) },
                { _ = try await harness.client.send(broadcast: harness.broadcast(to: "")) },
                { _ = try await harness.channels.channels(bundleID: "com.example/../other") },
                { _ = try await harness.channels.channel("", bundleID: ChannelClientHarness.bundleID) },
            ]
            for attempt in cases {
                let error = await #expect(throws: APNsChannelError.self) { try await attempt() }
                #expect(error?.code == .invalidRequest && error?.status == 0)
            }
            #expect(harness.apns.requests.isEmpty && harness.management.requests.isEmpty)
        }
    }
}

@Suite("APNs channel client: hosts and reasons")
struct APNsChannelClientUnitTests {
    @Test("Each environment has Apple's channel management host; a custom one is used as given")
    func origins() {
        let production = APNsChannelClient.origin(of: .production)
        #expect(production.host == "api-manage-broadcast.push.apple.com" && production.port == 2196)
        let sandbox = APNsChannelClient.origin(of: .sandbox)
        #expect(sandbox.host == "api-manage-broadcast.sandbox.push.apple.com" && sandbox.port == 2195)
        let custom = APNsChannelClient.origin(of: .custom(host: "127.0.0.1", port: 8443))
        #expect(custom.host == "127.0.0.1" && custom.port == 8443)
    }

    @Test("Reasons keep their wire spelling; an unknown one is kept as it came")
    func reasons() {
        for reason in APNsChannelReason.documented {
            #expect(APNsChannelReason(wire: reason.wire) == reason)
        }
        #expect(APNsChannelReason(wire: "ChannelNotRegistered") == .channelNotRegistered)
        #expect(APNsChannelReason(wire: "Service Unavailable") == .serviceUnavailable)
        #expect(APNsChannelReason(wire: "SomethingNew") == .unknown("SomethingNew"))
    }
}

import AsyncHTTPClient
import Foundation
import HeraldProviderMocks
import HeraldTestSupport
import NIOHTTP1
import Testing

/// The APNs mock and the channel management mock sharing one channel registry, with a client and a key both accept.
struct BroadcastHarness: Sendable {
    static let bundleID = "com.example.herald"
    /// An app the key covers too, whose channels the tests do not broadcast to.
    static let otherApp = "com.example.other"
    static let update = #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":"2-1"}}}"#

    let ca: TestCertificateAuthority
    let key: TestAPNsAuthKey
    let apns: MockAPNsServer
    let management: MockAPNsChannelServer
    let client: HTTPClient

    var channels: APNsChannelRegistry { management.channels }

    /// Starts both mocks on one registry and a client, runs `body`, then shuts them down.
    static func run(
        limitPerApp: Int = APNsChannelRegistry.appleLimit, _ body: (BroadcastHarness) async throws -> Void
    ) async throws {
        let ca = try TestCertificateAuthority()
        let key = TestAPNsAuthKey(teamID: "TEAM123456", keyID: "KEY1234567")
        let credentials = [key.credential(topics: [bundleID, otherApp])]
        let channels = APNsChannelRegistry(limitPerApp: limitPerApp)
        let management = try await MockAPNsChannelServer.start(ca: ca, credentials: credentials, channels: channels)
        let apns = try await MockAPNsServer.start(ca: ca, credentials: credentials, channels: channels)
        let client = makeHTTPClient(trusting: ca)
        let harness = BroadcastHarness(ca: ca, key: key, apns: apns, management: management, client: client)
        do {
            try await body(harness)
        } catch {
            try? await client.shutdown()
            try? await apns.shutdown()
            try? await management.shutdown()
            throw error
        }
        try await client.shutdown()
        try await apns.shutdown()
        try await management.shutdown()
    }

    /// A broadcast APNs accepts: an update to `channelID`, or to a new No Message Stored channel of the app.
    func broadcast(to channelID: String? = nil) async throws -> APNsRequest {
        var channel = channelID ?? ""
        if channelID == nil { channel = try #require(channels.create(bundleID: Self.bundleID)).id }
        return APNsRequest(
            path: "/4/broadcasts/apps/\(Self.bundleID)",
            headers: [
                ("authorization", "bearer \(try await key.providerToken())"), ("apns-push-type", "liveactivity"),
                ("apns-channel-id", channel), ("apns-priority", "10"), ("apns-expiration", "0"),
            ],
            body: Array(Self.update.utf8))
    }

    /// A channel management request to `/1/apps/<bundle ID>/<resource>` that APNs accepts: a creation by default.
    func management(
        _ method: HTTPMethod = .POST, resource: String = "channels", bundleID: String = Self.bundleID,
        channelID: String? = nil
    ) async throws -> APNsRequest {
        var request = APNsRequest(
            method: method, path: "/1/apps/\(bundleID)/\(resource)",
            headers: [("authorization", "bearer \(try await key.providerToken())")],
            body: method == .POST ? Array(#"{"message-storage-policy":1,"push-type":"LiveActivity"}"#.utf8) : [])
        if let channelID { request.set("apns-channel-id", channelID) }
        return request
    }

    /// Sends `request` to the APNs mock.
    func send(_ request: APNsRequest) async throws -> Reply {
        try await send(request, to: apns)
    }

    /// Sends `request` to the channel management mock.
    func manage(_ request: APNsRequest) async throws -> Reply {
        try await send(request, to: management)
    }

    private func send(_ request: APNsRequest, to server: some MockHTTP2Server) async throws -> Reply {
        try await client.send(
            request.method, server.baseURL + request.path, headers: request.headers,
            body: request.body.isEmpty ? nil : request.body)
    }
}

/// A Live Activity payload to a device, with the answer the mock gives it.
struct LiveActivityPayloadCase: Sendable, CustomTestStringConvertible {
    let name: String
    let aps: String
    /// nil: accepted.
    let reason: String?

    var testDescription: String { "\(name) → \(reason ?? "200")" }

    var body: [UInt8] { Array(#"{"aps":\#(aps)}"#.utf8) }

    static let start =
        #""attributes-type":"MatchAttributes","attributes":{"home":"A","away":"B"},"alert":{"title":"Kick-off"}"#

    static let all: [LiveActivityPayloadCase] = [
        .init(name: "update", aps: #"{"timestamp":1700000000,"event":"update","content-state":{"s":1}}"#, reason: nil),
        .init(name: "end with its final state", aps: #"{"timestamp":1,"event":"end","content-state":{}}"#, reason: nil),
        .init(name: "end without content-state", aps: #"{"timestamp":1,"event":"end"}"#, reason: nil),
        .init(
            name: "start", aps: #"{"timestamp":1,"event":"start","content-state":{},\#(start)}"#, reason: nil),
        .init(
            name: "start with a string alert",
            aps:
                #"{"timestamp":1,"event":"start","content-state":{},"attributes-type":"A","attributes":{},"alert":"Go"}"#,
            reason: nil),
        .init(name: "no timestamp", aps: #"{"event":"update","content-state":{}}"#, reason: "PayloadEmpty"),
        .init(
            name: "timestamp with a fraction", aps: #"{"timestamp":1.5,"event":"update","content-state":{}}"#,
            reason: "PayloadEmpty"),
        .init(
            name: "timestamp as text", aps: #"{"timestamp":"1","event":"update","content-state":{}}"#,
            reason: "PayloadEmpty"),
        .init(name: "no event", aps: #"{"timestamp":1,"content-state":{}}"#, reason: "PayloadEmpty"),
        .init(
            name: "unknown event", aps: #"{"timestamp":1,"event":"pause","content-state":{}}"#, reason: "PayloadEmpty"),
        .init(name: "update without content-state", aps: #"{"timestamp":1,"event":"update"}"#, reason: "PayloadEmpty"),
        .init(
            name: "content-state not an object", aps: #"{"timestamp":1,"event":"update","content-state":[1]}"#,
            reason: "PayloadEmpty"),
        .init(
            name: "end with content-state not an object", aps: #"{"timestamp":1,"event":"end","content-state":2}"#,
            reason: "PayloadEmpty"),
        .init(
            name: "start without content-state", aps: #"{"timestamp":1,"event":"start",\#(start)}"#,
            reason: "PayloadEmpty"),
        .init(
            name: "start without attributes-type",
            aps: #"{"timestamp":1,"event":"start","content-state":{},"attributes":{},"alert":"Go"}"#,
            reason: "PayloadEmpty"),
        .init(
            name: "start without attributes",
            aps: #"{"timestamp":1,"event":"start","content-state":{},"attributes-type":"A","alert":"Go"}"#,
            reason: "PayloadEmpty"),
        .init(
            name: "start without alert",
            aps: #"{"timestamp":1,"event":"start","content-state":{},"attributes-type":"A","attributes":{}}"#,
            reason: "PayloadEmpty"),
    ]
}

/// One change to a request that passes, with the answer APNs documents for it.
struct ChannelFailure: Sendable, CustomTestStringConvertible {
    let name: String
    let status: Int
    let reason: String
    let change: @Sendable (inout APNsRequest, BroadcastHarness) async throws -> Void

    var testDescription: String { "\(name) → \(status) \(reason)" }

    static func body(_ text: String) -> @Sendable (inout APNsRequest, BroadcastHarness) async throws -> Void {
        { request, _ in request.body = Array(text.utf8) }
    }

    /// Changes to a broadcast.
    static let broadcasts: [ChannelFailure] = [
        ChannelFailure(name: "GET", status: 405, reason: "MethodNotAllowed") { request, _ in
            request.method = .GET
            request.body = []
        },
        ChannelFailure(name: "no bundle ID in the path", status: 404, reason: "BadPath") { request, _ in
            request.path = "/4/broadcasts/apps/"
        },
        ChannelFailure(name: "no authorization", status: 403, reason: "MissingProviderToken") { request, _ in
            request.set("authorization", nil)
        },
        ChannelFailure(name: "an app the key does not cover", status: 403, reason: "TopicMismatch") { request, _ in
            request.path = "/4/broadcasts/apps/com.example.stranger"
        },
        ChannelFailure(name: "a push-type suffix on the bundle ID", status: 400, reason: "TopicDisallowed") {
            request, _ in
            request.path = "/4/broadcasts/apps/\(BroadcastHarness.bundleID).push-type.liveactivity"
        },
        ChannelFailure(name: "no apns-channel-id", status: 400, reason: "MissingChannelId") { request, _ in
            request.set("apns-channel-id", nil)
        },
        ChannelFailure(name: "apns-channel-id not base64", status: 400, reason: "BadChannelId") { request, _ in
            request.set("apns-channel-id", "not*base64")
        },
        ChannelFailure(name: "apns-channel-id over 256 characters", status: 400, reason: "BadChannelId") {
            request, _ in
            request.set("apns-channel-id", String(repeating: "A", count: 260))
        },
        ChannelFailure(name: "a channel that was never created", status: 400, reason: "ChannelNotRegistered") {
            request, _ in
            request.set("apns-channel-id", Data("no such channel".utf8).base64EncodedString())
        },
        ChannelFailure(name: "another app's channel", status: 400, reason: "ChannelNotRegistered") { request, harness in
            let other = try #require(harness.channels.create(bundleID: BroadcastHarness.otherApp))
            request.set("apns-channel-id", other.id)
        },
        ChannelFailure(name: "a deleted channel", status: 400, reason: "ChannelNotRegistered") { request, harness in
            let id = try #require(request.headers.first { $0.0 == "apns-channel-id" }?.1)
            harness.channels.delete(id: id, bundleID: BroadcastHarness.bundleID)
        },
        ChannelFailure(name: "no apns-push-type", status: 400, reason: "MissingPushType") { request, _ in
            request.set("apns-push-type", nil)
        },
        ChannelFailure(name: "apns-push-type alert", status: 400, reason: "InvalidPushType") { request, _ in
            request.set("apns-push-type", "alert")
        },
        ChannelFailure(name: "no apns-priority", status: 400, reason: "BadPriority") { request, _ in
            request.set("apns-priority", nil)
        },
        ChannelFailure(name: "apns-priority 7", status: 400, reason: "BadPriority") { request, _ in
            request.set("apns-priority", "7")
        },
        ChannelFailure(name: "no apns-expiration", status: 400, reason: "BadExpirationDate") { request, _ in
            request.set("apns-expiration", nil)
        },
        ChannelFailure(
            name: "a nonzero apns-expiration on a No Message Stored channel", status: 400, reason: "BadExpirationDate"
        ) { request, _ in
            request.set("apns-expiration", "1900000000")
        },
        ChannelFailure(name: "apns-request-id not a UUID", status: 400, reason: "BadMessageId") { request, _ in
            request.set("apns-request-id", "request-1")
        },
        ChannelFailure(name: "a payload over 5,120 bytes", status: 413, reason: "PayloadTooLarge") { request, _ in
            let padding = String(repeating: "x", count: 5121 - BroadcastHarness.update.utf8.count + 8)
            request.body = Array(BroadcastHarness.update.dropLast().utf8) + Array(#","p":"\#(padding)"}"#.utf8)
            #expect(request.body.count > 5120)
        },
        ChannelFailure(name: "no payload", status: 400, reason: "PayloadEmpty", change: body("")),
        ChannelFailure(
            name: "a payload that is not JSON", status: 400, reason: "BadRequestPayload", change: body("{aps")),
        ChannelFailure(name: "a payload without aps", status: 400, reason: "PayloadEmpty", change: body(#"{"a":1}"#)),
        ChannelFailure(
            name: "an update without content-state", status: 400, reason: "PayloadEmpty",
            change: body(#"{"aps":{"timestamp":1,"event":"update"}}"#)),
        ChannelFailure(
            name: "a start, which broadcasts cannot carry", status: 400, reason: "PayloadEmpty",
            change: body(
                #"{"aps":{"timestamp":1,"event":"start","content-state":{},"attributes-type":"A","attributes":{},"alert":"Go"}}"#
            )),
    ]

    /// Changes to a channel creation (the default management request), or other requests in its place.
    static let management: [ChannelFailure] = [
        ChannelFailure(name: "an unknown resource", status: 404, reason: "BadPath") { request, _ in
            request.path = "/1/apps/\(BroadcastHarness.bundleID)/channel"
        },
        ChannelFailure(name: "an unknown version", status: 404, reason: "BadPath") { request, _ in
            request.path = "/2/apps/\(BroadcastHarness.bundleID)/channels"
        },
        ChannelFailure(name: "PUT", status: 405, reason: "MethodNotAllowed") { request, _ in request.method = .PUT },
        ChannelFailure(name: "POST to all-channels", status: 405, reason: "MethodNotAllowed") { request, _ in
            request.path = "/1/apps/\(BroadcastHarness.bundleID)/all-channels"
        },
        ChannelFailure(name: "no authorization", status: 403, reason: "MissingProviderToken") { request, _ in
            request.set("authorization", nil)
        },
        ChannelFailure(name: "an unknown key", status: 403, reason: "InvalidProviderToken") { request, _ in
            let other = TestAPNsAuthKey(teamID: "TEAM123456", keyID: "OTHERKEY00")
            request.set("authorization", "bearer \(try await other.providerToken())")
        },
        ChannelFailure(name: "an expired provider token", status: 403, reason: "ExpiredProviderToken") {
            request, harness in
            let old = try await harness.key.providerToken(issuedAt: Date().addingTimeInterval(-3700))
            request.set("authorization", "bearer \(old)")
        },
        ChannelFailure(name: "an app the key does not cover", status: 403, reason: "TopicMismatch") { request, _ in
            request.path = "/1/apps/com.example.stranger/channels"
        },
        ChannelFailure(name: "a push-type suffix on the bundle ID", status: 400, reason: "TopicDisallowed") {
            request, _ in
            request.path = "/1/apps/\(BroadcastHarness.bundleID).push-type.liveactivity/channels"
        },
        ChannelFailure(name: "apns-request-id not a UUID", status: 400, reason: "BadMessageId") { request, _ in
            request.set("apns-request-id", "request-1")
        },
        ChannelFailure(name: "no body", status: 400, reason: "PayloadEmpty", change: body("")),
        ChannelFailure(name: "a body that is not JSON", status: 400, reason: "BadRequestPayload", change: body("{")),
        ChannelFailure(
            name: "no push-type", status: 400, reason: "MissingPushType",
            change: body(#"{"message-storage-policy":0}"#)),
        ChannelFailure(
            name: "push-type Alert", status: 400, reason: "InvalidPushType",
            change: body(#"{"message-storage-policy":0,"push-type":"Alert"}"#)),
        ChannelFailure(
            name: "no message-storage-policy", status: 400, reason: "BadRequestParams",
            change: body(#"{"push-type":"LiveActivity"}"#)),
        ChannelFailure(
            name: "message-storage-policy 2", status: 400, reason: "BadRequestParams",
            change: body(#"{"message-storage-policy":2,"push-type":"LiveActivity"}"#)),
        ChannelFailure(
            name: "an unknown member", status: 400, reason: "BadRequestParams",
            change: body(#"{"message-storage-policy":0,"push-type":"LiveActivity","name":"final"}"#)),
        ChannelFailure(name: "a read without apns-channel-id", status: 400, reason: "MissingChannelId") {
            request, harness in
            request = try await harness.management(.GET)
        },
        ChannelFailure(name: "a read of a channel ID that is not base64", status: 400, reason: "BadChannelId") {
            request, harness in
            request = try await harness.management(.GET, channelID: "%%%")
        },
        ChannelFailure(name: "a delete without apns-channel-id", status: 400, reason: "MissingChannelId") {
            request, harness in
            request = try await harness.management(.DELETE)
        },
        ChannelFailure(name: "a delete of an unknown channel", status: 400, reason: "ChannelNotRegistered") {
            request, harness in
            request = try await harness.management(.DELETE, channelID: Data("gone".utf8).base64EncodedString())
        },
        ChannelFailure(name: "a read of another app's channel", status: 400, reason: "ChannelNotRegistered") {
            request, harness in
            let other = try #require(harness.channels.create(bundleID: BroadcastHarness.otherApp))
            request = try await harness.management(.GET, channelID: other.id)
        },
    ]
}

@Suite("MockAPNsServer: Live Activity payloads")
struct MockAPNsLiveActivityPayloadTests {
    @Test("An ActivityKit push to a device must carry what its event needs", arguments: LiveActivityPayloadCase.all)
    func payload(_ payload: LiveActivityPayloadCase) async throws {
        try await APNsHarness.run { apns async throws in
            var request = try await apns.request()
            request.set("apns-push-type", "liveactivity")
            request.set("apns-topic", APNsHarness.topic + ".push-type.liveactivity")
            request.body = payload.body
            let reply = try await apns.send(request)
            #expect(reply.status == (payload.reason == nil ? 200 : 400))
            #expect(reply.string("reason") == payload.reason)
            #expect(apns.server.requests.first?.reason == payload.reason)
        }
    }

    @Test("A Live Activity push to the bare bundle ID gets 400 BadTopic")
    func topicSuffix() async throws {
        try await APNsHarness.run { apns async throws in
            var request = try await apns.request()
            request.set("apns-push-type", "liveactivity")
            request.body = LiveActivityPayloadCase.all[0].body
            let reply = try await apns.send(request)
            #expect(reply.status == 400)
            #expect(reply.string("reason") == "BadTopic")
        }
    }
}

@Suite("MockAPNsServer: broadcasts to channels")
struct MockAPNsBroadcastTests {
    @Test("A broadcast to a channel of the app gets 200 with apns-request-id and apns-unique-id, and is recorded")
    func accepted() async throws {
        try await BroadcastHarness.run { harness async throws in
            var request = try await harness.broadcast()
            let channelID = try #require(request.headers.first { $0.0 == "apns-channel-id" }?.1)
            let requestID = UUID().uuidString.lowercased()
            request.set("apns-request-id", requestID)
            let reply = try await harness.send(request)

            #expect(reply.status == 200)
            #expect(reply.body.isEmpty)
            #expect(reply.headers.first(name: "apns-request-id") == requestID)
            #expect(reply.headers.first(name: "apns-unique-id").flatMap(UUID.init(uuidString:)) != nil)
            let recorded = try #require(harness.apns.requests.first)
            #expect(recorded.path == "/4/broadcasts/apps/\(BroadcastHarness.bundleID)")
            #expect(recorded.channelID == channelID)
            #expect(recorded.token == nil)
            #expect(recorded.apnsID == requestID)
            #expect(recorded.status == 200 && recorded.reason == nil)
            #expect(recorded.authentication == .token(keyID: "KEY1234567"))
        }
    }

    @Test("Without apns-request-id the mock makes up a lowercase UUID")
    func generatedRequestID() async throws {
        try await BroadcastHarness.run { harness async throws in
            let reply = try await harness.send(harness.broadcast())
            let id = try #require(reply.headers.first(name: "apns-request-id"))
            #expect(UUID(uuidString: id) != nil && id == id.lowercased())
            #expect(harness.apns.requests.first?.apnsID == id)
        }
    }

    @Test("A Most Recent Message Stored channel takes an expiration; a broadcast payload may be 5 KB; an end passes")
    func storedChannelAndLimits() async throws {
        try await BroadcastHarness.run { harness async throws in
            let stored = try #require(
                harness.channels.create(
                    bundleID: BroadcastHarness.bundleID, messageStoragePolicy: .mostRecentMessageStored)
            )
            var request = try await harness.broadcast(to: stored.id)
            request.set("apns-expiration", "1900000000")
            request.set("apns-priority", "5")
            // The update without its last brace, `,"p":"`, the padding and `"}`.
            let padding = String(repeating: "x", count: 5120 - BroadcastHarness.update.utf8.count - 7)
            request.body = Array(BroadcastHarness.update.dropLast().utf8) + Array(#","p":"\#(padding)"}"#.utf8)
            #expect(request.body.count == 5120)
            #expect(try await harness.send(request).status == 200)

            var end = try await harness.broadcast(to: stored.id)
            end.set("apns-push-type", "LiveActivity")
            end.body = Array(#"{"aps":{"timestamp":1700000001,"event":"end","dismissal-date":1700000100}}"#.utf8)
            #expect(try await harness.send(end).status == 200)
        }
    }

    @Test("Each broadcast check answers with APNs' status and reason", arguments: ChannelFailure.broadcasts)
    func failures(_ failure: ChannelFailure) async throws {
        try await BroadcastHarness.run { harness async throws in
            var request = try await harness.broadcast()
            try await failure.change(&request, harness)
            let reply = try await harness.send(request)

            #expect(reply.status == failure.status)
            #expect(reply.string("reason") == failure.reason)
            #expect(reply.headers.first(name: "apns-request-id") != nil)
            #expect(reply.headers.first(name: "apns-unique-id") == nil)
            let recorded = try #require(harness.apns.requests.first)
            #expect(recorded.status == failure.status && recorded.reason == failure.reason)
        }
    }
}

@Suite("MockAPNsChannelServer: channel management")
struct MockAPNsChannelServerTests {
    @Test(
        "A channel is created with either storage policy, read, listed and deleted as Apple documents",
        arguments: APNsChannelRegistry.MessageStoragePolicy.allCases)
    func lifecycle(policy: APNsChannelRegistry.MessageStoragePolicy) async throws {
        try await BroadcastHarness.run { harness async throws in
            var create = try await harness.management()
            create.body = Array(#"{"message-storage-policy":\#(policy.rawValue),"push-type":"LiveActivity"}"#.utf8)
            let requestID = UUID().uuidString.lowercased()
            create.set("apns-request-id", requestID)
            let created = try await harness.manage(create)
            #expect(created.status == 201)
            #expect(created.body.isEmpty)
            #expect(created.headers.first(name: "apns-request-id") == requestID)
            let id = try #require(created.headers.first(name: "apns-channel-id"))
            #expect(Data(base64Encoded: id) != nil)
            let channel = try #require(harness.channels.channels.first)
            #expect(harness.channels.channels.count == 1)
            #expect(channel.id == id && channel.bundleID == BroadcastHarness.bundleID)
            #expect(channel.messageStoragePolicy == policy)

            let read = try await harness.manage(harness.management(.GET, channelID: id))
            #expect(read.status == 200)
            #expect(read.number("message-storage-policy") == Double(policy.rawValue))
            #expect(read.string("push-type") == "LiveActivity")
            #expect(read.headers.first(name: "apns-request-id") != nil)

            let list = try await harness.manage(harness.management(.GET, resource: "all-channels"))
            #expect(list.status == 200)
            #expect(list.value(at: ["channels"]) as? [String] == [id])

            let deleted = try await harness.manage(harness.management(.DELETE, channelID: id))
            #expect(deleted.status == 204)
            #expect(deleted.body.isEmpty)
            #expect(harness.channels.channels.isEmpty)
            let gone = try await harness.manage(harness.management(.GET, channelID: id))
            #expect(gone.status == 400)
            #expect(gone.string("reason") == "ChannelNotRegistered")
            let empty = try await harness.manage(harness.management(.GET, resource: "all-channels"))
            #expect(empty.value(at: ["channels"]) as? [String] == [])

            let recorded = harness.management.requests
            #expect(recorded.map(\.operation) == [.create, .read, .list, .delete, .read, .list])
            #expect(recorded.map(\.status) == [201, 200, 200, 204, 400, 200])
            #expect(recorded.first?.channelID == id)
            #expect(recorded.first?.requestID == requestID)
            #expect(recorded.allSatisfy { $0.bundleID == BroadcastHarness.bundleID })
        }
    }

    @Test("The list holds only the app's channels")
    func listPerApp() async throws {
        try await BroadcastHarness.run { harness async throws in
            let first = try #require(harness.channels.create(bundleID: BroadcastHarness.bundleID))
            _ = harness.channels.create(bundleID: BroadcastHarness.otherApp)
            let second = try #require(harness.channels.create(bundleID: BroadcastHarness.bundleID))
            let list = try await harness.manage(harness.management(.GET, resource: "all-channels"))
            #expect(list.value(at: ["channels"]) as? [String] == [first.id, second.id])
        }
    }

    @Test("A channel created on the management service takes broadcasts on APNs until it is deleted")
    func sharedRegistry() async throws {
        try await BroadcastHarness.run { harness async throws in
            let created = try await harness.manage(harness.management())
            let id = try #require(created.headers.first(name: "apns-channel-id"))
            #expect(harness.apns.channels === harness.management.channels)

            var broadcast = try await harness.broadcast(to: id)
            broadcast.set("apns-expiration", "1900000000")
            #expect(try await harness.send(broadcast).status == 200)

            #expect(try await harness.manage(harness.management(.DELETE, channelID: id)).status == 204)
            let refused = try await harness.send(broadcast)
            #expect(refused.status == 400)
            #expect(refused.string("reason") == "ChannelNotRegistered")
        }
    }

    @Test("Past the app's channel limit a creation gets 400 CannotCreateChannelConfig")
    func channelLimit() async throws {
        try await BroadcastHarness.run(limitPerApp: 2) { harness async throws in
            #expect(try await harness.manage(harness.management()).status == 201)
            let second = try await harness.manage(harness.management())
            #expect(second.status == 201)
            let refused = try await harness.manage(harness.management())
            #expect(refused.status == 400)
            #expect(refused.string("reason") == "CannotCreateChannelConfig")
            // The limit is per app.
            #expect(try await harness.manage(harness.management(bundleID: BroadcastHarness.otherApp)).status == 201)

            let id = try #require(second.headers.first(name: "apns-channel-id"))
            #expect(try await harness.manage(harness.management(.DELETE, channelID: id)).status == 204)
            #expect(try await harness.manage(harness.management()).status == 201)
        }
    }

    @Test("A client certificate authenticates channel management for its app")
    func certificate() async throws {
        try await BroadcastHarness.run { harness async throws in
            let certifiedApp = "com.example.certified"
            let client = makeHTTPClient(
                trusting: harness.ca, presenting: try harness.ca.apnsCertificate(bundleID: certifiedApp))
            do {
                let body = Array(#"{"message-storage-policy":0,"push-type":"LiveActivity"}"#.utf8)
                let url = harness.management.baseURL + "/1/apps/"
                let created = try await client.send(.POST, url + certifiedApp + "/channels", body: body)
                #expect(created.status == 201)
                let mismatch = try await client.send(.POST, url + BroadcastHarness.bundleID + "/channels", body: body)
                #expect(mismatch.status == 403)
                #expect(mismatch.string("reason") == "TopicMismatch")
            } catch {
                try? await client.shutdown()
                throw error
            }
            try await client.shutdown()
            #expect(harness.management.requests.first?.authentication == .certificate(bundleID: certifiedApp))
            #expect(harness.channels.channels(bundleID: certifiedApp).count == 1)
        }
    }

    @Test("Each channel management check answers with APNs' status and reason", arguments: ChannelFailure.management)
    func failures(_ failure: ChannelFailure) async throws {
        try await BroadcastHarness.run { harness async throws in
            var request = try await harness.management()
            try await failure.change(&request, harness)
            let reply = try await harness.manage(request)

            #expect(reply.status == failure.status)
            #expect(reply.string("reason") == failure.reason)
            #expect(reply.headers.first(name: "apns-request-id") != nil)
            #expect(reply.headers.first(name: "apns-channel-id") == nil)
            let recorded = try #require(harness.management.requests.first)
            #expect(recorded.status == failure.status && recorded.reason == failure.reason)
            #expect(harness.channels.channels(bundleID: BroadcastHarness.bundleID).isEmpty)
        }
    }
}

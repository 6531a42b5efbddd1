import Foundation
import HeraldProviderMocks
import HeraldTestSupport
import NIOHTTP1
import Testing

@Suite("MockAPNsServer: requests, checks and scripts")
struct MockAPNsServerTests {
    @Test("A valid request gets 200 with the request's apns-id and an apns-unique-id, and is recorded")
    func validRequest() async throws {
        try await APNsHarness.run { apns async throws in
            let token = Fixtures.apnsToken()
            var request = try await apns.request(token: token)
            let id = UUID().uuidString
            request.set("apns-id", id)
            request.set("apns-collapse-id", "score")
            let reply = try await apns.send(request)

            #expect(reply.status == 200)
            #expect(reply.body.isEmpty)
            #expect(reply.headers.first(name: "apns-id") == id)
            #expect(reply.headers.first(name: "apns-unique-id").flatMap(UUID.init(uuidString:)) != nil)

            let recorded = try #require(apns.server.requests.first)
            #expect(recorded.token == token)
            #expect(recorded.path == "/3/device/\(token)")
            #expect(recorded.status == 200 && recorded.reason == nil)
            #expect(recorded.apnsID == id)
            #expect(recorded.header("apns-collapse-id") == "score")
            #expect(recorded.body == request.body)
            #expect(recorded.json != nil)
            #expect(recorded.providerToken?.teamID == "TEAM123456")
            #expect(recorded.providerToken?.keyID == "KEY1234567")
            #expect(recorded.connectionID == 1)
        }
    }

    @Test("Without apns-id the mock makes one up")
    func generatedID() async throws {
        try await APNsHarness.run { apns async throws in
            var request = try await apns.request()
            request.set("apns-id", nil)
            let reply = try await apns.send(request)
            #expect(reply.status == 200)
            let id = try #require(reply.headers.first(name: "apns-id"))
            #expect(UUID(uuidString: id) != nil)
            #expect(apns.server.requests.first?.apnsID == id)
        }
    }

    @Test(
        "Every push type is accepted with its topic suffix",
        arguments: [
            ("alert", ""), ("background", ""), ("location", ".location-query"), ("voip", ".voip"),
            ("complication", ".complication"), ("fileprovider", ".pushkit.fileprovider"), ("mdm", ""),
            ("liveactivity", ".push-type.liveactivity"), ("pushtotalk", ".voip-ptt"), ("widgets", ".push-type.widgets"),
        ])
    func pushTypes(pushType: String, suffix: String) async throws {
        try await APNsHarness.run { apns async throws in
            var request = try await apns.request()
            request.set("apns-push-type", pushType)
            request.set("apns-topic", APNsHarness.topic + suffix)
            request.set("apns-priority", "5")
            if pushType == "liveactivity" {
                // An ActivityKit payload has rules of its own (MockAPNsLiveActivityTests).
                request.body = Array(#"{"aps":{"timestamp":1700000000,"event":"update","content-state":{}}}"#.utf8)
            }
            let reply = try await apns.send(request)
            #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
        }
    }

    @Test("VoIP payloads may be 5 KB, others 4 KB")
    func payloadLimits() async throws {
        try await APNsHarness.run { apns async throws in
            let padding = String(repeating: "x", count: 5000)
            var voip = try await apns.request()
            voip.set("apns-push-type", "voip")
            voip.set("apns-topic", APNsHarness.topic + ".voip")
            voip.body = Array(#"{"aps":{},"call":"\#(padding)"}"#.utf8)
            #expect(try await apns.send(voip).status == 200)

            var alert = try await apns.request()
            alert.body = Array(#"{"aps":{"alert":"\#(String(repeating: "y", count: 4076))"}}"#.utf8)
            #expect(alert.body.count == 4096)
            #expect(try await apns.send(alert).status == 200)
        }
    }

    @Test("Each check answers with APNs' status and reason", arguments: APNsFailure.all)
    func failures(_ failure: APNsFailure) async throws {
        try await APNsHarness.run { apns async throws in
            var request = try await apns.request()
            try await failure.change(&request, apns)
            let reply = try await apns.send(request)

            #expect(reply.status == failure.status)
            #expect(reply.string("reason") == failure.reason)
            #expect(reply.headers.first(name: "apns-id") != nil)
            #expect(reply.headers.first(name: "apns-unique-id") == nil)
            let recorded = try #require(apns.server.requests.first)
            #expect(recorded.status == failure.status && recorded.reason == failure.reason)
        }
    }

    @Test("A provider token older than an hour gets 403 ExpiredProviderToken, with its claims recorded")
    func expiredProviderToken() async throws {
        try await APNsHarness.run { apns async throws in
            let old = try await apns.key.providerToken(issuedAt: Date().addingTimeInterval(-3700))
            let reply = try await apns.send(apns.request(providerToken: old))
            #expect(reply.status == 403)
            #expect(reply.string("reason") == "ExpiredProviderToken")
            #expect(apns.server.requests.first?.providerToken?.teamID == "TEAM123456")

            let fresh = try await apns.key.providerToken(issuedAt: Date().addingTimeInterval(-3000))
            #expect(try await apns.send(apns.request(providerToken: fresh)).status == 200)
        }
    }

    @Test("A scripted 410 carries Unregistered and the timestamp in milliseconds")
    func scriptedUnregistered() async throws {
        try await APNsHarness.run { apns async throws in
            let token = Fixtures.apnsToken()
            let since = Date(timeIntervalSince1970: 1_700_000_000.123)
            apns.server.script(token: token, .unregistered(since: since))
            let reply = try await apns.send(token: token)
            #expect(reply.status == 410)
            #expect(reply.string("reason") == "Unregistered")
            #expect(reply.number("timestamp") == 1_700_000_000_123)
            #expect(reply.headers.first(name: "apns-id") != nil)
            // Without `times` the script keeps answering.
            #expect(try await apns.send(token: token).status == 410)
            #expect(try await apns.send().status == 200)
        }
    }

    @Test("Scripts queue per token, count down, and carry Retry-After")
    func scriptQueue() async throws {
        try await APNsHarness.run { apns async throws in
            let token = Fixtures.apnsToken()
            apns.server.script(token: token, .tooManyRequests(retryAfter: 30), times: 2)
            apns.server.script(token: token, .error(status: 500, reason: "InternalServerError"), times: 1)

            let first = try await apns.send(token: token)
            #expect(first.status == 429)
            #expect(first.string("reason") == "TooManyRequests")
            #expect(first.headers.first(name: "retry-after") == "30")
            #expect(try await apns.send(token: token).status == 429)
            #expect(try await apns.send(token: token).status == 500)
            #expect(try await apns.send(token: token).status == 200)

            apns.server.script(token: token, .badDeviceToken)
            apns.server.clearScripts()
            #expect(try await apns.send(token: token).status == 200)
        }
    }

    @Test("A script does not hide a bad request")
    func scriptAfterChecks() async throws {
        try await APNsHarness.run { apns async throws in
            let token = Fixtures.apnsToken()
            apns.server.script(token: token, .unregistered(), times: 1)
            var bad = try await apns.request(token: token)
            bad.set("apns-priority", "7")
            #expect(try await apns.send(bad).string("reason") == "BadPriority")
            #expect(try await apns.send(token: token).status == 410)
        }
    }

    @Test("A scripted delay holds the answer back")
    func scriptedDelay() async throws {
        try await APNsHarness.run { apns async throws in
            let token = Fixtures.apnsToken()
            apns.server.script(token: token, .success(after: .milliseconds(300)), times: 1)
            let clock = ContinuousClock()
            let start = clock.now
            #expect(try await apns.send(token: token).status == 200)
            #expect(clock.now - start >= .milliseconds(300))
        }
    }

    @Test("Concurrent requests share one HTTP/2 connection and are all recorded; waits time out")
    func concurrentRequests() async throws {
        try await APNsHarness.run { apns async throws in
            let jwt = try await apns.key.providerToken()
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<200 {
                    group.addTask { try await apns.send(apns.request(providerToken: jwt)).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.count == 200 && statuses.allSatisfy { $0 == 200 })
            try await apns.server.waitForRequests(count: 200, timeout: .seconds(5))
            #expect(apns.server.requests.count == 200)
            #expect(Set(apns.server.requests.map(\.streamID)).count == 200)

            let error = await #expect(throws: MockServerError.self) {
                try await apns.server.waitForRequests(count: 201, timeout: .milliseconds(100))
            }
            #expect(error?.isTimeout == true)
        }
    }
}

/// One failing APNs check: how to break a valid request, and the answer APNs gives.
struct APNsFailure: Sendable, CustomTestStringConvertible {
    let name: String
    let status: Int
    let reason: String
    let change: @Sendable (inout APNsRequest, APNsHarness) async throws -> Void

    var testDescription: String { "\(name) → \(status) \(reason)" }

    static let all: [APNsFailure] = [
        APNsFailure(name: "GET", status: 405, reason: "MethodNotAllowed") { request, _ in request.method = .GET },
        APNsFailure(name: "unknown path", status: 404, reason: "BadPath") { request, _ in
            request.path = "/3/devices/\(Fixtures.apnsToken())"
        },
        APNsFailure(name: "no token in path", status: 400, reason: "MissingDeviceToken") { request, _ in
            request.path = "/3/device/"
        },
        APNsFailure(name: "token not hex", status: 400, reason: "BadDeviceToken") { request, _ in
            request.path = "/3/device/" + String(repeating: "zz", count: 32)
        },
        APNsFailure(name: "token too short", status: 400, reason: "BadDeviceToken") { request, _ in
            request.path = "/3/device/abcdef"
        },
        APNsFailure(name: "no authorization", status: 403, reason: "MissingProviderToken") { request, _ in
            request.set("authorization", nil)
        },
        APNsFailure(name: "not a JWT", status: 403, reason: "InvalidProviderToken") { request, _ in
            request.set("authorization", "bearer not-a-jwt")
        },
        APNsFailure(name: "unknown key ID", status: 403, reason: "InvalidProviderToken") { request, _ in
            let other = TestAPNsAuthKey(teamID: "TEAM123456", keyID: "OTHERKEY00")
            request.set("authorization", "bearer \(try await other.providerToken())")
        },
        APNsFailure(name: "signed by another key", status: 403, reason: "InvalidProviderToken") { request, _ in
            let forged = TestAPNsAuthKey(teamID: "TEAM123456", keyID: "KEY1234567")
            request.set("authorization", "bearer \(try await forged.providerToken())")
        },
        APNsFailure(name: "another team", status: 403, reason: "InvalidProviderToken") { request, apns in
            let key = TestAPNsAuthKey(teamID: "OTHERTEAM0", keyID: apns.key.keyID, privateKey: apns.key.privateKey)
            request.set("authorization", "bearer \(try await key.providerToken())")
        },
        APNsFailure(name: "topic twice", status: 400, reason: "DuplicateHeaders") { request, _ in
            request.headers.append(("apns-topic", APNsHarness.topic))
        },
        APNsFailure(name: "no topic", status: 400, reason: "MissingTopic") { request, _ in
            request.set("apns-topic", nil)
        },
        APNsFailure(name: "topic of another app", status: 400, reason: "TopicDisallowed") { request, _ in
            request.set("apns-topic", "com.example.other")
        },
        APNsFailure(name: "unknown push type", status: 400, reason: "InvalidPushType") { request, _ in
            request.set("apns-push-type", "banner")
        },
        APNsFailure(name: "voip without .voip topic", status: 400, reason: "BadTopic") { request, _ in
            request.set("apns-push-type", "voip")
        },
        APNsFailure(name: "liveactivity on the bare topic", status: 400, reason: "BadTopic") { request, _ in
            request.set("apns-push-type", "liveactivity")
        },
        APNsFailure(name: "priority 7", status: 400, reason: "BadPriority") { request, _ in
            request.set("apns-priority", "7")
        },
        APNsFailure(name: "expiration not a number", status: 400, reason: "BadExpirationDate") { request, _ in
            request.set("apns-expiration", "tomorrow")
        },
        APNsFailure(name: "collapse ID of 65 bytes", status: 400, reason: "BadCollapseId") { request, _ in
            request.set("apns-collapse-id", String(repeating: "c", count: 65))
        },
        APNsFailure(name: "apns-id not a UUID", status: 400, reason: "BadMessageId") { request, _ in
            request.set("apns-id", "message-1")
        },
        APNsFailure(name: "empty body", status: 400, reason: "PayloadEmpty") { request, _ in request.body = [] },
        APNsFailure(name: "body not JSON", status: 400, reason: "PayloadEmpty") { request, _ in
            request.body = Array("hello".utf8)
        },
        APNsFailure(name: "body without aps", status: 400, reason: "PayloadEmpty") { request, _ in
            request.body = Array(#"{"alert":"hi"}"#.utf8)
        },
        APNsFailure(name: "4097-byte alert", status: 413, reason: "PayloadTooLarge") { request, _ in
            request.body = Array(#"{"aps":{"alert":"\#(String(repeating: "y", count: 4077))"}}"#.utf8)
        },
        APNsFailure(name: "5121-byte voip", status: 413, reason: "PayloadTooLarge") { request, _ in
            request.set("apns-push-type", "voip")
            request.set("apns-topic", APNsHarness.topic + ".voip")
            request.body = Array(#"{"aps":{},"call":"\#(String(repeating: "v", count: 5101))"}"#.utf8)
        },
    ]
}

import Foundation
import HTTPTypes
import HeraldCore
import HeraldProviderMocks
import HeraldSQLite
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import HummingbirdTesting
import NIOCore
import Testing

@testable import HeraldAPI
@testable import HeraldLeanCloud

/// One `curl` request of the LeanCloud push guide (seeds/003), its body exactly as the guide
/// writes it, and the answer Herald gives.
struct SeedRequest: Sendable {
    var method: HTTPRequest.Method
    var path: String
    var status: Int
    /// LeanCloud's error code, for a refusal.
    var code: Int?
    var body: String

    init(_ method: HTTPRequest.Method, _ path: String, status: Int, code: Int?, body: String) {
        self.method = method
        self.path = path
        self.status = status
        self.code = code
        self.body = body
    }
}

@Suite("LeanCloud push guide: every curl request, unchanged but for the host", .serialized)
struct LeanCloudSeedTests {
    /// The guide's requests, in its order. Five bodies are not JSON (a comma is missing: the
    /// silent Android push twice, and the three `where` pushes before `data`): LeanCloud answers
    /// those 107, and so does Herald. The PUT names an objectId of the guide's own app (101); the
    /// geo `$inQuery` push is accepted and reaches nobody (no `_User` here: `LeanCloudTests` sends
    /// it to a user's device); the push whose `expiration_time` is long past is accepted and
    /// expires unsent, as LeanCloud does.
    static let requests: [SeedRequest] = [
        SeedRequest(
            .post, "/1.1/push", status: 400, code: 107,
            body: #"""
                {
                "channels":[ "public"],
                "data": {
                "action": "com.avos.UPDATE_STATUS"
                "name": "avos cloud."
                }
                }
                """#),
        SeedRequest(
            .post, "/1.1/installations", status: 201, code: nil,
            body: #"""
                {
                "deviceType": "ios",
                "deviceToken": "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789",
                "channels": [
                "public", "protected", "private"
                ]
                }
                """#),
        SeedRequest(
            .post, "/1.1/installations", status: 201, code: nil,
            body: #"""
                {
                "deviceType": "android",
                "installationId": "12345678-4312-1234-1234-1234567890ab",
                "channels": [
                "public", "protected", "private"
                ]
                }
                """#),
        SeedRequest(
            .put, "/1.1/installations/mrmBZvsErB", status: 404, code: 101,
            body: #"""
                {
                "channels": [
                "Giants"
                ]
                }
                """#),
        SeedRequest(
            .post, "/1.1/push", status: 200, code: nil,
            body: #"""
                {
                "data": {
                "alert": "Hello From AVOS Cloud."
                }
                }
                """#),
        SeedRequest(
            .post, "/1.1/push", status: 400, code: 107,
            body: #"""
                {
                "where":{
                "channels":
                {"$regex":"\\Qpublic\\E"}
                }
                "data": {
                "alert": "Hello From AVOS Cloud."
                }
                }
                """#),
        SeedRequest(
            .post, "/1.1/push", status: 200, code: nil,
            body: #"""
                {
                "channels":[ "public"],
                "data": {
                "alert": "Hello From AVOS Cloud."
                }
                }
                """#),
        SeedRequest(
            .post, "/1.1/push", status: 400, code: 107,
            body: #"""
                {
                "where":{
                "installationId":"57234d4c-752f-4e78-81ad-a6d14048020d"
                }
                "data": {
                "alert": "Hello From AVOS Cloud."
                }
                }
                """#),
        SeedRequest(
            .post, "/1.1/push", status: 400, code: 107,
            body: #"""
                {
                "where":{
                "updatedAt":{
                "$lt":{"__type":"Date","iso":"2013-06-29T11:33:53.323Z"}
                }
                }
                "data": {
                "alert": "Hello From AVOS Cloud."
                }
                }
                """#),
        SeedRequest(
            .post, "/1.1/push", status: 200, code: nil,
            body: #"""
                {
                "where": {
                "injuryReports": true
                },
                "data": {
                "alert": "Willie Hayes injured by own pop fly."
                }
                }
                """#),
        SeedRequest(
            .post, "/1.1/push", status: 200, code: nil,
            body: #"""
                {
                "where": {
                "owner": {
                "$inQuery": {
                "location": {
                "$nearSphere": {
                "__type": "GeoPoint",
                "latitude": 30.0,
                "longitude": -20.0
                },
                "$maxDistanceInMiles": 1.0
                }
                }
                }
                },
                "data": {
                "alert": "Free hotdogs at the avoscloud concession stand!"
                }
                }
                """#),
        SeedRequest(
            .post, "/1.1/push", status: 200, code: nil,
            body: #"""
                {
                "expiration_time": "2013-12-04T00:51:13Z",
                "data": {
                "alert": "Season tickets on sale until December 4, 2013"
                }
                }
                """#),
        SeedRequest(
            .post, "/1.1/push", status: 200, code: nil,
            body: #"""
                {
                "push_time": "2013-11-28T00:51:13Z",
                "expiration_interval": 518400,
                "data": {
                "alert": "Season tickets on sale until December 4, 2013"
                }
                }
                """#),
        SeedRequest(
            .post, "/1.1/push", status: 200, code: nil,
            body: #"""
                {
                "channels": [
                "Mets"
                ],
                "data": {
                "alert": "The Mets scored! The game is now tied 1-1.",
                "badge": "Increment",
                "sound": "cheering.caf",
                "title": "Mets Score!"
                }
                }
                """#),
        SeedRequest(
            .post, "/1.1/push", status: 400, code: 107,
            body: #"""
                {
                "channels":[ "public"],
                "data": {
                "action": "com.avos.UPDATE_STATUS"
                "name": "avos cloud."
                }
                }
                """#),
    ]

    @Test("Each request gets LeanCloud's answer, and the pushes reach the mock APNs")
    func replay() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects(clientPush: true))
        try await harness.run { api in
            for (index, request) in Self.requests.enumerated() {
                // The guide's headers, its {{appid}} and {{appkey}} filled in.
                let headers: HTTPFields = [
                    HTTPField.Name("X-AVOSCloud-Application-Id")!: LeanCloudClient.appID,
                    HTTPField.Name("X-AVOSCloud-Application-Key")!: LeanCloudClient.appKey,
                    .contentType: "application/json",
                ]
                let response = try await api.client.executeRequest(
                    uri: request.path, method: request.method, headers: headers,
                    body: ByteBuffer(string: request.body))
                let json = try? JSONValue.parse(Array(response.body.readableBytesView))
                let answer = CallResponse(status: response.status, headers: response.headers, json: json)
                #expect(answer.status.code == request.status, "request \(index + 1): \(String(describing: json))")
                if let code = request.code {
                    #expect(answer.leanCloudCode == code, "request \(index + 1)")
                    #expect(answer.string("error") != nil, "request \(index + 1)")
                } else if request.path == "/1.1/push" {
                    #expect(answer.string("objectId") != nil, "request \(index + 1)")
                    #expect(answer.string("createdAt") != nil, "request \(index + 1)")
                } else {
                    #expect(answer.string("objectId") != nil, "request \(index + 1)")
                }
            }
            try await harness.drain()
            // The iOS device of request 2 gets the push to all (5), to channel public (7), and the
            // scheduled one whose push time has passed (13); nothing matches injuryReports or Mets.
            let token = "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
            #expect(harness.apns.requests.count == 3)
            #expect(harness.apns.requests.allSatisfy { $0.token == token })
            let android = try await harness.server.store.installations(
                appID: "demo", deviceID: "12345678-4312-1234-1234-1234567890ab")
            #expect(android.map(\.service) == [.direct])
            #expect(android.first?.channels == ["public", "protected", "private"])
        }
    }
}

import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HeraldGotify

@Suite("Gotify publishing (POST /message)")
struct GotifyTests {
    @Test("A message's fields: message required, priority an integer (number or text), extras an object")
    func fields() throws {
        let message = try GotifyMessage(fields: [
            "message": .string("Backup done"), "title": .string("Backups"), "priority": .string("8"),
            "extras": .object([
                "client::notification": .object([
                    "click": .object(["url": .string("https://x.example/1")]),
                    "bigImageUrl": .string("https://x.example/i.png"),
                ])
            ]),
        ])
        let request = message.sendRequest(to: NotificationTarget(audience: .all), appID: "demo", source: "gotify")
        #expect(request.payload.priority == .high)
        #expect(request.payload.interruptionLevel == .timeSensitive)
        #expect(request.payload.deepLink == "https://x.example/1")
        #expect(request.payload.image == "https://x.example/i.png")
        #expect(try GotifyMessage(fields: ["message": .string("x")]).priority == 0)
        #expect(
            try GotifyMessage(fields: ["message": .string("x")]).sendRequest(
                to: NotificationTarget(audience: .all), appID: "demo", source: "gotify"
            ).payload.title == "demo", "without a title, the application's name")
        for fields: [String: JSONValue] in [
            [:], ["message": .string("")], ["message": .string("x"), "priority": .string("high")],
            ["message": .string("x"), "priority": .number(1.5)], ["message": .string("x"), "extras": .string("x")],
            ["message": .number(1)],
        ] {
            #expect(throws: GotifyError.self) { try GotifyMessage(fields: fields) }
        }
    }

    @Test("Multipart form data as curl -F sends it: text fields read, uploads skipped, a cut body refused")
    func multipart() {
        let body = Array(
            ("--XyZ\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nmy title\r\n"
                + "--XyZ\r\nContent-Disposition: form-data; name=\"message\"\r\n\r\nline one\r\nline two\r\n"
                + "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n"
                + "Content-Type: text/plain\r\n\r\nbytes\r\n--XyZ--\r\n").utf8)
        #expect(
            MultipartForm.fields(body, boundary: "XyZ") == ["title": "my title", "message": "line one\r\nline two"])
        #expect(MultipartForm.fields(Array(body.prefix(60)), boundary: "XyZ") == nil)
        #expect(MultipartForm.fields(body, boundary: "other") == nil)
        #expect(MultipartForm.fields(Array("--XyZ--\r\n".utf8), boundary: "XyZ") == [:])
    }

    @Test(
        "Gotify's documented curl requests (multipart -F, ?token= and X-Gotify-Key) and a JSON one reach the key's target; Gotify's errors"
    )
    func documentationCurl() async throws {
        try await PublishingHarness.withServer(channels: ["alerts"], userID: "ann") { harness, host, token in
            // gotify.net/docs/pushmsg, the host and token replaced (a key bound to everyone of the app).
            let key = ServerHarness.everyonePublishKey
            let first = try await PublishingHarness.curl([
                "-X", "POST", "http://\(host)/message?token=\(key)", "-F", "title=my title", "-F", "message=my message",
                "-F", "priority=5",
            ])
            #expect(first.status == 200, "\(first.body)")
            let answer = try JSONValue.parse(Array(first.body.utf8))
            #expect(answer["title"] == .string("my title"))
            #expect(answer["priority"] == .number(5))
            guard case .number? = answer["id"], case .string(let id)? = answer["extras"]?["herald::notification"]?["id"]
            else { throw TestFailure("not Gotify's message: \(first.body)") }
            let second = try await PublishingHarness.curl([
                "-H", "X-Gotify-Key: \(key)", "http://\(host)/message", "-F", "message=my message", "-F", "priority=8",
            ])
            #expect(second.status == 200, "\(second.body)")
            // A key bound to the user ann, with JSON and extras.
            let json = try await PublishingHarness.curl([
                "-H", "Authorization: Bearer \(ServerHarness.annPublishKey)", "-H", "Content-Type: application/json",
                "http://\(host)/message", "-d",
                #"{"message":"**Backup** was successfully finished.","title":"Backup","priority":2,"extras":{"client::display":{"contentType":"text/markdown"}}}"#,
            ])
            #expect(json.status == 200, "\(json.body)")
            let pushes = try await PublishingHarness.pushes(harness, to: token)
            #expect(pushes.count == 3)
            #expect(pushes.first?["aps"]?["alert"]?["title"] == .string("my title"))
            #expect(pushes.first?["aps"]?["alert"]?["body"] == .string("my message"))
            #expect(pushes.last?["extras"]?["client::display"]?["contentType"] == .string("text/markdown"))
            #expect(try await harness.server.store.notification(id: id)?.source == "gotify")

            // Gotify's errors, changing nothing.
            let unauthorized = try await PublishingHarness.curl([
                "http://\(host)/message?token=\(ServerHarness.serverKey)", "-F", "message=x",
            ])
            #expect(unauthorized.status == 401)
            #expect(unauthorized.body.contains(#""errorCode":401"#), "\(unauthorized.body)")
            let missing = try await PublishingHarness.curl(["http://\(host)/message?token=\(key)", "-F", "title=x"])
            #expect(missing.status == 400)
            #expect(missing.body.contains("Field 'message' is required"), "\(missing.body)")
            let long = try await PublishingHarness.curl([
                "http://\(host)/message?token=\(key)", "-F", "message=" + String(repeating: "x", count: 4_097),
            ])
            #expect(long.status == 400, "a message over 4,096 bytes is a field error, as the OpenAPI says")
            #expect(long.body.contains("Field 'message' is longer than 4096 bytes"), "\(long.body)")
            #expect(try await PublishingHarness.pushes(harness, to: token).count == 3)
        }
    }

    @Test("Apprise's gotify:// notifier: its priority and markdown format reach the device; a wrong token is refused")
    func apprise() async throws {
        try await PublishingHarness.withServer(channels: ["alerts"]) { harness, host, token in
            let sent = try await PublishingHarness.apprise(
                "gotify://\(host)/\(ServerHarness.alertsPublishKey)?priority=high&format=markdown",
                body: "Disk **low**", title: "Server")
            #expect(sent["ok"] == .bool(true), "\(sent)")
            let refused = try await PublishingHarness.apprise("gotify://\(host)/AnotherToken123", body: "no")
            #expect(refused["ok"] == .bool(false))
            let pushes = try await PublishingHarness.pushes(harness, to: token)
            #expect(pushes.count == 1)
            #expect(pushes.first?["aps"]?["alert"]?["title"] == .string("Server"))
            #expect(pushes.first?["aps"]?["alert"]?["body"] == .string("Disk **low**"))
            #expect(pushes.first?["priority"] == .number(8), "Apprise's high is Gotify's 8")
            #expect(pushes.first?["extras"]?["client::display"]?["contentType"] == .string("text/markdown"))
        }
    }
}

@Suite("Gotify publishing over the direct channel")
struct GotifyChannelTests {
    @Test("A key bound to a user reaches the user's direct-only device over its WebSocket")
    func overTheChannel() async throws {
        let harness = try await EngineHarness()
        try await harness.live { api, port in
            let id = try #require(
                try await api.call(
                    .post, "/v1/installations",
                    body:
                        #"{"platform":"desktop","service":"direct","token":"d-\#(UUID().uuidString)","user_id":"ann"}"#
                ).string("id"))
            let channel = try await ChannelTestClient.subscribed(
                api, port: port, installation: id)
            let sent = try await api.call(
                .post, "/message", bearer: ServerHarness.annPublishKey,
                body: #"{"title":"Backup","message":"done","priority":5}"#)
            #expect(sent.status == .ok)
            _ = try await harness.drain()
            let event = await channel.next()?["event"]
            #expect(event?["title"] == .string("Backup"))
            #expect(event?["message"] == .string("done"))
            _ = await channel.close()
        }
    }
}

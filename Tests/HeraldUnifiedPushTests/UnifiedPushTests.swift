import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine
import HeraldProviderMocks
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import HeraldUnifiedPush
import Hummingbird
import HummingbirdTesting
import HummingbirdWebSocket
import NIOCore
import Testing

@testable import HeraldUnifiedPush

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("UnifiedPush (RFC 8030): push endpoints")
struct UnifiedPushTests {
    @Test("RFC 8030's header fields: TTL required, Urgency's four words, Topic up to 32 base64url characters")
    func headerFields() throws {
        let message = try UnifiedPushMessage(body: [1, 2, 3], ttl: "60", urgency: "HIGH", topic: "news_1")
        #expect(message.ttl == 60)
        #expect(message.urgency == .high)
        #expect(message.topic == "news_1")
        #expect(try UnifiedPushMessage(body: [], ttl: "99999999", urgency: nil, topic: nil).ttl == 28 * 86_400)
        #expect(try UnifiedPushMessage(body: [], ttl: "0", urgency: nil, topic: nil).urgency == .normal)
        for (ttl, urgency, topic, field) in [
            (nil, nil, nil, "TTL"), ("-1", nil, nil, "TTL"), ("soon", nil, nil, "TTL"), ("1", "urgent", nil, "Urgency"),
            ("1", nil, "", "Topic"), ("1", nil, String(repeating: "a", count: 33), "Topic"), ("1", nil, "a b", "Topic"),
        ] as [(String?, String?, String?, String)] {
            #expect(throws: HeraldError.self) {
                try UnifiedPushMessage(body: [], ttl: ttl, urgency: urgency, topic: topic)
            }
            do {
                _ = try UnifiedPushMessage(body: [], ttl: ttl, urgency: urgency, topic: topic)
            } catch {
                #expect(error.field == field)
            }
        }
        let endpoint = PushEndpoint(id: "pe_1", appID: "demo", installationID: "i1", createdAt: Date())
        let send = message.sendRequest(to: endpoint, service: .apns, source: "unifiedpush")
        #expect(send.target.audience == .installationIDs(["i1"]))
        #expect(send.target.services == [.apns], "only the device's provider's limit applies")
        #expect(send.payload.data == ["up_endpoint": .string("pe_1"), "up_body": .string("AQID")])
        #expect(send.payload.priority == .high)
        #expect(send.payload.collapseID == "news_1")
        #expect(send.payload.ttl == 60)
        #expect(send.payload.overrides["apns"] == .object(["headers": .object(["apns-priority": .string("5")])]))
        #expect(send.expiration == .after(seconds: 60))
        #expect(send.respectPreferences == false)
        let now = try UnifiedPushMessage(body: [], ttl: "0", urgency: "low", topic: nil).sendRequest(
            to: endpoint, service: .apns, source: "unifiedpush")
        #expect(now.expiration == .after(seconds: 1), "TTL 0: delivered now or dropped")
        #expect(now.payload.priority == .normal)
        #expect(now.payload.data["up_body"] == nil)
    }

    /// Calls a push endpoint as an app server does: raw bytes and RFC 8030's header fields.
    static func post(
        _ api: API, _ url: String, body: [UInt8], ttl: String? = "60", urgency: String? = nil, topic: String? = nil
    ) async throws -> (status: HTTPResponse.Status, headers: HTTPFields, json: JSONValue?) {
        var headers: HTTPFields = [.contentType: "application/octet-stream", .contentEncoding: "aes128gcm"]
        if let ttl { headers[HTTPField.Name("TTL")!] = ttl }
        if let urgency { headers[HTTPField.Name("Urgency")!] = urgency }
        if let topic { headers[HTTPField.Name("Topic")!] = topic }
        let path = URL(string: url)?.path ?? url
        let response = try await api.client.executeRequest(
            uri: path, method: .post, headers: headers, body: ByteBuffer(bytes: body))
        let bytes = Array(response.body.readableBytesView)
        return (response.status, response.headers, bytes.isEmpty ? nil : try? JSONValue.parse(bytes))
    }

    @Test(
        "An endpoint per installation: created by the server key or its user, its message reaches APNs untouched as a data push; 404, 400, 413, 410 and 429"
    )
    func endpointLifecycle() async throws {
        var dialects = DialectSettings()
        dialects.unifiedPush = [
            "demo": UnifiedPushConfiguration(publicBaseURL: "https://push.example.com/", messagesPerMinute: 3)
        ]
        let harness = try await EngineHarness(dialects: dialects)
        try await harness.run { api in
            let token = Fixtures.apnsToken()
            let registered = try await api.call(
                .post, "/v1/installations", body: #"{"platform":"ios","token":"\#(token)","user_id":"ann"}"#)
            let id = try #require(registered.string("id"))

            // Who may make one: the server key or the installation's user; not the client key, nor another user.
            #expect(
                try await api.call(.post, "/v1/installations/\(id)/push-endpoints", bearer: ServerHarness.clientKey)
                    .status == .forbidden)
            let bob = try await harness.server.userToken("bob")
            #expect(
                try await api.call(.post, "/v1/installations/\(id)/push-endpoints", bearer: bob).status == .notFound)
            let created = try await api.call(
                .post, "/v1/installations/\(id)/push-endpoints", bearer: try await harness.server.userToken("ann"))
            #expect(created.status == .created)
            let url = try #require(created.string("endpoint"))
            #expect(url.hasPrefix("https://push.example.com/up/"))
            #expect(url.split(separator: "/").last?.count == 43, "256 bits of base64url")
            let endpointID = try #require(created.string("id"))
            let listed = try await api.call(.get, "/v1/installations/\(id)/push-endpoints")
            #expect(listed["data.0.id"] == .string(endpointID))
            #expect(listed["data.0.endpoint"] == nil, "the URL is shown once")

            // Discovery, and a message.
            let path = URL(string: url)!.path
            #expect(try await api.call(.get, path, bearer: nil)["unifiedpush.version"] == .number(1))
            let body = (0..<200).map { UInt8($0) }
            let sent = try await Self.post(api, url, body: body, ttl: "120", urgency: "high", topic: "chat-7")
            #expect(sent.status == .created)
            let location = try #require(sent.headers[.location])
            #expect(location.hasPrefix(path + "/messages/"))
            #expect(sent.headers[HTTPField.Name("TTL")!] == "120")
            let notificationID = String(location.split(separator: "/").last!)
            _ = try await harness.drain()
            let request = try #require(harness.apns.requests.last)
            #expect(request.token == token)
            #expect(request.json?.objectValue?["up_endpoint"] == .string(endpointID))
            #expect(request.json?.objectValue?["up_body"] == .string(UnifiedPushMessage.base64URL(body)))
            #expect(request.json?.objectValue?["aps"]?.objectValue?["content-available"] == .number(1))
            #expect(request.header("apns-collapse-id") == "chat-7")
            let record = try await api.call(.get, "/v1/notifications/\(notificationID)")
            #expect(record["source"] == .string("unifiedpush"))
            #expect(record["counts.sent"] == .number(1))

            // What RFC 8030 refuses, changing nothing.
            let before = harness.apns.requests.count
            let unknown = "/up/" + PushEndpointSecret().text
            #expect(try await Self.post(api, unknown, body: body).status == .notFound)
            #expect(try await Self.post(api, "/up/short", body: body).status == .notFound)
            let noTTL = try await Self.post(api, url, body: body, ttl: nil)
            #expect(noTTL.status == .badRequest)
            #expect(noTTL.json?.objectValue?["error"]?.objectValue?["field"] == .string("TTL"))
            #expect(try await Self.post(api, url, body: Array(repeating: 7, count: 4_097)).status == .contentTooLarge)
            // Three a minute: the one above was the first, two more pass, the fourth waits.
            #expect(try await Self.post(api, url, body: [1]).status == .created)
            #expect(try await Self.post(api, url, body: [2]).status == .created)
            let limited = try await Self.post(api, url, body: [3])
            #expect(limited.status == .tooManyRequests)
            #expect(limited.headers[.retryAfter] != nil)
            _ = try await harness.drain()
            #expect(harness.apns.requests.count == before + 2)

            // Revoked: 410, and gone from the list.
            #expect(
                try await api.call(.delete, "/v1/installations/\(id)/push-endpoints/\(endpointID)").status == .noContent
            )
            #expect(
                try await api.call(.delete, "/v1/installations/\(id)/push-endpoints/\(endpointID)").status == .notFound)
            #expect(try await Self.post(api, url, body: body).status == .gone)
            #expect(try await api.call(.get, path, bearer: nil).status == .gone)
            #expect(try await api.call(.get, "/v1/installations/\(id)/push-endpoints")["data"] == .array([]))

            // An endpoint whose installation is deleted is gone too.
            let second = try await api.call(.post, "/v1/installations/\(id)/push-endpoints")
            let secondURL = try #require(second.string("endpoint"))
            #expect(try await api.call(.delete, "/v1/installations/\(id)").status == .noContent)
            #expect(try await Self.post(api, secondURL, body: body).status == .gone)
        }
    }

    @Test(
        "Over the direct channel: a connected direct-only device gets the endpoint and the whole 4,096-byte body, base64url, in its event"
    )
    func overTheChannel() async throws {
        let harness = try await EngineHarness()

        try await harness.live { api, port in
            let id = try #require(
                try await api.call(
                    .post, "/v1/installations",
                    body: #"{"platform":"android","service":"direct","token":"device-\#(UUID().uuidString)"}"#
                ).string("id"))
            let channel = try await ChannelTestClient.subscribed(api, port: port, installation: id)
            let created = try await api.call(.post, "/v1/installations/\(id)/push-endpoints")
            let url = try #require(created.string("endpoint"))
            let body = (0..<UnifiedPushMessage.maxBodyBytes).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            #expect(try await Self.post(api, url, body: body, topic: "t1").status == .created)
            _ = try await harness.drain()
            let data = await channel.next()?["event"]?["data"]
            #expect(data?["up_endpoint"] == created["id"])
            #expect(data?["up_body"] == .string(UnifiedPushMessage.base64URL(body)))
            #expect(data?["tag"] == .string("t1"), "the topic is the event's tag")
            _ = await channel.close()
        }
    }

    /// The notification id a `201`'s `Location` names.
    static func notificationID(
        _ sent: (status: HTTPResponse.Status, headers: HTTPFields, json: JSONValue?)
    ) throws
        -> String
    {
        #expect(sent.status == .created)
        return String(try #require(sent.headers[.location]?.split(separator: "/").last))
    }

    @Test(
        "Held by Herald: a Topic replaces the undelivered message, TTL 0 to an offline device is dropped, and an APNs device on its channel takes 4,096 bytes that wait for the channel, never for APNs"
    )
    func heldForTheChannel() async throws {
        let harness = try await EngineHarness()
        let server = harness.server
        try await harness.live { api, port in

            // A direct-only device, offline: the second message of topic "t" replaces the first.
            let direct = try #require(
                try await api.call(
                    .post, "/v1/installations",
                    body: #"{"platform":"android","service":"direct","token":"device-\#(UUID().uuidString)"}"#
                ).string("id"))
            let url = try #require(
                try await api.call(.post, "/v1/installations/\(direct)/push-endpoints").string("endpoint"))
            let first = try Self.notificationID(try await Self.post(api, url, body: [1], ttl: "300", topic: "t"))
            _ = try await harness.drain()
            let second = try Self.notificationID(try await Self.post(api, url, body: [2], ttl: "300", topic: "t"))
            let once = try Self.notificationID(try await Self.post(api, url, body: [3], ttl: "0"))
            _ = try await harness.drain()
            #expect(try await api.call(.get, "/v1/notifications/\(first)")["status"] == .string("canceled"))
            #expect(try await api.call(.get, "/v1/notifications/\(second)")["status"] != .string("canceled"))
            server.clock.advance(by: .seconds(2))
            _ = try await harness.drain()
            let dropped = try await api.call(.get, "/v1/notifications/\(once)")
            #expect(dropped["counts.skipped_expired"] == .number(1), "TTL 0: not delivered later")
            #expect(dropped["counts.sent"] == .number(0))
            let channel = try await ChannelTestClient.subscribed(api, port: port, installation: direct)
            _ = try await harness.drain()
            let event = await channel.next()?["event"]?["data"]
            #expect(event?["up_body"] == .string(UnifiedPushMessage.base64URL([2])), "only the replacement")
            #expect(await channel.next(within: .milliseconds(500)) == nil, "and nothing else")
            _ = await channel.close()

            // An APNs device: 4,096 bytes are too many for APNs, taken while its channel is open.
            let token = Fixtures.apnsToken()
            let phone = try #require(
                try await api.call(.post, "/v1/installations", body: #"{"platform":"ios","token":"\#(token)"}"#)
                    .string("id"))
            let phoneURL = try #require(
                try await api.call(.post, "/v1/installations/\(phone)/push-endpoints").string("endpoint"))
            let large = (0..<UnifiedPushMessage.maxBodyBytes).map { UInt8(truncatingIfNeeded: $0 &* 3) }
            #expect(try await Self.post(api, phoneURL, body: large).status == .contentTooLarge)
            let before = harness.apns.requests.count
            var phoneChannel = try await ChannelTestClient.subscribed(api, port: port, installation: phone)
            let overChannel = try Self.notificationID(try await Self.post(api, phoneURL, body: large))
            _ = try await harness.drain()
            #expect(
                await phoneChannel.next()?["event"]?["data"]?["up_body"]
                    == .string(UnifiedPushMessage.base64URL(large)))
            #expect(try await api.call(.get, "/v1/notifications/\(overChannel)")["counts.sent"] == .number(1))

            // Taken while connected, sent after the channel closed: it waits for the channel.
            let waiting = try Self.notificationID(try await Self.post(api, phoneURL, body: large))
            _ = await phoneChannel.close()
            for _ in 0..<200 where server.dispatcher.channels.isOpen(phone) {
                try await Task.sleep(for: .milliseconds(10))
            }
            _ = try await harness.drain()
            #expect(harness.apns.requests.count == before, "never truncated or sent to APNs")
            #expect(try await api.call(.get, "/v1/notifications/\(waiting)")["status"] != .string("done"))
            phoneChannel = try await ChannelTestClient.subscribed(api, port: port, installation: phone)
            _ = try await harness.drain()
            #expect(
                await phoneChannel.next()?["event"]?["data"]?["up_body"]
                    == .string(UnifiedPushMessage.base64URL(large)))
            #expect(try await api.call(.get, "/v1/notifications/\(waiting)")["counts.sent"] == .number(1))
            _ = await phoneChannel.close()
        }
    }

    /// The largest body an endpoint takes, for each kind of device: found by POSTing (201 or 413).
    static func largestBody(_ api: API, registration: String) async throws -> Int {
        let id = try #require(try await api.call(.post, "/v1/installations", body: registration).string("id"))
        let url = try #require(try await api.call(.post, "/v1/installations/\(id)/push-endpoints").string("endpoint"))
        var (fits, refused) = (0, UnifiedPushMessage.maxBodyBytes + 1)
        while refused - fits > 1 {
            let size = (fits + refused) / 2
            let status = try await Self.post(api, url, body: Array(repeating: 0xA5, count: size)).status
            #expect(status == .created || status == .contentTooLarge, "\(status)")
            if status == .created { fits = size } else { refused = size }
        }
        return fits
    }

    @Test(
        "The largest body: 4,096 bytes to a direct-only device, what the provider's payload limit leaves to APNs and FCM devices"
    )
    func largestBodies() async throws {
        let harness = try await EngineHarness()
        try await harness.run { api in
            let direct = try await Self.largestBody(
                api, registration: #"{"platform":"android","service":"direct","token":"device-\#(UUID().uuidString)"}"#)
            let apns = try await Self.largestBody(
                api, registration: #"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
            let fcm = try await Self.largestBody(
                api, registration: #"{"platform":"android","token":"\#(Fixtures.fcmToken())"}"#)
            #expect(direct == UnifiedPushMessage.maxBodyBytes)
            #expect(apns == UnifiedPushMessage.largestBody[.apns], "APNs: \(apns)")
            #expect(fcm == UnifiedPushMessage.largestBody[.fcm], "FCM: \(fcm)")
        }
    }

    @Test(
        "pywebpush as the app server: its encrypted message reaches APNs and FCM byte for byte and decrypts with the subscription's keys; Urgency and Topic kept; a revoked endpoint is 410 to it"
    )
    func pywebpushSends() async throws {
        let harness = try await EngineHarness()
        let app = Application(router: try harness.server.router().router)
        do {
            try await app.test(.live) { client in
                let port = try #require(client.port)
                let api = API(client: client)
                let token = Fixtures.apnsToken()
                let id = try #require(
                    try await api.call(.post, "/v1/installations", body: #"{"platform":"ios","token":"\#(token)"}"#)
                        .string("id"))
                // Made by a client that sends Host (URLSession; the test client sends none): the endpoint
                // is reachable where the app reached Herald, the request's own host.
                func endpoint(of id: String) async throws -> [String: JSONValue] {
                    var creation = URLRequest(
                        url: URL(string: "http://127.0.0.1:\(port)/v1/installations/\(id)/push-endpoints")!)
                    creation.httpMethod = "POST"
                    creation.setValue("Bearer \(ServerHarness.serverKey)", forHTTPHeaderField: "Authorization")
                    let (data, _) = try await URLSession.shared.data(for: creation)
                    return try #require(try JSONValue.parse(Array(data)).objectValue)
                }
                let created = try await endpoint(of: id)
                func string(_ key: String) -> String? {
                    if case .string(let value)? = created[key] { return value }
                    return nil
                }
                let url = try #require(string("endpoint"))
                #expect(url.hasPrefix("http://127.0.0.1:\(port)/up/"), "\(url)")
                let device = TestUserAgent()
                let message = "New toot from @ann: the gate is open"
                let sent = try await Self.pywebpush(
                    url, device, message: message, ttl: 300, urgency: "high", topic: "toot-42")
                #expect(sent["status"] == .number(201), "\(sent)")
                _ = try await harness.drain()
                let request = try #require(harness.apns.requests.last)
                #expect(request.token == token)
                #expect(request.header("apns-collapse-id") == "toot-42")
                #expect(request.header("apns-priority") == "5", "a background push")
                #expect(request.header("apns-push-type") == "background")
                guard case .string(let body)? = request.json?.objectValue?["up_body"] else {
                    throw TestFailure("no up_body in \(String(describing: request.json))")
                }
                let bytes = try #require(Base64URL.decode(body))
                #expect(String(decoding: try device.decrypt(bytes), as: UTF8.self) == message)

                // An Android device: the same body in the FCM data message.
                let fcmToken = Fixtures.fcmToken()
                let android = try #require(
                    try await api.call(
                        .post, "/v1/installations", body: #"{"platform":"android","token":"\#(fcmToken)"}"#
                    ).string("id"))
                guard case .string(let androidURL)? = try await endpoint(of: android)["endpoint"] else {
                    throw TestFailure("no endpoint for the Android device")
                }
                let phone = TestUserAgent()
                let fcmSent = try await Self.pywebpush(
                    androidURL, phone, message: "Boost from @bob", ttl: 60, urgency: nil, topic: nil)
                #expect(fcmSent["status"] == .number(201), "\(fcmSent)")
                _ = try await harness.drain()
                let fcm = try #require(harness.fcm.requests.last)
                #expect(fcm.json?["message"]?["token"] == .string(fcmToken))
                guard case .string(let fcmBody)? = fcm.json?["message"]?["data"]?["up_body"] else {
                    throw TestFailure("no up_body in \(String(describing: fcm.json))")
                }
                let fcmBytes = try #require(Base64URL.decode(fcmBody))
                #expect(String(decoding: try phone.decrypt(fcmBytes), as: UTF8.self) == "Boost from @bob")

                let endpointID = try #require(string("id"))
                _ = try await api.call(.delete, "/v1/installations/\(id)/push-endpoints/\(endpointID)")
                let refused = try await Self.pywebpush(url, device, message: "again", ttl: 60, urgency: nil, topic: nil)
                #expect(refused["status"] == .number(410), "\(refused)")
            }
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }

    /// One message through `scripts/unifiedpush-send.py` (pywebpush, in `.python/tools`).
    static func pywebpush(
        _ endpoint: String, _ device: TestUserAgent, message: String, ttl: Int, urgency: String?, topic: String?
    ) async throws -> [String: JSONValue] {
        var arguments = try TestPython.tools.command(
            TestPython.script("unifiedpush-send.py"),
            [
                "--endpoint=\(endpoint)", "--p256dh=\(device.p256dh)", "--auth=\(device.auth)", "--message=\(message)",
                "--ttl=\(ttl)",
            ])
        if let urgency { arguments.append("--urgency=\(urgency)") }
        if let topic { arguments.append("--topic=\(topic)") }
        let (status, output, errors) = try await ScriptProcess.run(arguments)
        guard status == 0, let object = try? JSONValue.parse(Array(output.utf8)).objectValue else {
            throw TestFailure("unifiedpush-send.py failed (\(status)): \(output) \(errors)")
        }
        return object
    }
}

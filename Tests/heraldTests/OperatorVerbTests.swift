import Foundation
import HeraldTestSupport
import Testing

private func json(_ text: some StringProtocol) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
}

@Suite("herald send --wait and keys rotate as processes", .serialized)
struct SendWaitAndKeysTests {
    @Test("send --wait: one line per change off a terminal, exit 0 at done; exit 1 when the notification is canceled")
    func sendWait() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = directory.file("herald.sqlite")
        let server = try HeraldProcess(["serve", "--port", "0", "--database", database])
        let address = try await server.line(startingWith: "Herald is listening on ")
        let serverKey = try await server.line(startingWith: "server key: ")
        let listener = try HeraldProcess([
            "listen", "--server", address, "--key", serverKey, "--state", directory.file("listen.json"), "--count", "1",
        ])
        let id = try await listener.line(startingWith: "listening: installation ")
        let sender = try HeraldProcess([
            "send", "--server", address, "--key", serverKey, "--installation-id", id, "--title", "Hi", "--wait",
        ])
        #expect(try await sender.exitStatus() == 0, "\(sender.text)")
        #expect(try await listener.exitStatus() == 0, "\(listener.text)")
        let lines = sender.text.split(separator: "\n")
        #expect(
            lines.contains { $0.hasPrefix("done      targeted 1  sent 1  failed 0  invalid 0  skipped 0") },
            "\(sender.text)")
        #expect(!sender.text.contains("\r"))
        // Each change once: no line repeats.
        let progress = lines.filter { $0.contains(" targeted ") }
        #expect(Set(progress).count == progress.count, "\(sender.text)")
        #expect(lines.last?.contains(#""status":"done""#) == true, "\(sender.text)")

        // Scheduled an hour ahead, then canceled while send waits: exit 1.
        let body = directory.file("later.json")
        let later = Date().addingTimeInterval(3600).formatted(Date.ISO8601FormatStyle())
        try #"{"target":{"all":true},"payload":{"title":"Later"},"push_time":"\#(later)"}"#
            .write(toFile: body, atomically: false, encoding: .utf8)
        let waiting = try HeraldProcess([
            "send", "--server", address, "--key", serverKey, "--body-file", body, "--wait",
        ])
        let accepted = try await waiting.line(startingWith: "{")
        let notification = try #require(try json("{" + accepted)["id"] as? String)
        _ = try await waiting.line(startingWith: "scheduled ")
        let canceled = try await request("DELETE", "\(address)/v1/notifications/\(notification)", bearer: serverKey)
        #expect(canceled.status == 200, "\(canceled.body)")
        #expect(try await waiting.exitStatus() == 1, "\(waiting.text)")
        #expect(waiting.text.contains("\ncanceled  targeted 0"), "\(waiting.text)")

        server.process.terminate()
        #expect(try await server.exitStatus() == 0)
    }

    @Test(
        "listen --unifiedpush: prints an endpoint and a subscription's keys; pywebpush's encrypted message arrives over the channel and is printed decrypted"
    )
    func listenUnifiedPush() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try HeraldProcess(["serve", "--port", "0", "--database", directory.file("herald.sqlite")])
        let address = try await server.line(startingWith: "Herald is listening on ")
        let serverKey = try await server.line(startingWith: "server key: ")
        let listener = try HeraldProcess([
            "listen", "--server", address, "--key", serverKey, "--state", directory.file("listen.json"), "--count", "1",
            "--unifiedpush",
        ])
        let endpoint = try await listener.line(startingWith: "unifiedpush endpoint: ")
        let p256dh = try await listener.line(startingWith: "unifiedpush p256dh: ")
        let auth = try await listener.line(startingWith: "unifiedpush auth: ")
        #expect(endpoint.hasPrefix(address + "/up/"))
        _ = try await listener.line(startingWith: "listening: installation ")
        // The channel subscribes right after that line; a message before it waits for the channel.
        let (status, output, errors) = try await ScriptProcess.run(
            try TestPython.tools.command(
                TestPython.script("unifiedpush-send.py"),
                ["--endpoint=\(endpoint)", "--p256dh=\(p256dh)", "--auth=\(auth)", "--message=Cat café 🐈", "--ttl=60"]))
        #expect(status == 0, "\(output) \(errors)")
        #expect(output.contains(#""status": 201"#), "\(output)")
        #expect(try await listener.exitStatus() == 0, "\(listener.text)")
        #expect(listener.text.contains("unifiedpush message: Cat café 🐈"), "\(listener.text)")
        let kept = try json(try String(contentsOfFile: directory.file("listen.json"), encoding: .utf8))
        #expect((kept["unifiedPush"] as? [String: Any])?["endpoint"] as? String == endpoint, "kept for the next run")
        server.process.terminate()
        #expect(try await server.exitStatus() == 0)
    }

    @Test(
        "send --wait on a terminal redraws one line in place",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func sendWaitOnTerminal() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try HeraldProcess(["serve", "--port", "0", "--database", directory.file("herald.sqlite")])
        let address = try await server.line(startingWith: "Herald is listening on ")
        let serverKey = try await server.line(startingWith: "server key: ")
        // No installation: the notification targets nobody and is done at once.
        let (status, text) = try await runOnTerminal([
            "send", "--server", address, "--key", serverKey, "--all", "--title", "Nobody", "--wait",
        ])
        #expect(status == 0, "\(text)")
        #expect(text.contains("\rdone      targeted 0  sent 0"), "\(text)")
        #expect(text.contains("\u{1B}[K"))
        server.process.terminate()
        #expect(try await server.exitStatus() == 0)
    }

    @Test("keys rotate: new server key printed once; a restarted server refuses the old one and takes the new")
    func rotate() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = directory.file("herald.sqlite")
        var server = try HeraldProcess(["serve", "--port", "0", "--database", database])
        var address = try await server.line(startingWith: "Herald is listening on ")
        let oldServerKey = try await server.line(startingWith: "server key: ")
        let clientKey = try await server.line(startingWith: "client key: ")
        server.process.terminate()
        #expect(try await server.exitStatus() == 0)

        let rotate = try HeraldProcess(["keys", "rotate", "--server", "--database", database])
        #expect(try await rotate.exitStatus() == 0, "\(rotate.text)")
        let newServerKey = try await rotate.line(startingWith: "server key: ")
        #expect(newServerKey.hasPrefix("hsk_") && newServerKey != oldServerKey)
        #expect(!rotate.text.contains("client key: "))
        #expect(rotate.text.contains("kill -HUP"))

        server = try HeraldProcess(["serve", "--port", "0", "--database", database])
        address = try await server.line(startingWith: "Herald is listening on ")
        #expect(!server.text.contains("server key: "))
        #expect(try await request("GET", "\(address)/v1/installations", bearer: oldServerKey).status == 401)
        #expect(try await request("GET", "\(address)/v1/installations", bearer: newServerKey).status == 200)
        let registered = try await request(
            "POST", "\(address)/v1/installations", bearer: clientKey,
            json: #"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
        #expect(registered.status == 201, "the client key was kept: \(registered.body)")
        server.process.terminate()
        #expect(try await server.exitStatus() == 0)

        let show = try HeraldProcess(["keys", "show", "--database", database])
        #expect(try await show.exitStatus() == 0)
        #expect(show.text.contains("server key: \(newServerKey)"))
        #expect(show.text.contains("client key: \(clientKey)"))

        // Keys in the configuration are the configuration's to change.
        let configured = try ShopDeployment(directory, "shop")
        let refused = try await configured.run(["keys", "rotate", "--app", "shop"])
        #expect(refused.status == 1)
        #expect(refused.text.contains("edit app.shop.server_key"), "\(refused.text)")
    }

    @Test("keys rotate on PostgreSQL: both keys replaced; a restarted server takes only the new ones")
    func rotateOnPostgres() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await PostgresTestDatabase.create()
        let config = directory.file("pg.yaml")
        try "database: \(database.url)\nsecret_key: \(ShopDeployment.masterKey)\n"
            .write(toFile: config, atomically: false, encoding: .utf8)
        var server = try HeraldProcess(["serve", "--port", "0", "--config", config])
        _ = try await server.line(startingWith: "Herald is listening on ")
        let oldServerKey = try await server.line(startingWith: "server key: ")
        let oldClientKey = try await server.line(startingWith: "client key: ")
        server.process.terminate()
        #expect(try await server.exitStatus() == 0)

        let rotate = try HeraldProcess(["keys", "rotate", "--both", "--config", config])
        #expect(try await rotate.exitStatus() == 0, "\(rotate.text)")
        let newServerKey = try await rotate.line(startingWith: "server key: ")
        let newClientKey = try await rotate.line(startingWith: "client key: ")
        #expect(newServerKey != oldServerKey && newClientKey != oldClientKey)

        server = try HeraldProcess(["serve", "--port", "0", "--config", config])
        let address = try await server.line(startingWith: "Herald is listening on ")
        #expect(try await request("GET", "\(address)/v1/installations", bearer: oldServerKey).status == 401)
        #expect(try await request("GET", "\(address)/v1/installations", bearer: newServerKey).status == 200)
        let body = #"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#
        #expect(
            try await request("POST", "\(address)/v1/installations", bearer: oldClientKey, json: body).status == 401)
        #expect(
            try await request("POST", "\(address)/v1/installations", bearer: newClientKey, json: body).status == 201)
        server.process.terminate()
        #expect(try await server.exitStatus() == 0)
        try await database.drop()
    }
}

import Foundation
import HeraldProviderMocks
import HeraldTestSupport
import Testing

/// The web console in a real browser: `herald serve` as a process, devices registered through the API
/// and delivered to by the mock APNs, and `scripts/console-browser-test.py` clicking through
/// sign-in, search, history, send (with the live audience count), notifications, provider health,
/// webhooks and dialects in Debian's chromium (chromium-driver, Selenium), saving a screenshot of each page.
@Suite("Web console in a real browser", .serialized)
struct ConsoleBrowserTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test("Sign-in, search, history, send and the overview pages render in chromium")
    func browser() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let ca = try TestCertificateAuthority()
        let key = TestAPNsAuthKey()
        let apns = try await MockAPNsServer.start(ca: ca, credentials: [key.credential(topics: ["com.example.crash"])])
        do {
            try await browse(directory: directory, ca: ca, key: key, apns: apns)
        } catch {
            try? await apns.shutdown()
            throw error
        }
        try await apns.shutdown()
    }

    /// Runs Herald against `apns`, seeds it, and drives the console in chromium.
    private func browse(
        directory: TemporaryDirectory, ca: TestCertificateAuthority, key: TestAPNsAuthKey, apns: MockAPNsServer
    ) async throws {
        let config = try ProviderFixture.config(
            directory: directory, ca: ca, key: key, apnsPort: apns.port, deliveryLog: "all")

        let server = try HeraldProcess(["serve", "--config", config, "--port", "0"])
        defer { if server.process.isRunning { server.process.terminate() } }
        let address = try await server.line(startingWith: "Herald is listening on ")
        let serverKey = try await server.line(startingWith: "server key: ")

        // Four devices; carol's token is refused by APNs, so she turns invalid.
        func register(_ body: String) async throws -> String {
            let response = try await request("POST", "\(address)/v1/installations", bearer: serverKey, json: body)
            #expect(response.status == 201, "\(response.body)")
            return try #require(Self.id(in: response.body))
        }
        // A webhook endpoint for every event, at a name that does not resolve: it fails, its events wait.
        let hook = try await request(
            "POST", "\(address)/v1/webhooks", bearer: serverKey,
            json: #"{"id":"crm","url":"https://hooks.invalid/herald","events":["*"]}"#)
        #expect(hook.status == 201, "\(hook.body)")
        // A template in two languages, for the preview.
        let template = try await request(
            "PUT", "\(address)/v1/templates/welcome", bearer: serverKey,
            json:
                #"{"strict":true,"title":"Welcome {{name}}","body":"Hi {{recipient.attributes.first_name}}","localizations":{"de":{"title":"Willkommen {{name}}"}}}"#
        )
        #expect(template.status == 201, "\(template.body)")
        let aliceToken = Fixtures.apnsToken()
        let bobToken = Fixtures.apnsToken()
        let carolToken = Fixtures.apnsToken()
        apns.script(token: carolToken, .error(status: 400, reason: "BadDeviceToken"))
        let alice = try await register(
            #"{"platform":"ios","token":"\#(aliceToken)","user_id":"alice","channels":["news"]}"#)
        _ = try await register(
            #"{"platform":"android","token":"\#(Fixtures.fcmToken())","user_id":"alice","channels":["sports"]}"#)
        _ = try await register(
            #"{"platform":"ios","token":"\#(bobToken)","user_id":"bob","channels":["news","sports"]}"#)
        let carol = try await register(
            #"{"platform":"ios","token":"\#(carolToken)","user_id":"carol","channels":["news"]}"#)
        let seeded = try await request(
            "POST", "\(address)/v1/notifications", bearer: serverKey,
            json: #"{"target":{"installation_ids":["\#(alice)","\#(carol)"]},"payload":{"title":"Seed"}}"#)
        #expect(seeded.status == 202)
        let seededID = try #require(Self.id(in: seeded.body))
        _ = try await doneRecord(of: seededID, at: address, key: serverKey, timeout: .seconds(20))
        // carol's invalidation, its failed delivery and the seed's completion, each attempted once.
        try await waitUntil("the webhook events' first attempts", timeout: .seconds(20)) {
            let rows = try await request("GET", "\(address)/v1/webhooks/crm/deliveries", bearer: serverKey)
            let object = try JSONSerialization.jsonObject(with: Data(rows.body.utf8)) as? [String: Any]
            let data = object?["data"] as? [[String: Any]] ?? []
            return data.count == 3 && data.allSatisfy { ($0["attempts"] as? Int ?? 0) >= 1 }
        }

        let expect = """
            {"total": 4, "user": ["alice", 2], "channel": ["news", 3], "platform": ["android", 1], "invalid": 1,
             "history": "\(alice)", "history_outcomes": ["delivered"], "users": "alice, bob", "users_count": 3,
             "users_ios": 2, "failure_reason": "BadDeviceToken", "provider": "apns", "webhook": "crm",
             "webhook_backlog": 3, "template": "welcome",
             "webhook_types": ["delivery.failed", "installation.invalidated", "notification.completed"]}
            """
        let screenshots =
            ProcessInfo.processInfo.environment["HERALD_CONSOLE_SCREENSHOTS"]
            ?? Self.root.appendingPathComponent(".build/console-screenshots").path
        try? FileManager.default.removeItem(atPath: screenshots)
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_URL"] = address
        environment["HERALD_SERVER_KEY"] = serverKey
        environment["HERALD_CONSOLE_EXPECT"] = expect
        environment["HERALD_CONSOLE_SCREENSHOTS"] = screenshots
        // Chromium and chromedriver are Debian's, Selenium is in the tools environment: scripts/bootstrap.
        for program in ["chromium", "chromedriver"] {
            let (found, _, _) = try await ScriptProcess.run(["sh", "-c", "command -v \(program)"])
            try #require(found == 0, "\(program) is missing: run scripts/bootstrap (scripts/test runs it)")
        }
        let (status, output, errors) = try await ScriptProcess.run(
            TestPython.tools.command(Self.root.appendingPathComponent("scripts/console-browser-test.py").path),
            environment: environment)
        #expect(status == 0, "the browser test failed:\n\(output)\n\(errors)")
        #expect(output.contains("console browser test passed"))
        for page in [
            "01-sign-in", "02-installations", "03-installations-invalid", "04-history", "05-send-device",
            "06-send-query", "07-notifications", "08-health", "09-dialects", "10-signed-out", "11-webhooks",
            "12-template-preview",
        ] {
            #expect(FileManager.default.fileExists(atPath: "\(screenshots)/\(page).png"), "no screenshot \(page)")
        }
        // The console's sends really went out: alice's device twice more, bob's once.
        let tokens = apns.requests.compactMap(\.token)
        #expect(tokens.filter { $0 == aliceToken }.count == 3)
        #expect(tokens.filter { $0 == bobToken }.count == 1)
        // Nothing secret in the server's log.
        let logs = server.text.split(separator: "\n").filter { !$0.hasPrefix("server key:") }.joined(separator: "\n")
        #expect(!logs.contains(serverKey))
        #expect(!logs.contains("herald_console="))
        server.process.terminate()
        #expect(try await server.exitStatus() == 0)
    }

    /// The `id` member of a JSON object.
    static func id(in body: String) -> String? {
        let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
        return object?["id"] as? String
    }
}

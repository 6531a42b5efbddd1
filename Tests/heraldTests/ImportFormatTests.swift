import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// A database with app `shop`, its keys and master key in configuration.
struct ShopDeployment {
    static let serverKey = "hsk_format-shop-server-key-0000"
    static let masterKey = Data((0..<32).map { UInt8($0 * 3) }).base64EncodedString()
    let config: String

    init(_ directory: TemporaryDirectory, _ name: String) throws {
        config = directory.file("\(name).yaml")
        try """
        database: \(directory.file("\(name).sqlite"))
        secret_key: \(Self.masterKey)
        apps: [shop]
        app:
          shop:
            server_key: \(Self.serverKey)
            client_key: hck_format-shop-client-key-0000
        """.write(toFile: config, atomically: false, encoding: .utf8)
    }

    /// Runs a verb against this deployment and waits for it to exit.
    func run(_ arguments: [String]) async throws -> (status: Int32, text: String) {
        let process = try HeraldProcess(arguments + ["--config", config])
        let status = try await process.exitStatus(timeout: .seconds(120))
        return (status, process.text)
    }

    /// Exports as `format` to a file and returns its text.
    func export(_ format: String, to file: String) async throws -> String {
        let export = try await run(["export", "--format", format, "--output", file])
        #expect(export.status == 0, "\(export.text)")
        return try String(contentsOfFile: file, encoding: .utf8)
    }

    /// Every installation as the API reads it, token whole (through a server started for the call).
    func installations() async throws -> [[String: Any]] {
        let server = try HeraldProcess(["serve", "--config", config, "--port", "0"])
        let address = try await server.line(startingWith: "Herald is listening on ")
        let list = try await request("GET", "\(address)/v1/installations?limit=100", bearer: Self.serverKey)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(list.body.utf8)) as? [String: Any])
        // A list shows a token's suffix only; one installation read shows it whole.
        var installations: [[String: Any]] = []
        for item in try #require(body["data"] as? [[String: Any]], "\(list.body)") {
            let id = try #require(item["id"] as? String)
            let read = try await request("GET", "\(address)/v1/installations/\(id)", bearer: Self.serverKey)
            installations.append(
                try #require(try JSONSerialization.jsonObject(with: Data(read.body.utf8)) as? [String: Any]))
        }
        server.process.terminate()
        #expect(try await server.exitStatus() == 0)
        return installations
    }
}

@Suite("herald import and export formats: CSV, Parse / LeanCloud, gorush", .serialized)
struct ImportFormatTests {
    /// Registers three installations through the API: iOS with profile fields, Android, and Web Push.
    private func populate(_ deployment: ShopDeployment) async throws -> [String] {
        let server = try HeraldProcess(["serve", "--config", deployment.config, "--port", "0"])
        let address = try await server.line(startingWith: "Herald is listening on ")
        let subscription = Fixtures.webPushSubscription()
        let tokens = [Fixtures.apnsToken(), Fixtures.fcmToken()]
        let bodies = [
            #"{"platform":"ios","token":"\#(tokens[0])","user_id":"ann","device_id":"iphone-1","channels":["sale","news"],"locale":"fr_FR","timezone":"Europe/Paris","badge":3,"app_version":"2.1","bundle_id":"com.example.shop","attributes":{"plan":"gold, \"vip\"","n":7}}"#,
            #"{"platform":"android","token":"\#(tokens[1])","user_id":"bob","app_version":"2.0"}"#,
            #"{"platform":"web","subscription":{"endpoint":"\#(subscription.endpoint)","keys":{"p256dh":"\#(subscription.p256dh)","auth":"\#(subscription.auth)"}},"channels":["web"]}"#,
        ]
        for body in bodies {
            let created = try await request(
                "POST", "\(address)/v1/installations", bearer: ShopDeployment.serverKey, json: body)
            #expect(created.status == 201, "\(created.body)")
        }
        server.process.terminate()
        #expect(try await server.exitStatus() == 0)
        return tokens + [subscription.endpoint]
    }

    @Test(
        "CSV: export with a header and tokens in clear, import into a fresh store gives the same CSV; a bad row names its line"
    )
    func csvRoundTrip() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try ShopDeployment(directory, "a")
        let tokens = try await populate(source)
        let file = directory.file("shop.csv")
        let csv = try await source.export("csv", to: file)
        let lines = csv.split(separator: "\n").map(String.init)
        #expect(
            lines.first
                == "user_id,device_id,platform,service,environment,token,subscription,channels,locale,timezone,badge,"
                + "app_version,os_version,device_model,bundle_id,attributes")
        #expect(lines.count == 4, "\(csv)")
        for token in tokens { #expect(csv.contains(token)) }
        #expect(csv.contains("sale;news"))
        let permissions = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? NSNumber
        #expect(permissions?.intValue == 0o600)

        let target = try ShopDeployment(directory, "b")
        let imported = try await target.run(["import", "--format", "csv", "--app", "shop", file])
        #expect(imported.status == 0, "\(imported.text)")
        #expect(
            imported.text.contains("imported 3 installations (3 created, 0 updated, 0 restored)"), "\(imported.text)")
        #expect(try await target.export("csv", to: directory.file("b.csv")) == csv)
        let stored = try await target.installations()
        let ios = try #require(stored.first { $0["platform"] as? String == "ios" })
        #expect(ios["attributes"] as? NSDictionary == ["plan": "gold, \"vip\"", "n": 7] as NSDictionary)
        #expect(ios["channels"] as? [String] == ["sale", "news"])
        #expect(ios["badge"] as? Int == 3)

        // Importing again updates in place; a bad badge stops at its line and writes nothing of its batch.
        let again = try await target.run(["import", "--format", "csv", "--app", "shop", file])
        #expect(again.text.contains("(0 created, 3 updated, 0 restored)"), "\(again.text)")
        let broken = directory.file("broken.csv")
        try """
        platform,token,badge
        ios,\(Fixtures.apnsToken()),1
        ios,\(Fixtures.apnsToken()),many
        """.write(toFile: broken, atomically: false, encoding: .utf8)
        let fresh = try ShopDeployment(directory, "c")
        let refused = try await fresh.run(["import", "--format", "csv", "--app", "shop", broken])
        #expect(refused.status != 0)
        #expect(refused.text.contains("line 3: invalid_value"), "\(refused.text)")
        #expect(refused.text.contains("Column 'badge' must be an integer"), "\(refused.text)")
        let unknown = directory.file("unknown.csv")
        try "platform,tokn\nios,abc\n".write(toFile: unknown, atomically: false, encoding: .utf8)
        let header = try await fresh.run(["import", "--format", "csv", "--app", "shop", unknown])
        #expect(header.status != 0)
        #expect(header.text.contains("line 1: invalid_csv"), "\(header.text)")
        #expect(header.text.contains("Unknown column 'tokn'"), "\(header.text)")
        #expect(try await fresh.installations().isEmpty)
    }

    @Test(
        "Parse: export {results:[…]} with deviceType/deviceToken (Web Push left out), import it back; LeanCloud lines")
    func parseRoundTrip() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try ShopDeployment(directory, "a")
        let tokens = try await populate(source)
        let file = directory.file("_Installation.json")
        let export = try await source.run(["export", "--format", "parse", "--output", file])
        #expect(export.status == 0, "\(export.text)")
        #expect(export.text.contains("exported 2 installations"), "\(export.text)")
        #expect(export.text.contains("1 Web Push or SNS installations left out"), "\(export.text)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
        let results = try #require(document["results"] as? [[String: Any]])
        #expect(results.count == 2)
        let ios = try #require(results.first { $0["deviceType"] as? String == "ios" })
        #expect(ios["deviceToken"] as? String == tokens[0])
        #expect(ios["installationId"] as? String == "iphone-1")
        #expect(ios["localeIdentifier"] as? String == "fr-FR")
        #expect(ios["appIdentifier"] as? String == "com.example.shop")
        #expect(ios["plan"] as? String == "gold, \"vip\"")
        #expect((ios["user"] as? [String: Any])?["objectId"] as? String == "ann")
        let android = try #require(results.first { $0["deviceType"] as? String == "android" })
        #expect(android["deviceToken"] as? String == tokens[1])
        #expect(android["pushType"] as? String == "gcm")

        let target = try ShopDeployment(directory, "b")
        let imported = try await target.run(["import", "--format", "parse", "--app", "shop", file])
        #expect(imported.status == 0, "\(imported.text)")
        #expect(imported.text.contains("imported 2 installations (2 created"), "\(imported.text)")
        let again =
            try JSONSerialization.jsonObject(
                with: Data(try await target.export("parse", to: directory.file("b.json")).utf8)) as? [String: Any]
        let ignored: Set<String> = ["objectId", "createdAt", "updatedAt"]
        func comparable(_ items: [[String: Any]]) -> [NSDictionary] {
            items.map { $0.filter { !ignored.contains($0.key) } as NSDictionary }
                .sorted { ($0["deviceType"] as? String ?? "") < ($1["deviceType"] as? String ?? "") }
        }
        #expect(comparable(try #require(again?["results"] as? [[String: Any]])) == comparable(results))

        // LeanCloud: one object per line; registrationId + vendor fcm, an installationId-only Android
        // device (LeanCloud's own socket: a direct installation), custom fields; then a Windows Phone.
        let lean = directory.file("leancloud.jsonl")
        let fcm = Fixtures.fcmToken()
        try [
            #"{"objectId":"5a1","deviceType":"android","registrationId":"\#(fcm)","vendor":"fcm","installationId":"inst-1","channels":["public"],"timeZone":"Asia/Shanghai","score":12,"createdAt":"2015-06-29T01:33:53.323Z"}"#,
            #"{"objectId":"5a2","deviceType":"android","installationId":"12345678-4312-1234-1234-1234567890ab","badge":2}"#,
            #"{"objectId":"5a3","deviceType":"ios","deviceToken":"\#(Fixtures.apnsToken().uppercased())","apnsTopic":"com.example.lean","user":{"__type":"Pointer","className":"_User","objectId":"u9"}}"#,
        ].joined(separator: "\n").write(toFile: lean, atomically: false, encoding: .utf8)
        let leanTarget = try ShopDeployment(directory, "lean")
        let loaded = try await leanTarget.run(["import", "--format", "parse", "--app", "shop", lean])
        #expect(loaded.status == 0, "\(loaded.text)")
        #expect(loaded.text.contains("imported 3 installations (3 created"), "\(loaded.text)")
        let stored = try await leanTarget.installations()
        let registered = try #require(stored.first { $0["device_id"] as? String == "inst-1" })
        #expect(registered["service"] as? String == "fcm")
        #expect(registered["token"] as? String == fcm)
        #expect(registered["timezone"] as? String == "Asia/Shanghai")
        #expect((registered["attributes"] as? [String: Any])?["score"] as? Int == 12)
        #expect(
            stored.first { $0["device_id"] as? String == "12345678-4312-1234-1234-1234567890ab" }?["service"] as? String
                == "direct")
        let apple = try #require(stored.first { $0["platform"] as? String == "ios" })
        #expect(apple["user_id"] as? String == "u9")
        #expect(apple["bundle_id"] as? String == "com.example.lean")

        let windows = directory.file("windows.jsonl")
        try [
            #"{"deviceType":"ios","deviceToken":"\#(Fixtures.apnsToken())"}"#,
            #"{"deviceType":"wp","subscriptionUri":"x"}"#,
        ]
        .joined(separator: "\n").write(toFile: windows, atomically: false, encoding: .utf8)
        let refused = try await ShopDeployment(directory, "wp").run([
            "import", "--format", "parse", "--app", "shop", windows,
        ])
        #expect(refused.status != 0)
        #expect(refused.text.contains("line 2: unsupported_device_type"), "\(refused.text)")
    }

    @Test(
        "gorush: a request body's tokens (iOS sandbox with its topic, Android) and a token,platform list; Huawei refused"
    )
    func gorushImport() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let ios = [Fixtures.apnsToken(), Fixtures.apnsToken()]
        let android = Fixtures.fcmToken()
        let requestFile = directory.file("gorush.json")
        try """
        {
          "notifications": [
            {"tokens": ["\(ios[0])", "\(ios[1])"], "platform": 1, "message": "Hello", "topic": "com.example.go",
             "development": true},
            {"tokens": ["\(android)"], "platform": 2, "title": "Hi", "message": "Hello"}
          ]
        }
        """.write(toFile: requestFile, atomically: false, encoding: .utf8)
        let target = try ShopDeployment(directory, "a")
        let imported = try await target.run(["import", "--format", "gorush", "--app", "shop", requestFile])
        #expect(imported.status == 0, "\(imported.text)")
        #expect(imported.text.contains("imported 3 installations (3 created"), "\(imported.text)")
        var stored = try await target.installations()
        let apple = stored.filter { $0["service"] as? String == "apns" }
        #expect(Set(apple.compactMap { $0["token"] as? String }) == Set(ios))
        #expect(
            apple.allSatisfy {
                $0["environment"] as? String == "sandbox" && $0["bundle_id"] as? String == "com.example.go"
            })
        #expect(stored.first { $0["service"] as? String == "fcm" }?["token"] as? String == android)

        let list = directory.file("tokens.csv")
        let more = Fixtures.fcmToken()
        try "token,platform\n# exported from our user table\n\(more),android\n\(Fixtures.apnsToken()),1\n"
            .write(toFile: list, atomically: false, encoding: .utf8)
        let listed = try await target.run(["import", "--format", "gorush", "--app", "shop", list])
        #expect(listed.status == 0, "\(listed.text)")
        #expect(listed.text.contains("imported 2 installations (2 created"), "\(listed.text)")
        stored = try await target.installations()
        #expect(stored.count == 5)

        let huawei = directory.file("huawei.json")
        try #"{"notifications":[{"tokens":["\#(Fixtures.fcmToken())"],"platform":2},{"tokens":["abc"],"platform":3}]}"#
            .write(toFile: huawei, atomically: false, encoding: .utf8)
        let refused = try await ShopDeployment(directory, "h").run([
            "import", "--format", "gorush", "--app", "shop", huawei,
        ])
        #expect(refused.status != 0)
        #expect(refused.text.contains("notification 2: unsupported_platform"), "\(refused.text)")
    }
}

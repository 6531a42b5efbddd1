import Foundation
import HeraldTestSupport
import Testing

/// Databases with apps `shop` and `news` and a master key given in configuration.
private struct Deployment {
    static let serverKeys = ["shop": "hsk_export-shop-server-key-000", "news": "hsk_export-news-server-key-000"]
    let config: String

    /// A deployment whose database is `name`.sqlite in `directory` (or the `database` URL given), with
    /// `masterKey` (base64, 32 bytes).
    init(_ directory: TemporaryDirectory, _ name: String, masterKey: String, database: String? = nil) throws {
        config = directory.file("\(name).yaml")
        try """
        database: \(database ?? directory.file("\(name).sqlite"))
        secret_key: \(masterKey)
        apps: [shop, news]
        app:
          shop:
            server_key: \(Self.serverKeys["shop"]!)
            client_key: hck_export-shop-client-key-000
          news:
            server_key: \(Self.serverKeys["news"]!)
            client_key: hck_export-news-client-key-000
        """.write(toFile: config, atomically: false, encoding: .utf8)
    }

    /// Runs a verb against this deployment and waits for it to exit.
    func run(_ arguments: [String]) async throws -> (status: Int32, text: String) {
        let process = try HeraldProcess(arguments + ["--config", config])
        let status = try await process.exitStatus(timeout: .seconds(120))
        return (status, process.text)
    }

    /// Exports every installation to `file` and returns its records, keyed by id.
    func export(to file: String) async throws -> [String: NSDictionary] {
        let export = try await run(["export", "--output", file])
        #expect(export.status == 0, "\(export.text)")
        return try Self.records(in: file)
    }

    /// The JSON objects of a JSON Lines file, by id.
    static func records(in file: String) throws -> [String: NSDictionary] {
        var records: [String: NSDictionary] = [:]
        for line in try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? NSDictionary)
            records[try #require(object["id"] as? String)] = object
        }
        return records
    }

    /// Starts `herald serve` on this deployment; returns the process and its address.
    func serve() async throws -> (HeraldProcess, String) {
        let server = try HeraldProcess(["serve", "--config", config, "--port", "0"])
        return (server, try await server.line(startingWith: "Herald is listening on "))
    }
}

private func object(_ body: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
}

@Suite("herald export and import move installations between stores", .serialized)
struct ExportImportTests {
    static let masterKey = Data((0..<32).map { UInt8($0) }).base64EncodedString()
    static let otherKey = Data((0..<32).map { UInt8(255 - $0) }).base64EncodedString()

    /// Registers installations of both apps through the API, with preferences on two of them.
    /// - Returns: Each installation's id and its token.
    private func populate(_ deployment: Deployment) async throws -> [String: String] {
        let (server, address) = try await deployment.serve()
        let bodies = [
            (
                "shop",
                #"{"platform":"ios","token":"\#(Fixtures.apnsToken())","user_id":"ann","channels":["sale"],"locale":"fr_FR","attributes":{"plan":"gold","n":9007199254740993}}"#
            ),
            (
                "shop",
                #"{"platform":"android","token":"\#(Fixtures.fcmToken())","device_id":"pixel-1","environment":"sandbox","badge":4}"#
            ),
            ("shop", #"{"platform":"ios","token":"\#(Fixtures.apnsToken())","timezone":"Europe/Paris"}"#),
            ("news", #"{"platform":"macos","token":"\#(Fixtures.apnsToken())","user_id":"bob","app_version":"1.2"}"#),
        ]
        var tokens: [String: String] = [:]
        var ids: [String] = []
        for (app, body) in bodies {
            let created = try await request(
                "POST", "\(address)/v1/installations", bearer: Deployment.serverKeys[app], json: body)
            #expect(created.status == 201, "\(created.body)")
            let installation = try object(created.body)
            let id = try #require(installation["id"] as? String)
            ids.append(id)
            tokens[id] = try #require(installation["token"] as? String)
        }
        for (id, app, preferences) in [
            (
                ids[0], "shop",
                #"{"enabled_sources":["orders"],"quiet_hours":{"start":"22:00","end":"07:00","timezone":"Europe/Paris"},"sound_enabled":false,"muted_until":"2030-01-01T00:00:00.25Z"}"#
            ),
            (ids[3], "news", #"{"enabled_categories":[],"quiet_hours_mode":"defer"}"#),
        ] {
            let stored = try await request(
                "PUT", "\(address)/v1/installations/\(id)/preferences", bearer: Deployment.serverKeys[app],
                json: preferences)
            #expect(stored.status == 200, "\(stored.body)")
        }
        server.process.terminate()
        #expect(try await server.exitStatus() == 0)
        return tokens
    }

    @Test(
        "export from one database and import into a fresh one with the same key: same ids, fields, tokens and preferences; no token in the file; idempotent"
    )
    func moveBetweenDatabases() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Deployment(directory, "a", masterKey: Self.masterKey)
        let tokens = try await populate(source)
        let file = directory.file("installations.jsonl")
        let exported = try await source.export(to: file)
        #expect(Set(exported.keys) == Set(tokens.keys))
        let permissions = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? NSNumber
        #expect(permissions?.intValue == 0o600)
        #expect(!FileManager.default.fileExists(atPath: file + ".partial"))
        let text = try String(contentsOfFile: file, encoding: .utf8)
        for token in tokens.values { #expect(!text.contains(token)) }
        for record in exported.values {
            #expect(record["format"] as? String == "herald.installation.v1")
            #expect((record["token"] as? [String: Any])?.keys.sorted() == ["index", "sealed"])
        }
        #expect(exported.values.filter { $0["preferences"] is [String: Any] }.count == 2)

        // One app only, to standard output.
        let news = try await source.run(["export", "--app", "news"])
        #expect(news.status == 0, "\(news.text)")
        #expect(news.text.split(separator: "\n").filter { $0.hasPrefix("{") }.count == 1)
        #expect(news.text.contains("exported 1 installations in "))

        let target = try Deployment(directory, "b", masterKey: Self.masterKey)
        let imported = try await target.run(["import", file])
        #expect(imported.status == 0, "\(imported.text)")
        #expect(imported.text.contains("imported 4 installations (0 created, 0 updated, 4 restored) in "))
        #expect(try await target.export(to: directory.file("b.jsonl")) == exported)

        // The tokens open under the target's key: the API shows each one whole to the server key.
        let (server, address) = try await target.serve()
        for (id, token) in tokens {
            let app = exported[id]?["app_id"] as? String ?? ""
            let read = try await request("GET", "\(address)/v1/installations/\(id)", bearer: Deployment.serverKeys[app])
            #expect(read.status == 200, "\(read.body)")
            #expect(try object(read.body)["token"] as? String == token)
        }
        let preferencesID = try #require(exported.first { $0.value["user_id"] as? String == "ann" }?.key)
        let preferences = try await request(
            "GET", "\(address)/v1/installations/\(preferencesID)/preferences", bearer: Deployment.serverKeys["shop"])
        let stored = try object(preferences.body)
        #expect(stored["enabled_sources"] as? [String] == ["orders"], "\(preferences.body)")
        #expect(stored["sound_enabled"] as? Bool == false)
        #expect(stored["muted_until"] as? String == "2030-01-01T00:00:00.25Z")
        server.process.terminate()
        #expect(try await server.exitStatus() == 0)

        // Importing again replaces each installation by itself.
        let again = try await target.run(["import", file])
        #expect(again.status == 0, "\(again.text)")
        #expect(again.text.contains("imported 4 installations (0 created, 0 updated, 4 restored)"))
        #expect(try await target.export(to: directory.file("b2.jsonl")) == exported)
    }

    @Test(
        "SQLite to PostgreSQL and back: the same records, tokens readable from PostgreSQL, preferences kept"
    )
    func sqliteToPostgres() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await PostgresTestDatabase.create()
        let source = try Deployment(directory, "lite", masterKey: Self.masterKey)
        let tokens = try await populate(source)
        let file = directory.file("from-sqlite.jsonl")
        let exported = try await source.export(to: file)

        let postgres = try Deployment(directory, "pg", masterKey: Self.masterKey, database: database.url)
        let imported = try await postgres.run(["import", file])
        #expect(imported.status == 0, "\(imported.text)")
        #expect(imported.text.contains("imported 4 installations (0 created, 0 updated, 4 restored) in "))
        #expect(try await postgres.export(to: directory.file("from-pg.jsonl")) == exported)
        let (server, address) = try await postgres.serve()
        for (id, token) in tokens {
            let app = exported[id]?["app_id"] as? String ?? ""
            let read = try await request("GET", "\(address)/v1/installations/\(id)", bearer: Deployment.serverKeys[app])
            #expect(try object(read.body)["token"] as? String == token, "\(read.body)")
        }
        server.process.terminate()
        #expect(try await server.exitStatus() == 0)

        // And back into a fresh SQLite file: nothing lost on the round trip.
        let back = try Deployment(directory, "back", masterKey: Self.masterKey)
        #expect(try await back.run(["import", directory.file("from-pg.jsonl")]).status == 0)
        #expect(try await back.export(to: directory.file("back.jsonl")) == exported)
        try await database.drop()
    }

    @Test("import into a store with another master key names the line and writes nothing")
    func anotherMasterKey() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Deployment(directory, "a", masterKey: Self.masterKey)
        let tokens = try await populate(source)
        let file = directory.file("installations.jsonl")
        _ = try await source.export(to: file)

        let stranger = try Deployment(directory, "c", masterKey: Self.otherKey)
        let refused = try await stranger.run(["import", file])
        #expect(refused.status != 0)
        #expect(refused.text.contains("line 1: the token was sealed with another master key"), "\(refused.text)")
        for token in tokens.values { #expect(!refused.text.contains(token)) }
        #expect(try await stranger.export(to: directory.file("c.jsonl")).isEmpty)
    }

    @Test("a bad line stops the import with its number and nothing of its batch written; both kinds of line mix")
    func badLinesAndMixedFiles() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Deployment(directory, "a", masterKey: Self.masterKey)
        _ = try await populate(source)
        let file = directory.file("installations.jsonl")
        _ = try await source.export(to: file)
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map(String.init)

        let target = try Deployment(directory, "d", masterKey: Self.masterKey)
        let broken = directory.file("broken.jsonl")
        try (lines[0..<2] + ["", #"{"format":"herald.installation.v1","id":"x"}"#] + lines[2...])
            .joined(separator: "\n").write(toFile: broken, atomically: false, encoding: .utf8)
        let refused = try await target.run(["import", broken])
        #expect(refused.status != 0)
        #expect(refused.text.contains("line 4: missing_field"), "\(refused.text)")
        #expect(try await target.export(to: directory.file("d.jsonl")).isEmpty)

        let garbage = directory.file("garbage.jsonl")
        try (lines[0..<3] + ["{not json"] + lines[3...]).joined(separator: "\n")
            .write(toFile: garbage, atomically: false, encoding: .utf8)
        let unreadable = try await target.run(["import", garbage, "--batch", "2"])
        #expect(unreadable.status != 0)
        #expect(unreadable.text.contains("line 4: invalid_json"), "\(unreadable.text)")
        #expect(unreadable.text.contains("; 2 installations before it were imported"), "\(unreadable.text)")
        // The full batch before the bad line is written; the bad line's batch (lines 3 and 4) is not.
        #expect(try await target.export(to: directory.file("d2.jsonl")).count == 2)

        let mixed = directory.file("mixed.jsonl")
        let registration = #"{"platform":"ios","token":"\#(Fixtures.apnsToken())","user_id":"cy"}"#
        try [registration, lines[0]].joined(separator: "\n").write(toFile: mixed, atomically: false, encoding: .utf8)
        let fresh = try Deployment(directory, "e", masterKey: Self.masterKey)
        let both = try await fresh.run(["import", mixed, "--app", "news"])
        #expect(both.status == 0, "\(both.text)")
        #expect(both.text.contains("imported 2 installations (1 created, 0 updated, 1 restored)"), "\(both.text)")
        let records = try await fresh.export(to: directory.file("e.jsonl"))
        #expect(records.values.contains { $0["user_id"] as? String == "cy" && $0["app_id"] as? String == "news" })
    }

    @Test(
        "on a terminal, import draws a bar with its rate and time left, export its count and rate",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func progressOnTerminal() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Deployment(directory, "a", masterKey: Self.masterKey)
        _ = try await populate(source)
        let file = directory.file("installations.jsonl")
        let exported = try await onTerminal(["export", "--output", file, "--config", source.config])
        #expect(exported.contains("\r4 installations  "), "\(exported)")
        #expect(exported.contains("/s"))
        #expect(exported.contains("exported 4 installations in "))

        let target = try Deployment(directory, "b", masterKey: Self.masterKey)
        let imported = try await onTerminal(["import", file, "--config", target.config])
        #expect(imported.contains("\r1 installations  "), "\(imported)")
        #expect(imported.contains("/s  [") && imported.contains("%  ETA "), "\(imported)")
        #expect(imported.contains("imported 4 installations (0 created, 0 updated, 4 restored)"))
    }

    /// Runs `herald` on a pseudo-terminal; it must exit 0.
    private func onTerminal(_ arguments: [String]) async throws -> String {
        let (status, text) = try await runOnTerminal(arguments)
        #expect(status == 0, "\(text)")
        return text
    }
}

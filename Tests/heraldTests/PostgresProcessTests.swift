import Foundation
import HeraldProviderMocks
import HeraldTestSupport
import Testing

@Suite("herald on PostgreSQL", .serialized)
struct PostgresProcessTests {
    @Test("migrate needs a shared key; two serve nodes on one database see each other's registrations")
    func twoNodes() async throws {
        let database = try await PostgresTestDatabase.create()
        let refused = try HeraldProcess(["migrate", "--database", database.url])
        #expect(try await refused.exitStatus() != 0)
        #expect(refused.text.contains("secret_key"))

        let key = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let environment = ["HERALD_SECRET_KEY": key, "HERALD_DATABASE": database.url]
        let migrate = try HeraldProcess(["migrate"], environment: environment)
        #expect(try await migrate.exitStatus() == 0)
        // A node with another master key stops before writing anything.
        let otherKey = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let stranger = try HeraldProcess(
            ["migrate"], environment: ["HERALD_SECRET_KEY": otherKey, "HERALD_DATABASE": database.url])
        #expect(try await stranger.exitStatus() != 0)
        #expect(stranger.text.contains("master key"))

        let first = try HeraldProcess(["serve", "--port", "0"], environment: environment)
        let firstAddress = try await first.line(startingWith: "Herald is listening on ")
        let serverKey = try await first.line(startingWith: "server key: ")
        let clientKey = try await first.line(startingWith: "client key: ")
        let second = try HeraldProcess(["serve", "--port", "0"], environment: environment)
        let secondAddress = try await second.line(startingWith: "Herald is listening on ")
        // The second node found the keys the first one stored.
        #expect(!second.text.contains("server key:"))

        #expect(try await request("GET", "\(secondAddress)/readyz").status == 200)
        let token = Fixtures.apnsToken()
        let created = try await request(
            "POST", "\(firstAddress)/v1/installations", bearer: clientKey,
            json: #"{"platform":"ios","token":"\#(token)","channels":["news"]}"#)
        #expect(created.status == 201)
        let listed = try await request("GET", "\(secondAddress)/v1/installations", bearer: serverKey)
        #expect(listed.status == 200)
        #expect(listed.body.contains(String(token.suffix(8))))
        #expect(!listed.body.contains(token))

        first.process.terminate()
        second.process.terminate()
        #expect(try await first.exitStatus() == 0)
        #expect(try await second.exitStatus() == 0)
        for logs in [first.text, second.text] { #expect(!logs.contains(token)) }
        try await database.drop()
    }

    @Test(
        "SIGTERM with open channels and a broadcast under way: the services, the pool and the listeners stop, exit 0; a restart finishes the broadcast"
    )
    func terminateWithChannelsAndBroadcast() async throws {
        let database = try await PostgresTestDatabase.create()
        let directory = try TemporaryDirectory()
        let ca = try TestCertificateAuthority()
        let key = TestAPNsAuthKey()
        let apns = try await MockAPNsServer.start(ca: ca, credentials: [key.credential(topics: ["com.example.crash"])])
        let tokens = (0..<1_000).map { _ in Fixtures.apnsToken() }
        // A slow provider: the broadcast takes seconds, so the stop lands mid-way.
        for token in tokens { apns.script(token: token, .success(after: .milliseconds(40))) }
        let secret = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let config = try ProviderFixture.config(
            directory: directory, ca: ca, key: key, apnsPort: apns.port, pageSize: 100, database: database.url,
            secretKey: secret)
        let importFile = directory.file("devices.jsonl")
        try tokens.map { #"{"platform":"ios","token":"\#($0)"}"# }.joined(separator: "\n")
            .write(toFile: importFile, atomically: false, encoding: .utf8)
        let importer = try HeraldProcess(["import", importFile, "--config", config])
        #expect(try await importer.exitStatus(timeout: .seconds(300)) == 0, "\(importer.text)")

        let server = try HeraldProcess(["serve", "--config", config, "--port", "0"])
        let address = try await server.line(startingWith: "Herald is listening on ")
        let serverKey = try await server.line(startingWith: "server key: ")
        // Two devices connected to the server itself, each with a push over its channel.
        var listeners: [HeraldProcess] = []
        for index in 0..<2 {
            let listener = try HeraldProcess([
                "listen", "--server", address, "--key", serverKey, "--state", directory.file("listen\(index).json"),
            ])
            let id = try await listener.line(startingWith: "listening: installation ")
            let direct = try await request(
                "POST", "\(address)/v1/notifications", bearer: serverKey,
                json: #"{"target":{"installation_ids":["\#(id)"]},"payload":{"body":"over the channel"}}"#)
            #expect(direct.status == 202, "\(direct.body)")
            try await waitUntil("the direct push printed", every: .milliseconds(50), detail: { listener.text }) {
                listener.text.contains("over the channel")
            }
            listeners.append(listener)
        }
        let sent = try await request(
            "POST", "\(address)/v1/notifications", bearer: serverKey,
            json: #"{"target":{"all":true,"services":["apns"]},"payload":{"title":"Broadcast"}}"#)
        #expect(sent.status == 202, "\(sent.body)")
        let id = try #require(
            (try JSONSerialization.jsonObject(with: Data(sent.body.utf8)) as? [String: Any])?["id"] as? String)
        try await apns.waitForRequests(count: tokens.count / 5, timeout: .seconds(120))

        server.process.terminate()  // SIGTERM
        #expect(try await server.exitStatus(timeout: .seconds(60)) == 0, "\(server.text)")
        #expect(server.text.contains("herald stopped"), "\(server.text)")
        #expect(apns.requests.count < tokens.count, "the broadcast finished before the stop")
        // The channels were open until the stop closed them.
        for listener in listeners {
            _ = try await listener.line(startingWith: "channel closed", timeout: .seconds(10))
            listener.process.terminate()
            _ = try await listener.exitStatus()
        }

        let second = try HeraldProcess(["serve", "--config", config, "--port", "0"])
        let secondAddress = try await second.line(startingWith: "Herald is listening on ")
        let record = try await doneRecord(of: id, at: secondAddress, key: serverKey)
        #expect((record["counts"] as? [String: Any])?["sent"] as? Int == tokens.count, "\(record)")
        #expect(Set(apns.requests.compactMap(\.token)) == Set(tokens))
        second.process.terminate()
        #expect(try await second.exitStatus() == 0)
        try await apns.shutdown()
        directory.remove()
        try await database.drop()
    }
}

import Foundation
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
}

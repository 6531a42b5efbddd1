import HeraldProviderMocks
import HeraldTestSupport
import NIOHTTP1
import Testing

@Suite("MockAPNsServer: connection scripts")
struct MockAPNsServerConnectionTests {
    @Test("goAway(afterStreams:) serves the n-th stream, then the client moves to a new connection")
    func goAway() async throws {
        try await APNsHarness.run { apns async throws in
            apns.server.goAway(afterStreams: 2)
            for _ in 0..<5 {
                #expect(try await apns.send().status == 200)
            }
            let connections = apns.server.requests.map(\.connectionID)
            #expect(connections.count == 5)
            #expect(connections[0] == 1 && connections[1] == 1)
            #expect(connections[2] != 1)
            // Every connection gets the script: at most two streams each.
            #expect(Dictionary(grouping: connections, by: { $0 }).values.allSatisfy { $0.count <= 2 })
            #expect(apns.server.connectionCount >= 3)
        }
    }

    @Test("goAway(afterStreams:) counts from the call on an open connection")
    func goAwayOnOpenConnection() async throws {
        try await APNsHarness.run { apns async throws in
            for _ in 0..<3 {
                #expect(try await apns.send().status == 200)
            }
            apns.server.goAway(afterStreams: 1)
            #expect(try await apns.send().status == 200)
            #expect(try await apns.send().status == 200)
            let connections = apns.server.requests.map(\.connectionID)
            #expect(connections == [1, 1, 1, 1, connections[4]])
            #expect(connections[4] != 1)
        }
    }

    @Test("dropConnections(afterStreams:) closes the connection after n answers")
    func drop() async throws {
        try await APNsHarness.run { apns async throws in
            #expect(try await apns.send().status == 200)
            apns.server.dropConnections(afterStreams: 1)
            #expect(try await apns.send().status == 200)
            // The mock closes the connection after that answer: wait for the close itself.
            try await waitUntil("the mock to close the connection", timeout: .seconds(10), every: .milliseconds(10)) {
                apns.server.openConnectionCount == 0
            }
            apns.server.clearConnectionScripts()
            // The client learns of the drop only when it reads the close (or next uses the connection): a request
            // may fail until it has opened a new one, so try until one is answered on a new connection.
            let reply = try await waitForValue(
                "a request answered on a new connection", timeout: .seconds(10), every: .milliseconds(10)
            ) { () async -> Reply? in
                guard let reply = try? await apns.send(), apns.server.requests.last?.connectionID != 1 else {
                    return nil
                }
                return reply
            }
            #expect(reply.status == 200)
            let connections = apns.server.requests.map(\.connectionID)
            #expect(connections.prefix(2) == [1, 1] && connections.last != 1)
        }
    }

    @Test("dropConnections(afterStreams:) never answers streams past the n-th")
    func dropLeavesLaterStreamsUnanswered() async throws {
        try await APNsHarness.run { apns async throws in
            #expect(try await apns.send().status == 200)
            apns.server.dropConnections(afterStreams: 1)
            let slow = Fixtures.apnsToken()
            apns.server.script(token: slow, .success(after: .milliseconds(300)))
            let jwt = try await apns.key.providerToken()
            let first = try await apns.request(token: slow, providerToken: jwt)
            let second = try await apns.request(providerToken: jwt)
            async let a = try? apns.send(first)
            async let b = try? apns.send(second)
            let answered = await [a, b].compactMap { $0 }
            // Whichever stream opened first is answered; the other dies with the connection.
            #expect(answered.count == 1)
            #expect(answered.first?.status == 200)
        }
    }

    @Test("setMaxConcurrentStreams limits the streams a connection serves at once")
    func maxConcurrentStreams() async throws {
        try await APNsHarness.run { apns async throws in
            apns.server.setMaxConcurrentStreams(1)
            let jwt = try await apns.key.providerToken()
            let tokens = (0..<4).map { _ in Fixtures.apnsToken() }
            for token in tokens {
                apns.server.script(token: token, .success(after: .milliseconds(100)))
            }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for token in tokens {
                    group.addTask { try await apns.send(apns.request(token: token, providerToken: jwt)).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == [200, 200, 200, 200])
            #expect(apns.server.peakConcurrentStreams == 1)
        }
    }
}

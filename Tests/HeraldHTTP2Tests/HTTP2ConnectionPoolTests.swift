import Foundation
import HeraldHTTP2
import HeraldProviderMocks
import HeraldTestSupport
import NIOCore
import NIOHPACK
import NIOSSL
import Synchronization
import Testing

@Suite("HTTP/2 pool against a live HTTP/2 + TLS peer", .serialized)
struct HTTP2ConnectionPoolTests {
    struct Peer {
        let ca: TestCertificateAuthority
        let key: TestAPNsAuthKey
        let apns: MockAPNsServer

        init() async throws {
            ca = try TestCertificateAuthority()
            key = TestAPNsAuthKey()
            apns = try await MockAPNsServer.start(ca: ca, credentials: [key.credential(topics: ["com.example"])])
        }

        func pool(
            requestTimeout: TimeAmount = .seconds(120), readTimeout: TimeAmount = .seconds(60), connections: Int = 1,
            connectionWindowSize: Int = 1 << 20
        ) throws -> HTTP2ConnectionPool {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates([ca.rootCertificate])
            return try HTTP2ConnectionPool(
                configuration: HTTP2PoolConfiguration(
                    host: "127.0.0.1", port: apns.port, tls: tls, connections: connections,
                    connectionWindowSize: connectionWindowSize,
                    connectTimeout: .seconds(60), requestTimeout: requestTimeout, pingInterval: .milliseconds(200),
                    readTimeout: readTimeout))
        }

        func request(_ token: String) async throws -> HTTP2Request {
            HTTP2Request(
                path: "/3/device/\(token)",
                headers: [
                    ("authorization", "bearer " + (try await key.providerToken())), ("apns-topic", "com.example"),
                    ("apns-push-type", "alert"),
                ],
                body: ByteBuffer(string: #"{"aps":{"alert":"hi"}}"#))
        }
    }

    @Test("A host whose TLS handshake does not choose h2 (an HTTP/1.1-only server) fails requests naming ALPN")
    func requiresHTTP2() async throws {
        let ca = try TestCertificateAuthority()
        let http1 = try await MockPushService.start(ca: ca, httpVersion: .http1)
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([ca.rootCertificate])
        let pool = try HTTP2ConnectionPool(
            configuration: HTTP2PoolConfiguration(host: "127.0.0.1", port: http1.port, tls: tls, connections: 1))
        let error = await #expect(throws: HTTP2ClientError.self) {
            try await pool.execute(HTTP2Request(path: "/push/subscription"))
        }
        #expect(
            error?.description
                == "connect failed: 127.0.0.1 does not speak HTTP/2: its TLS handshake chose no protocol through ALPN, not 'h2'"
        )
        await pool.shutdown()
        try await http1.shutdown()
    }

    @Test("A request gets its response; an idle connection stays usable across keep-alive PINGs")
    func roundTripAndKeepAlive() async throws {
        let peer = try await Peer()
        let pool = try peer.pool()
        let first = try await pool.execute(try await peer.request(Fixtures.apnsToken()))
        #expect(first.status == 200)
        #expect(first.headers.first(name: "apns-id") != nil)
        // Idle, the connection is kept alive by PINGs (every 200 ms here): wait for three of them.
        try await waitUntil("three keep-alive PINGs on the idle connection", timeout: .seconds(10)) {
            peer.apns.pingsReceived >= 3
        }
        let second = try await pool.execute(try await peer.request(Fixtures.apnsToken()))
        #expect(second.status == 200)
        #expect(peer.apns.connectionCount == 1)
        await pool.shutdown()
        try await peer.apns.shutdown()
    }

    @Test("A request unanswered past its timeout fails with requestTimeout; the connection goes on")
    func requestTimeout() async throws {
        let peer = try await Peer()
        // Generous enough that the second, prompt request never times out on a loaded machine.
        let pool = try peer.pool(requestTimeout: .seconds(1))
        let slow = Fixtures.apnsToken()
        peer.apns.script(token: slow, .success(after: .seconds(4)))
        await #expect(throws: HTTP2ClientError.requestTimeout) { try await pool.execute(try await peer.request(slow)) }
        #expect(try await pool.execute(try await peer.request(Fixtures.apnsToken())).status == 200)
        await pool.shutdown()
        try await peer.apns.shutdown()
    }

    @Test("A connection that reads nothing past the read timeout is closed and replaced")
    func readTimeout() async throws {
        let peer = try await Peer()
        let pool = try peer.pool(requestTimeout: .seconds(120), readTimeout: .milliseconds(400))
        let stuck = Fixtures.apnsToken()
        peer.apns.script(token: stuck, .success(after: .seconds(5)))
        await #expect(throws: HTTP2ClientError.connectionClosed) {
            try await pool.execute(try await peer.request(stuck))
        }
        #expect(try await pool.execute(try await peer.request(Fixtures.apnsToken())).status == 200)
        #expect(peer.apns.connectionCount == 2)
        await pool.shutdown()
        try await peer.apns.shutdown()
    }

    @Test("Response bodies beyond the connection window: the window is returned and nothing stalls")
    func connectionWindow() async throws {
        let peer = try await Peer()
        // RFC 9113's initial 65,535-byte window and 300 error bodies of ~1 KB: over four windows' worth.
        let pool = try peer.pool(connectionWindowSize: 65_535)
        let reason = String(repeating: "BadDeviceToken", count: 72)
        let requests = try await (0..<300).asyncMap { _ in
            let token = Fixtures.apnsToken()
            peer.apns.script(token: token, .error(status: 400, reason: reason))
            return try await peer.request(token)
        }
        let results = await pool.execute(batch: requests)
        let answered = results.filter { (try? $0.get().status) == 400 }.count
        let bodyBytes = results.reduce(0) { $0 + ((try? $1.get().body.readableBytes) ?? 0) }
        await pool.shutdown()
        try await peer.apns.shutdown()
        #expect(answered == 300)
        #expect(bodyBytes > 4 * 65_535)
        #expect(peer.apns.connectionCount == 1)
    }

    @Test("GOAWAY: served streams finish, later ones fail as retryable, new requests use a new connection")
    func goAway() async throws {
        let peer = try await Peer()
        let pool = try peer.pool(connections: 1)
        #expect(try await pool.execute(try await peer.request(Fixtures.apnsToken())).status == 200)
        // Every connection, the open one included, sends GOAWAY after 40 more streams.
        peer.apns.goAway(afterStreams: 40)
        let requests = try await (0..<300).asyncMap { _ in try await peer.request(Fixtures.apnsToken()) }
        let results = await pool.execute(batch: requests)
        var answered = 0
        var retryable = 0
        for result in results {
            switch result {
            case .success(let response): answered += response.status == 200 ? 1 : 0
            case .failure(let error): retryable += error.isTransient ? 1 : 0
            }
        }
        peer.apns.clearConnectionScripts()
        #expect(try await pool.execute(try await peer.request(Fixtures.apnsToken())).status == 200)
        await pool.shutdown()
        try await peer.apns.shutdown()
        // Nothing was answered twice and no connection served past its GOAWAY.
        let perConnection = Dictionary(grouping: peer.apns.requests.map(\.connectionID), by: { $0 })
        #expect(peer.apns.requests.count == answered + 2)
        #expect(perConnection.values.allSatisfy { $0.count <= 41 })
        // Each request ends: answered, or refused as retryable (the engine retries those).
        #expect(answered + retryable == 300)
        #expect(answered >= 40)
        #expect(retryable > 0)
        #expect(peer.apns.connectionCount >= 2)
    }

    @Test("No peer: requests fail with connectFailed, never hang")
    func connectFailure() async throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        let pool = try HTTP2ConnectionPool(
            configuration: HTTP2PoolConfiguration(host: "127.0.0.1", port: 1, tls: tls, connectTimeout: .seconds(2)))
        let error = await #expect(throws: HTTP2ClientError.self) {
            try await pool.execute(HTTP2Request(path: "/"))
        }
        #expect(error?.isTransient == true)
        await pool.shutdown()
        await #expect(throws: HTTP2ClientError.shutdown) { try await pool.execute(HTTP2Request(path: "/")) }
    }
}

@Suite("HTTP/2 pools to many origins", .serialized)
struct HTTP2OriginPoolsTests {
    @Test("Requests reach each origin's host on its own pool; a new origin past the limit closes the oldest")
    func manyOrigins() async throws {
        let first = try await HTTP2ConnectionPoolTests.Peer()
        let key = first.key
        let second = try await MockAPNsServer.start(
            ca: first.ca, credentials: [key.credential(topics: ["com.example"])])
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([first.ca.rootCertificate])
        let pools = HTTP2OriginPools(
            configuration: HTTP2PoolConfiguration(host: "unused", tls: tls, connections: 1), maxOrigins: 2)
        let a = HTTP2OriginPools.Origin(host: "127.0.0.1", port: first.apns.port)
        let b = HTTP2OriginPools.Origin(host: "127.0.0.1", port: second.port)
        let requests = try await (0..<20).asyncMap { index in
            (origin: index.isMultiple(of: 2) ? a : b, request: try await first.request(Fixtures.apnsToken()))
        }
        let results = await pools.execute(batch: requests)
        #expect(results.allSatisfy { (try? $0.get().status) == 200 })
        #expect(first.apns.requests.count == 10)
        #expect(second.requests.count == 10)
        #expect(try await pools.execute(try await first.request(Fixtures.apnsToken()), at: b).status == 200)
        #expect(pools.origins == [a, b])
        #expect(first.apns.connectionCount == 1)
        #expect(second.connectionCount == 1)

        // A third origin (no server there) displaces the least recently used one, a.
        let nowhere = HTTP2OriginPools.Origin(host: "127.0.0.1", port: 1)
        await #expect(throws: HTTP2ClientError.self) {
            try await pools.execute(try await first.request(Fixtures.apnsToken()), at: nowhere)
        }
        #expect(pools.origins == [b, nowhere])
        #expect(try await pools.execute(try await first.request(Fixtures.apnsToken()), at: a).status == 200)
        #expect(first.apns.connectionCount == 2)
        await pools.shutdown()
        await #expect(throws: HTTP2ClientError.shutdown) {
            try await pools.execute(try await first.request(Fixtures.apnsToken()), at: a)
        }
        try await first.apns.shutdown()
        try await second.shutdown()
    }
}

extension HTTP2OriginPoolsTests {
    @Test("An origin's pool unused for the idle timeout is closed at the next request")
    func idleOrigins() async throws {
        let first = try await HTTP2ConnectionPoolTests.Peer()
        let second = try await MockAPNsServer.start(
            ca: first.ca, credentials: [first.key.credential(topics: ["com.example"])])
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([first.ca.rootCertificate])
        // The pools' time moves only when the test says: a slow machine makes no origin idle.
        let start = ContinuousClock.now
        let elapsed = Mutex(Duration.zero)
        let pools = HTTP2OriginPools(
            configuration: HTTP2PoolConfiguration(host: "unused", tls: tls, connections: 1),
            idleTimeout: .milliseconds(300), now: { start + elapsed.withLock { $0 } })
        let a = HTTP2OriginPools.Origin(host: "127.0.0.1", port: first.apns.port)
        let b = HTTP2OriginPools.Origin(host: "127.0.0.1", port: second.port)
        #expect(try await pools.execute(try await first.request(Fixtures.apnsToken()), at: a).status == 200)
        #expect(try await pools.execute(try await first.request(Fixtures.apnsToken()), at: b).status == 200)
        #expect(pools.origins == [a, b])
        elapsed.withLock { $0 = .milliseconds(400) }  // both idle past the timeout
        #expect(try await pools.execute(try await first.request(Fixtures.apnsToken()), at: b).status == 200)
        #expect(pools.origins == [b], "a was idle longer than the timeout")
        #expect(try await pools.execute(try await first.request(Fixtures.apnsToken()), at: a).status == 200)
        #expect(first.apns.connectionCount == 2, "a reconnected")
        await pools.shutdown()
        try await first.apns.shutdown()
        try await second.shutdown()
    }
}

extension Sequence {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}

import AsyncHTTPClient
import Foundation
import HeraldCore
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sends one signed webhook request and says how it went. The URL's name is resolved once, every
/// address it resolves to is checked against the ``WebhookNetworkPolicy``, and the request goes to
/// the first address checked (AsyncHTTPClient's `dnsOverride`: it connects there and still names the
/// host in TLS and verifies its certificate for it). Redirects are never followed, the connection and
/// the answer are bounded in time, and at most ``responseLimit`` bytes of an answer are read.
public final class WebhookSender: Sendable {
    /// What one request came to.
    public struct Result: Sendable, Equatable {
        /// The receiver's status; nil when none came (refused address, connection failure, timeout).
        public var status: Int?
        /// Why it failed, for the outbox row and the console (never a secret).
        public var error: String?
        /// How long it took.
        public var duration: Duration
    }

    /// Bounds of one request.
    public struct Timeouts: Sendable, Equatable {
        /// The name's resolution (getaddrinfo has none of its own worth the name: glibc's can take 30 s).
        public var lookup: Duration
        public var connect: Duration
        /// From the request's start to the answer's end.
        public var response: Duration

        public init(lookup: Duration = .seconds(5), connect: Duration = .seconds(5), response: Duration = .seconds(15))
        {
            self.lookup = lookup
            self.connect = connect
            self.response = response
        }
    }

    /// The most of an answer's body read (the rest is dropped with the connection).
    public static let responseLimit = 64 * 1024

    private let policy: WebhookNetworkPolicy
    private let timeouts: Timeouts
    private let tlsConfiguration: TLSConfiguration
    private let eventLoopGroup: any EventLoopGroup
    /// One client per host and the address it was checked at (AsyncHTTPClient keeps `dnsOverride`
    /// per client); a host that resolves elsewhere later gets a new one.
    private let clients = Mutex<[String: (address: String, client: HTTPClient)]>([:])
    private let retired = Mutex<[HTTPClient]>([])
    /// Resolves a name to its addresses (getaddrinfo; tests inject one).
    private let resolver: @Sendable (String) async throws -> [IPAddress]

    /// Creates a sender.
    /// - Parameters:
    ///   - trustRoots: Certificates to trust besides the system's (tests' own CA); nil: the system's.
    ///   - resolver: How names are resolved: getaddrinfo (tests inject one).
    public init(
        policy: WebhookNetworkPolicy, timeouts: Timeouts = Timeouts(), trustRoots: [NIOSSLCertificate]? = nil,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        resolver: @escaping @Sendable (String) async throws -> [IPAddress] = WebhookSender.resolve
    ) {
        self.policy = policy
        self.resolver = resolver
        self.timeouts = timeouts
        var tls = TLSConfiguration.makeClientConfiguration()
        if let trustRoots { tls.additionalTrustRoots = [.certificates(trustRoots)] }
        self.tlsConfiguration = tls
        self.eventLoopGroup = eventLoopGroup
    }

    /// The longest one attempt can take: its lookup's bound, its connection's and its answer's.
    public var longestAttempt: Duration { timeouts.lookup + timeouts.connect + timeouts.response }

    /// Sends a delivery's event, signed with its endpoint's secrets at `now`.
    public func send(_ delivery: WebhookDelivery, now: Date) async -> Result {
        let started = ContinuousClock.now
        func result(_ status: Int?, _ error: String?) -> Result {
            Result(status: status, error: error, duration: ContinuousClock.now - started)
        }
        let client: HTTPClient
        do {
            let url = try policy.check(url: delivery.url)
            client = try await self.client(for: url.host ?? "")
        } catch let error as HeraldError {
            return result(nil, error.message)
        } catch {
            return result(nil, "\(error)")
        }
        var request = HTTPClientRequest(url: delivery.url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "user-agent", value: "Herald-Webhooks/\(WebhookEvent.version)")
        for (name, value) in WebhookSignature.headers(
            id: delivery.eventID, timestamp: now, body: delivery.body,
            secrets: delivery.secrets.filter { $0.expiresAt.map { $0 > now } ?? true })
        {
            request.headers.add(name: name, value: value)
        }
        request.body = .bytes(ByteBuffer(bytes: delivery.body))
        do {
            let response = try await client.execute(
                request, timeout: .nanoseconds(Int64(timeouts.response.timeInterval * 1e9)))
            var read = 0
            for try await chunk in response.body {
                read += chunk.readableBytes
                if read > Self.responseLimit { break }
            }
            let status = Int(response.status.code)
            return result(status, (200..<300).contains(status) ? nil : "the receiver answered \(status)")
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            return result(nil, "no answer within \(timeouts.response)")
        } catch let error as HTTPClientError where error == .connectTimeout {
            return result(nil, "no connection within \(timeouts.connect)")
        } catch {
            return result(nil, "the request failed: \(error)")
        }
    }

    /// Shuts every client down (the deliverer's end).
    public func shutdown() async {
        let all =
            clients.withLock { clients in
                defer { clients.removeAll() }
                return clients.values.map(\.client)
            }
            + retired.withLock { retired in
                defer { retired.removeAll() }
                return retired
            }
        for client in all { try? await client.shutdown() }
    }

    /// The client for a host, at the address it resolves to now (checked).
    private func client(for host: String) async throws -> HTTPClient {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        let address: String
        if IPAddress(bare) != nil {
            address = bare
        } else {
            let resolver = self.resolver
            let addresses: [IPAddress]
            do {
                // A lookup past its bound is left to finish on its thread; the attempt fails now.
                addresses = try await withDeadline(timeouts.lookup, overrun: .leaveCancelled) {
                    try await resolver(bare)
                }
            } catch is DeadlineExceeded {
                throw HeraldError.invalidValue(
                    "url", code: "webhook_unresolved", "\(host) did not resolve within \(timeouts.lookup).")
            }
            guard !addresses.isEmpty else {
                throw HeraldError.invalidValue("url", code: "webhook_unresolved", "\(host) does not resolve.")
            }
            // Every address is checked: a name that resolves to one public and one private address is refused.
            for candidate in addresses { try policy.check(address: candidate) }
            address = addresses[0].description
        }
        if let existing = clients.withLock({ $0[host] }), existing.address == address { return existing.client }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tlsConfiguration, redirectConfiguration: .disallow,
            timeout: .init(
                connect: .nanoseconds(Int64(timeouts.connect.timeInterval * 1e9)),
                read: .nanoseconds(Int64(timeouts.response.timeInterval * 1e9))))
        if IPAddress(bare) == nil { configuration.dnsOverride = [bare: address] }
        configuration.connectionPool = .init(idleTimeout: .seconds(30))
        let client = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
        let replaced = clients.withLock { clients in
            defer { clients[host] = (address, client) }
            return clients[host]?.client
        }
        if let replaced { retired.withLock { $0.append(replaced) } }
        return client
    }

    /// The addresses a name resolves to, looked up once on NIO's thread pool.
    @Sendable public static func resolve(_ host: String) async throws -> [IPAddress] {
        try await NIOThreadPool.singleton.runIfActive {
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var list: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, nil, &hints, &list) == 0 else { return [] }
            defer { freeaddrinfo(list) }
            var addresses: [IPAddress] = []
            var entry = list
            while let current = entry {
                if let socketAddress = current.pointee.ai_addr {
                    switch Int32(current.pointee.ai_family) {
                    case AF_INET:
                        var value = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                            $0.pointee.sin_addr
                        }
                        addresses.append(IPAddress(bytes: withUnsafeBytes(of: &value) { Array($0) }))
                    case AF_INET6:
                        var value = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                            $0.pointee.sin6_addr
                        }
                        addresses.append(IPAddress(bytes: withUnsafeBytes(of: &value) { Array($0) }))
                    default: break
                    }
                }
                entry = current.pointee.ai_next
            }
            var seen = Set<IPAddress>()
            return addresses.filter { seen.insert($0).inserted }
        }
    }
}

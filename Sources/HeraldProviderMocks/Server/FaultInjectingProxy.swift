import AsyncHTTPClient
import Foundation
import HeraldTestSupport
import NIOCore
import NIOHTTP1
import Synchronization

/// A plain HTTP/1.1 reverse proxy on 127.0.0.1 for a service whose test double cannot misbehave (moto for SNS): it
/// forwards every request to the upstream and, while a fault is set, answers the requests the fault matches itself.
///
/// ```swift
/// let proxy = try await FaultInjectingProxy.start(upstream: moto.endpoint)
/// proxy.setFault(.init(status: 500, body: awsError, matching: "Action=Publish"))
/// ```
public final class FaultInjectingProxy: Sendable {
    /// An answer the proxy gives in the upstream's place.
    public struct Fault: Sendable {
        /// The status to answer with.
        public var status: Int
        /// The body.
        public var body: String
        /// Extra response headers, names lowercased.
        public var headers: [(String, String)]
        /// Which requests it answers: those whose body contains this text (e.g. `Action=Publish`); empty matches all.
        public var matching: String

        /// Creates a fault.
        public init(status: Int, body: String, headers: [(String, String)] = [], matching: String = "") {
            self.status = status
            self.body = body
            self.headers = headers
            self.matching = matching
        }
    }

    /// A request the proxy received.
    public struct Request: Sendable {
        /// The method.
        public var method: String
        /// The path and query.
        public var path: String
        /// The form parameters of an `application/x-www-form-urlencoded` body (the AWS Query API's).
        public var parameters: [String: String]
        /// The status the client got.
        public var status: Int
        /// Whether the proxy answered itself (a fault) rather than the upstream.
        public var injected: Bool
    }

    /// The fault in force, shared with the server's handler.
    private final class FaultSlot: Sendable {
        let current = Mutex<Fault?>(nil)
    }

    private let server: HTTP1TestServer
    private let log: RequestLog<Request>
    private let fault: FaultSlot

    private init(server: HTTP1TestServer, log: RequestLog<Request>, fault: FaultSlot) {
        self.server = server
        self.log = log
        self.fault = fault
    }

    /// Starts a proxy to `upstream` (`http://host:port`) on an ephemeral port of 127.0.0.1.
    /// - Throws: When the port cannot be bound.
    public static func start(upstream: String) async throws -> FaultInjectingProxy {
        let log = RequestLog<Request>()
        let fault = FaultSlot()
        let server = try await HTTP1TestServer.start(tls: nil) { request in
            var record = Request(
                method: request.method, path: request.path, parameters: Self.form(request.body), status: 0,
                injected: false)
            let response: TestHTTPResponse
            if let injected = fault.current.withLock({ $0 }),
                injected.matching.isEmpty || String(decoding: request.body, as: UTF8.self).contains(injected.matching)
            {
                response = TestHTTPResponse(
                    status: injected.status, headers: injected.headers, body: Array(injected.body.utf8))
                record.injected = true
            } else {
                response = await forward(request, to: upstream)
            }
            record.status = response.status
            log.append(record)
            return response
        }
        return FaultInjectingProxy(server: server, log: log, fault: fault)
    }

    /// The proxy's URL, to configure the client with in place of the upstream's.
    public var endpoint: String { "http://127.0.0.1:\(server.port)" }

    /// Answers the requests `fault` matches from now on; nil forwards everything again.
    public func setFault(_ fault: Fault?) {
        self.fault.current.withLock { $0 = fault }
    }

    /// Every request received so far, oldest first.
    public var requests: [Request] { log.records }

    /// Stops listening and closes every connection.
    /// - Throws: Never in practice; reserved for channel close failures.
    public func shutdown() async throws {
        try await server.shutdown()
    }

    private static func forward(_ request: TestHTTPRequest, to upstream: String) async -> TestHTTPResponse {
        var outgoing = HTTPClientRequest(url: upstream + request.path)
        outgoing.method = HTTPMethod(rawValue: request.method)
        let hopByHop: Set<String> = ["host", "content-length", "connection", "transfer-encoding"]
        for (name, value) in request.headers where !hopByHop.contains(name) {
            outgoing.headers.add(name: name, value: value)
        }
        outgoing.body = .bytes(ByteBuffer(bytes: request.body))
        do {
            let response = try await HTTPClient.shared.execute(outgoing, timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 16 << 20)
            return TestHTTPResponse(
                status: Int(response.status.code),
                headers: response.headers.filter { !hopByHop.contains($0.name.lowercased()) }.map {
                    ($0.name.lowercased(), $0.value)
                },
                body: Array(buffer: body))
        } catch {
            return TestHTTPResponse(status: 502, body: Array("proxy: \(error)".utf8))
        }
    }

    /// The parameters of a form body.
    private static func form(_ body: [UInt8]) -> [String: String] {
        var components = URLComponents()
        components.percentEncodedQuery = String(decoding: body, as: UTF8.self).replacingOccurrences(
            of: "+", with: "%20")
        var parameters: [String: String] = [:]
        for item in components.queryItems ?? [] { parameters[item.name] = item.value ?? "" }
        return parameters
    }
}

import AsyncHTTPClient
import Foundation
import HeraldProviderMocks
import HeraldTestSupport
import NIOCore
import NIOHTTP1
import NIOSSL

/// A response as the tests look at it.
struct Reply: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]

    /// A string member of the JSON body, following a path of object keys.
    func string(_ path: String...) -> String? {
        value(at: path) as? String
    }

    /// A number member of the JSON body, following a path of object keys.
    func number(_ path: String...) -> Double? {
        (value(at: path) as? NSNumber)?.doubleValue
    }

    /// The `details` array of a `google.rpc.Status` error body.
    var rpcDetails: [[String: Any]] {
        (value(at: ["error", "details"]) as? [[String: Any]]) ?? []
    }

    func value(at path: [String]) -> Any? {
        var current: Any? = try? JSONSerialization.jsonObject(with: Data(body))
        for key in path {
            current = (current as? [String: Any])?[key]
        }
        return current
    }
}

/// An AsyncHTTPClient that trusts only `ca` and negotiates HTTP/2, presenting `certificate` as its TLS client
/// certificate when given.
func makeHTTPClient(
    trusting ca: TestCertificateAuthority, presenting certificate: TestAPNsCertificate? = nil
)
    -> HTTPClient
{
    var tls = ca.clientTLSConfiguration()
    if let certificate {
        tls.certificateChain = certificate.chain.map { .certificate($0) }
        tls.privateKey = .privateKey(certificate.privateKey)
    }
    var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
    configuration.httpVersion = .automatic
    return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
}

extension HTTPClient {
    /// Sends one request and collects the whole response.
    func send(
        _ method: HTTPMethod, _ url: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
        timeout: TimeAmount = .seconds(30)
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers {
            request.headers.add(name: name, value: value)
        }
        if let body {
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await execute(request, timeout: timeout)
        let collected = try await response.body.collect(upTo: 1 << 20)
        return Reply(status: Int(response.status.code), headers: response.headers, body: Array(buffer: collected))
    }
}

import Foundation
import HTTPTypes
import HeraldCore
import HeraldSNS
import HeraldServer
import HummingbirdTesting
import NIOCore
import NIOHTTP1

@testable import HeraldAPI
@testable import HeraldSNSAPI

/// Calls the SNS-compatible API as an AWS SDK does: a form body, SigV4-signed.
struct SNSCaller {
    static let accessKeyID = "AKIDHERALDTEST000001"
    static let secretAccessKey = "herald-test-secret-access-key-0123456789"
    static let arnPrefix = "arn:aws:sns:us-east-1:123456789012:"

    /// The SNS settings of the harness's `demo` app.
    static var dialects: DialectSettings {
        var settings = DialectSettings()
        settings.snsAPI = [
            "demo": SNSAPIConfiguration(
                credentials: AWSCredentials(accessKeyID: accessKeyID, secretAccessKey: secretAccessKey))
        ]
        return settings
    }

    let client: any TestClientProtocol
    let clock: TestClock
    var credentials = AWSCredentials(accessKeyID: accessKeyID, secretAccessKey: secretAccessKey)
    var region = "us-east-1"
    var path = "/sns"

    /// Calls `action` with `parameters`, signed at `date` (the harness's now by default).
    func call(_ action: String, _ parameters: [(String, String)] = [], date: Date? = nil) async throws -> SNSReply {
        let body = ([("Action", action), ("Version", "2010-03-31")] + parameters)
            .map { "\(SigV4.uriEncode($0.0))=\(SigV4.uriEncode($0.1))" }.joined(separator: "&")
        var request = SigV4Request(
            method: "POST", path: path,
            headers: ["host": "localhost", "content-type": "application/x-www-form-urlencoded; charset=utf-8"],
            body: Array(body.utf8))
        SigV4(credentials: credentials, region: region, service: "sns").sign(&request, date: date ?? clock.now)
        var headers = HTTPFields()
        for (name, value) in request.headers { headers[HTTPField.Name(name)!] = value }
        let response = try await client.executeRequest(
            uri: path, method: .post, headers: headers, body: ByteBuffer(bytes: request.body))
        return SNSReply(status: response.status, headers: response.headers, xml: String(buffer: response.body))
    }

    /// Calls `action` and requires a success.
    func ok(_ action: String, _ parameters: [(String, String)] = []) async throws -> SNSReply {
        let reply = try await call(action, parameters)
        guard reply.status == .ok else { throw TestFailure("\(action) failed: \(reply.status) \(reply.xml)") }
        return reply
    }
}

/// An SNS answer.
struct SNSReply {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var xml: String

    /// The text of the first `<name>` element.
    func value(_ name: String) -> String? { values(name).first }

    /// The texts of every `<name>` element, in order.
    func values(_ name: String) -> [String] {
        var found: [String] = []
        var rest = xml[...]
        while let open = rest.range(of: "<\(name)>"), let close = rest[open.upperBound...].range(of: "</\(name)>") {
            found.append(
                String(rest[open.upperBound..<close.lowerBound]).replacingOccurrences(of: "&quot;", with: "\"")
                    .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
                    .replacingOccurrences(of: "&apos;", with: "'").replacingOccurrences(of: "&amp;", with: "&"))
            rest = rest[close.upperBound...]
        }
        return found
    }

    /// The `Attributes` map.
    var attributes: [String: String] {
        Dictionary(zip(values("key"), values("value")), uniquingKeysWith: { first, _ in first })
    }

    var errorCode: String? { value("Code") }
}

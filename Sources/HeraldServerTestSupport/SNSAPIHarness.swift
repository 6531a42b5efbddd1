import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldSNS
import HeraldSNSAPI
import HeraldServer
import HeraldSigV4
import HeraldTestSupport
import HummingbirdTesting
import NIOCore
import NIOHTTP1

/// Calls the SNS-compatible API as an AWS SDK does: a form body, SigV4-signed.
package struct SNSCaller {
    package static let accessKeyID = "AKIDHERALDTEST000001"
    package static let secretAccessKey = "herald-test-secret-access-key-0123456789"
    package static let arnPrefix = "arn:aws:sns:us-east-1:123456789012:"

    /// The SNS settings of the harness's `demo` app.
    package static var dialects: DialectSettings {
        var settings = DialectSettings()
        settings.snsAPI = [
            "demo": SNSAPIConfiguration(
                credentials: AWSCredentials(accessKeyID: accessKeyID, secretAccessKey: secretAccessKey))
        ]
        return settings
    }

    package let client: any TestClientProtocol
    package let clock: ManualClock

    package init(client: any TestClientProtocol, clock: ManualClock) {
        self.client = client
        self.clock = clock
    }
    package var credentials = AWSCredentials(accessKeyID: accessKeyID, secretAccessKey: secretAccessKey)
    package var region = "us-east-1"
    package var path = "/sns"

    /// Calls `action` with `parameters`, signed at `date` (the harness's now by default).
    package func call(
        _ action: String, _ parameters: [(String, String)] = [], date: Date? = nil
    ) async throws -> SNSReply {
        let body = ([("Action", action), ("Version", "2010-03-31")] + parameters)
            .map { "\(SigV4.uriEncode($0.0))=\(SigV4.uriEncode($0.1))" }.joined(separator: "&")
        var request = SigV4Request(
            method: "POST", path: path,
            headers: ["host": "localhost", "content-type": "application/x-www-form-urlencoded; charset=utf-8"],
            body: Array(body.utf8))
        SigV4(credentials: credentials, region: region, service: "sns").sign(&request, date: date ?? clock.date)
        var headers = HTTPFields()
        for (name, value) in request.headers { headers[HTTPField.Name(name)!] = value }
        let response = try await client.executeRequest(
            uri: path, method: .post, headers: headers, body: ByteBuffer(bytes: request.body))
        return SNSReply(status: response.status, headers: response.headers, xml: String(buffer: response.body))
    }

    /// Calls `action` and requires a success.
    package func ok(_ action: String, _ parameters: [(String, String)] = []) async throws -> SNSReply {
        let reply = try await call(action, parameters)
        guard reply.status == .ok else { throw TestFailure("\(action) failed: \(reply.status) \(reply.xml)") }
        return reply
    }
}

/// An SNS answer.
package struct SNSReply {
    package var status: HTTPResponse.Status
    package var headers: HTTPFields
    package var xml: String

    /// The text of the first `<name>` element.
    package func value(_ name: String) -> String? { values(name).first }

    /// The texts of every `<name>` element, in order.
    package func values(_ name: String) -> [String] {
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
    package var attributes: [String: String] {
        Dictionary(zip(values("key"), values("value")), uniquingKeysWith: { first, _ in first })
    }

    package var errorCode: String? { value("Code") }

    package init(status: HTTPResponse.Status, headers: HTTPFields, xml: String) {
        self.status = status
        self.headers = headers
        self.xml = xml
    }
}

import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldSNS
import HeraldTestSupport
import NIOHTTP1
import Testing

extension MotoServer {
    /// Why the moto suites are skipped.
    static let unavailable: Comment = "moto is not installed (pip install 'moto[server]', or scripts/moto)"

    /// The server the running suite started.
    @TaskLocal static var current: MotoServer?

    /// Calls moto's IAM (Query API, signed for `iam`) and returns the answer's text.
    func iam(_ action: String, _ parameters: [(String, String)]) async throws -> String {
        let body = ([("Action", action), ("Version", "2010-05-08")] + parameters)
            .map { "\(SigV4.uriEncode($0.0))=\(SigV4.uriEncode($0.1))" }.joined(separator: "&")
        var request = SigV4Request(
            method: "POST",
            headers: ["Host": "127.0.0.1:\(port)", "Content-Type": "application/x-www-form-urlencoded; charset=utf-8"],
            body: Array(body.utf8))
        SigV4(
            credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "x"), region: "us-east-1",
            service: "iam"
        )
        .sign(&request, date: Date())
        let (status, answer) = try await send(method: .POST, path: "/", headers: request.headers, body: body)
        let text = String(decoding: answer, as: UTF8.self)
        guard status == 200 else { throw MotoServerError(message: "IAM \(action) answered \(status): \(text)") }
        return text
    }

}

/// Starts one moto server around a suite, makes it ``MotoServer/current`` for the suite's tests,
/// and stops it after, whether the tests passed or not.
struct MotoServerScope: SuiteTrait, TestScoping {
    var isRecursive: Bool { false }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let server = try await MotoServer.start()
        do {
            try await MotoServer.$current.withValue(server) { try await function() }
        } catch {
            server.stop()
            throw error
        }
        server.stop()
    }
}

extension Trait where Self == MotoServerScope {
    /// One moto server for the whole suite.
    static var motoServer: Self { MotoServerScope() }
}

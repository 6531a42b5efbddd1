import Foundation
import HeraldCore
import HeraldProviderMocks
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HeraldAPI
@testable import HeraldSNSAPI

/// `scripts/sns-sdk-test.py` (boto3) against Herald on a real port, with the mock APNs and FCM
/// servers receiving what the engine sends.
@Suite("SNS-compatible API with boto3")
struct SNSAPISDKTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/sns-sdk-test.py").path

    @Test(
        "boto3 creates applications, endpoints and topics, publishes (each endpoint its environment's key, alone or beside default; legacy GCM in FCM v1's names), and sees SNS's errors"
    )
    func boto3() async throws {
        let harness = try await EngineHarness(dialects: SNSCaller.dialects)
        let app = Application(router: try harness.server.router().router)
        do {
            try await app.test(.live) { client in
                let port = try #require(client.port)
                let (status, output, errors) = try await Self.run(port: port)
                #expect(status == 0, "\(errors)")
                guard status == 0 else { return }
                let result = try JSONValue.parse(Array(output.utf8)).objectValue ?? [:]
                try await harness.drain()
                // APNs: two endpoint publishes, the "news" topic's two devices, the "mixed" topic's two
                // devices twice, and the sandbox endpoint's default-only message. FCM: three endpoint
                // publishes (two with only the GCM key) and three topic messages; the publishes SNS refuses
                // sent nothing.
                #expect(harness.apns.requests.count == 9)
                #expect(harness.fcm.requests.count == 6)
                let tokens = result["tokens"]?.objectValue ?? [:]
                /// What APNs received for an endpoint's token.
                func payloads(_ platform: String) -> [JSONValue] {
                    harness.apns.requests.filter { $0.token == tokens[platform]?.text }.compactMap(\.json)
                }
                func alert(_ payload: JSONValue) -> JSONValue? { payload.objectValue?["aps"]?.objectValue?["alert"] }
                // The sandbox device got the endpoint's APNS_SANDBOX payload and the "news" topic's default
                // text as SNS sends it: a string alert, nothing else.
                let sandbox = payloads("APNS_SANDBOX")
                #expect(
                    sandbox.map(alert).contains(.object(["title": .string("Hello"), "body": .string("from boto3")])))
                #expect(sandbox.contains(.object(["aps": .object(["alert": .string("Breaking news")])])))
                // The "mixed" topic: each environment its own key, or the default text where it has none.
                func apple(_ body: String, customID: String) -> JSONValue {
                    .object([
                        "aps": .object(["alert": .object(["title": .string("你好，iOS"), "body": .string(body)])]),
                        "data": .object(["customId": .string(customID)]),
                    ])
                }
                let production = payloads("APNS")
                #expect(production.contains(apple("production", customID: "123")))
                #expect(production.contains(apple("production only", customID: "456")))
                #expect(!production.contains(apple("sandbox", customID: "123")))
                #expect(sandbox.contains(apple("sandbox", customID: "123")))
                #expect(!sandbox.contains(apple("production", customID: "123")))
                #expect(sandbox.contains(.object(["aps": .object(["alert": .string("默认消息（仅APNS）")])])))
                #expect(sandbox.contains(.object(["aps": .object(["alert": .string("默认消息（终端）")])])))
                #expect(production.count == 4 && sandbox.count == 5)
                // The workers send in any order: tell the FCM messages apart by their data.
                let messages = harness.fcm.requests.compactMap { $0.json?.objectValue?["message"]?.objectValue }
                let fcm = messages.first { $0["data"]?.objectValue?["order"] != nil }
                #expect(fcm?["notification"] == .object(["title": .string("Hello"), "body": .string("from boto3")]))
                #expect(fcm?["android"]?.objectValue?["ttl"] == .string("600s"))
                let topicFCM = messages.first { $0["data"]?.objectValue?["story"] != nil }
                #expect(topicFCM?["data"]?.objectValue?["story"] == .string("7"))
                #expect(topicFCM != nil && topicFCM?["notification"] == nil)
                let mixedFCM = messages.first { $0["data"]?.objectValue?["customId"] == .string("123") }
                #expect(
                    mixedFCM?["notification"] == .object(["title": .string("你好，Android"), "body": .string("这是提醒内容")]))
                #expect(messages.contains { $0["notification"] == .object(["body": .string("默认消息（仅APNS）")]) })
                // AWS's FCM example, GCM alone to an Android endpoint: delivered as given.
                let example = messages.first { $0["data"]?.objectValue?["dataKey"] != nil }
                #expect(
                    example?["notification"]
                        == .object(["title": .string("Hello"), "body": .string("This is a test.")]))
                #expect(example?["data"] == .object(["dataKey": .string("example")]))
                // The legacy GCM payload in FCM v1's names.
                let legacy = messages.first { $0["data"]?.objectValue?["legacy"] != nil }
                #expect(
                    legacy?["notification"]
                        == .object(["title": .string("Legacy"), "body": .string("from the GCM key")]))
                #expect(
                    legacy?["android"]?.objectValue?["notification"]
                        == .object([
                            "channel_id": .string("alerts"), "visibility": .string("PUBLIC"),
                            "icon": .string("ic_stat_alert"), "color": .string("#336699"), "sound": .string("default"),
                            "tag": .string("legacy"), "click_action": .string("OPEN_ALERT"),
                        ]))
                #expect(harness.fcm.requests.allSatisfy { $0.status == 200 })
            }
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }

    /// Runs the script against `port`; its exit status, standard output and standard error.
    static func run(port: Int) async throws -> (Int32, String, String) {
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_SNS_ENDPOINT"] = "http://127.0.0.1:\(port)/sns"
        environment["HERALD_SNS_ACCESS_KEY_ID"] = SNSCaller.accessKeyID
        environment["HERALD_SNS_SECRET_ACCESS_KEY"] = SNSCaller.secretAccessKey
        environment["HERALD_SNS_REGION"] = "us-east-1"
        for name in ["AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_CONFIG_FILE"] { environment[name] = nil }
        return try await ScriptProcess.run(TestPython.tools.command(script), environment: environment)
    }
}

extension JSONValue {
    fileprivate var text: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}

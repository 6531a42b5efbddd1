import Foundation
import HeraldCore
import HeraldEngine
import HeraldSNS
import HeraldTestSupport
import Testing

/// Installations with `service: sns` delivered through a real SNS-compatible server (moto): a
/// platform endpoint per token, `Publish` with `MessageStructure=json`, the platform key following
/// the platform and environment, each value a JSON string (the SNS notes' two classic mistakes).
@Suite("SNS delivery (moto)", .serialized, .enabled(if: MotoServer.isAvailable, "moto is not installed (scripts/moto)"))
struct SNSDeliveryTests {
    @Test("iOS sandbox, iOS production and Android endpoints each get their own key, as a JSON string")
    func publishPerPlatform() async throws {
        let moto = try await MotoServer.start()
        defer { moto.stop() }
        let client = try SNSClient(
            configuration: .init(
                region: "us-east-1", credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "x"),
                endpoint: moto.endpoint))
        func application(_ platform: SNSPlatform) async throws -> String {
            try await client.createPlatformApplication(
                name: "herald-\(platform.key.lowercased())", platform: platform,
                attributes: ["PlatformCredential": "test-credential"])
        }
        let applications = SNSTransport.Applications(
            apns: try await application(.apns(.production)), apnsSandbox: try await application(.apns(.sandbox)),
            gcm: try await application(.gcm))
        let transports = AppTransports([
            SNSTransport(client: client, applications: applications, topic: EngineHarness.topic)
        ])
        let server = try await ServerHarness(transports: ["demo": transports])
        try await server.run { api in
            let sandbox = Fixtures.apnsToken()
            _ = try await api.register(
                #"{"platform":"ios","service":"sns","environment":"sandbox","token":"\#(sandbox)","user_id":"ann"}"#)
            _ = try await api.register(
                #"{"platform":"ios","service":"sns","token":"\#(Fixtures.apnsToken())","user_id":"ann"}"#)
            _ = try await api.register(
                #"{"platform":"android","service":"sns","token":"fcm-token:\#(UUID().uuidString)","user_id":"ann"}"#)
            let id = try await api.send(
                #"{"target":{"user_ids":["ann"]},"payload":{"title":"Vehicle detected","body":"At the gate"}}"#)
            try await server.dispatcher.runDueJobs()
            #expect(try await api.notification(id)["counts.sent"] == .number(3))
        }
        guard
            case .array(let endpoints)? = try await moto.modelData().objectValue?["sns"]?.objectValue?[
                "PlatformEndpoint"]
        else { throw TestFailure("moto has no endpoints") }
        #expect(endpoints.count == 3)
        var byKey: [String: JSONValue] = [:]
        for endpoint in endpoints {
            guard case .string(let arn)? = endpoint.objectValue?["arn"] else { continue }
            for text in try await moto.messages(endpointARN: arn).values {
                let message = try #require(try JSONValue.parse(Array(text.utf8)).objectValue)
                #expect(message["default"] == .string("At the gate"))
                for (key, value) in message where key != "default" {
                    // Never an object: SNS wants the provider payload as a string.
                    guard case .string(let payload) = value else {
                        Issue.record("\(key) holds \(value), not a JSON string")
                        continue
                    }
                    byKey[key] = try JSONValue.parse(Array(payload.utf8))
                }
            }
        }
        #expect(Set(byKey.keys) == ["APNS", "APNS_SANDBOX", "GCM"])
        for key in ["APNS", "APNS_SANDBOX"] {
            let alert = byKey[key]?.objectValue?["aps"]?.objectValue?["alert"]?.objectValue
            #expect(alert?["title"] == .string("Vehicle detected"), "\(key)")
        }
        let fcm = byKey["GCM"]?.objectValue?["fcmV1Message"]?.objectValue?["message"]?.objectValue
        #expect(fcm?["notification"]?.objectValue?["title"] == .string("Vehicle detected"))
        #expect(fcm?["token"] == nil)
        await transports.shutdown()
    }
}

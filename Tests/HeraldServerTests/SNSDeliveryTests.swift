import Foundation
import HTTPTypes
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
    /// An SNS client of moto (which takes any credentials while its authentication is off).
    static func client(_ moto: MotoServer) throws -> SNSClient {
        try SNSClient(
            configuration: .init(
                region: "us-east-1", credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "x"),
                endpoint: moto.endpoint))
    }

    @Test("iOS sandbox, iOS production and Android endpoints each get their own key, as a JSON string")
    func publishPerPlatform() async throws {
        let moto = try await MotoServer.start()
        defer { moto.stop() }
        let client = try Self.client(moto)
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

    @Test(
        "Registering creates the endpoint (CustomUserData = id) and stores sns_endpoint_arn; a new token updates it; delete deletes it"
    )
    func endpointLifecycle() async throws {
        let moto = try await MotoServer.start()
        defer { moto.stop() }
        let client = try Self.client(moto)
        let application = try await client.createPlatformApplication(
            name: "herald-sandbox", platform: .apns(.sandbox), attributes: ["PlatformCredential": "test-credential"])
        let transports = AppTransports([
            SNSTransport(client: client, applications: .init(apnsSandbox: application), topic: EngineHarness.topic)
        ])
        let server = try await ServerHarness(transports: ["demo": transports])
        try await server.run { api in
            let token = Fixtures.apnsToken()
            let id = try await api.register(
                #"{"platform":"ios","service":"sns","environment":"sandbox","token":"\#(token)","user_id":"ann"}"#)
            let read = try await api.call(.get, "/v1/installations/\(id)")
            let arn = try #require(read.string("sns_endpoint_arn"))
            #expect(arn.hasPrefix("arn:aws:sns:us-east-1:"))
            var attributes = try await client.getEndpointAttributes(endpointARN: arn)
            #expect(attributes.token == token)
            // moto keeps CustomUserData beside the attributes (SNS returns it among them).
            guard
                case .array(let endpoints)? = try await moto.modelData().objectValue?["sns"]?.objectValue?[
                    "PlatformEndpoint"]
            else { throw TestFailure("moto has no endpoints") }
            let stored = endpoints.first { $0.objectValue?["arn"] == .string(arn) }
            #expect(stored?.objectValue?["custom_user_data"] == .string(id))
            let renewed = Fixtures.apnsToken()
            let patched = try await api.call(.patch, "/v1/installations/\(id)", body: #"{"token":"\#(renewed)"}"#)
            #expect(patched.string("sns_endpoint_arn") == arn)
            attributes = try await client.getEndpointAttributes(endpointARN: arn)
            #expect(attributes.token == renewed)
            #expect(attributes.enabled == true)
            #expect(try await api.call(.delete, "/v1/installations/\(id)").status == .noContent)
            let error = await #expect(throws: SNSError.self) {
                _ = try await client.getEndpointAttributes(endpointARN: arn)
            }
            #expect(error?.awsCode == "NotFound")
        }
        await transports.shutdown()
    }

    @Test("An endpoint SNS has disabled answers EndpointDisabled: the installation is invalidated")
    func disabledEndpoint() async throws {
        let moto = try await MotoServer.start()
        defer { moto.stop() }
        let client = try Self.client(moto)
        let application = try await client.createPlatformApplication(
            name: "herald-gcm", platform: .gcm, attributes: ["PlatformCredential": "test-credential"])
        let transports = AppTransports([SNSTransport(client: client, applications: .init(gcm: application))])
        let server = try await ServerHarness(transports: ["demo": transports])
        try await server.run { api in
            let token = "fcm-token:\(UUID().uuidString)"
            let id = try await api.register(
                #"{"platform":"android","service":"sns","token":"\#(token)","user_id":"ann"}"#)
            let arn = try #require(try await api.call(.get, "/v1/installations/\(id)").string("sns_endpoint_arn"))
            try await client.setEndpointAttributes(
                endpointARN: arn, SNSEndpointAttributes(token: token, enabled: false))
            let sent = try await api.send(#"{"target":{"user_ids":["ann"]},"payload":{"title":"Hi"}}"#)
            try await server.dispatcher.runDueJobs()
            #expect(try await api.notification(sent)["counts.invalid"] == .number(1))
            #expect(try await api.call(.get, "/v1/installations/\(id)")["valid"] == .bool(false))
        }
        await transports.shutdown()
    }
}

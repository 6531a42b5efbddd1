import Foundation
import HTTPTypes
import HeraldCore
import HeraldEngine
import HeraldProviderMocks
import HeraldSNS
import HeraldSQLite
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

/// Installations with `service: sns` delivered through a real SNS-compatible server (moto): a
/// platform endpoint per token, `Publish` with `MessageStructure=json`, the platform key following
/// the platform and environment, each value a JSON string (the SNS notes' two classic mistakes).
@Suite("SNS delivery (moto)", .serialized)
struct SNSDeliveryTests {
    /// A client of moto, one `GCM` platform application, and the app "demo" delivering through it.
    static func gcmApp(_ moto: MotoServer) async throws -> (SNSClient, AppTransports, ServerHarness) {
        let client = try await SNSFixtures.client(moto)
        let application = try await client.createPlatformApplication(
            name: "herald-gcm", platform: .gcm, attributes: ["PlatformCredential": "test-credential"])
        let transports = AppTransports([SNSTransport(client: client, applications: .init(gcm: application))])
        return (client, transports, try await ServerHarness(transports: ["demo": transports]))
    }

    /// The app "demo" delivering through moto's iOS (both environments) and Android platform applications.
    static func platformServer(_ moto: MotoServer) async throws -> (ServerHarness, AppTransports) {
        let client = try await SNSFixtures.client(moto)
        let applications = try await SNSFixtures.applications(client)
        let transports = AppTransports([
            SNSTransport(client: client, applications: applications, topic: EngineHarness.topic)
        ])
        return (try await ServerHarness(transports: ["demo": transports]), transports)
    }

    @Test("iOS sandbox, iOS production and Android endpoints each get their own key, as a JSON string")
    func publishPerPlatform() async throws {
        let moto = try await MotoServer.start()
        defer { moto.stop() }
        let (server, transports) = try await Self.platformServer(moto)
        try await server.run { api in
            let sandbox = Fixtures.apnsToken()
            _ = try await api.register(
                #"{"platform":"ios","service":"sns","environment":"sandbox","token":"\#(sandbox)","user_id":"ann"}"#)
            _ = try await api.register(
                #"{"platform":"ios","service":"sns","token":"\#(Fixtures.apnsToken())","user_id":"ann"}"#)
            _ = try await api.register(
                #"{"platform":"android","service":"sns","token":"fcm-token:\#(UUID().uuidString)","user_id":"ann"}"#)
            // Sandbox tokens take the apns_sandbox overrides, production ones apns.
            let id = try await api.send(
                #"{"target":{"user_ids":["ann"]},"payload":{"title":"Vehicle detected","body":"At the gate","sound":"default","#
                    + #""overrides":{"apns_sandbox":{"aps":{"alert":{"subtitle":"development build"}}}}}}"#)
            try await server.dispatcher.runDueJobs()
            let deliveries = try await api.call(.get, "/v1/notifications/\(id)/deliveries").json
            #expect(try await api.notification(id)["counts.sent"] == .number(3), "\(String(describing: deliveries))")
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
            #expect(alert?["subtitle"] == (key == "APNS" ? nil : .string("development build")), "\(key)")
        }
        let fcm = byKey["GCM"]?.objectValue?["fcmV1Message"]?.objectValue?["message"]?.objectValue
        #expect(fcm?["notification"]?.objectValue?["title"] == .string("Vehicle detected"))
        #expect(fcm?["token"] == nil)
        // An Android endpoint's message carries no block for Apple devices.
        #expect(fcm?["apns"] == nil)
        #expect(fcm?["android"]?.objectValue?["notification"]?.objectValue?["sound"] == .string("default"))
        await transports.shutdown()
    }

    @Test(
        "Registering creates the endpoint (CustomUserData = id) and stores sns_endpoint_arn; a new token updates it; delete deletes it"
    )
    func endpointLifecycle() async throws {
        let moto = try await MotoServer.start()
        defer { moto.stop() }
        let client = try await SNSFixtures.client(moto)
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
        let (client, transports, server) = try await Self.gcmApp(moto)
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

    @Test(
        "With a broadcast topic, endpoints are subscribed on register, a broadcast is one topic Publish carrying every platform's key, and delete unsubscribes"
    )
    func topicBroadcast() async throws {
        let moto = try await MotoServer.start()
        defer { moto.stop() }
        let client = try await SNSFixtures.client(moto)
        let applications = try await SNSFixtures.applications(client)
        let topic = try await client.createTopic(name: "herald-broadcast")
        let transports = AppTransports([
            SNSTransport(client: client, applications: applications, topic: EngineHarness.topic, broadcastTopic: topic)
        ])
        /// The endpoints subscribed to the topic.
        @Sendable func subscribed() async throws -> Set<String> {
            Set(try await client.applicationSubscriptions(topicARN: topic).values)
        }
        let server = try await ServerHarness(transports: ["demo": transports])
        try await server.run { api in
            var ids: [String] = []
            ids.append(
                try await api.register(
                    #"{"platform":"ios","service":"sns","environment":"sandbox","token":"\#(Fixtures.apnsToken())"}"#))
            ids.append(
                try await api.register(#"{"platform":"ios","service":"sns","token":"\#(Fixtures.apnsToken())"}"#))
            ids.append(
                try await api.register(
                    #"{"platform":"android","service":"sns","token":"fcm-token:\#(UUID().uuidString)"}"#))
            var arns: [String] = []
            for id in ids {
                arns.append(
                    try #require(try await api.call(.get, "/v1/installations/\(id)").string("sns_endpoint_arn")))
            }
            #expect(try await subscribed() == Set(arns))

            // Per-device rules (preferences) keep the per-endpoint route; without them, one Publish.
            let perDevice = try await api.send(#"{"target":{"all":true},"payload":{"title":"One each"}}"#)
            // The topic message carries each environment's payload: apns_sandbox's for APNS_SANDBOX.
            let broadcast = try await api.send(
                #"{"target":{"all":true},"payload":{"title":"Gate open","body":"Everyone","overrides":{"#
                    + #""apns":{"aps":{"alert":{"subtitle":"production"}}},"#
                    + #""apns_sandbox":{"aps":{"alert":{"subtitle":"development"}}}}},"respect_preferences":false}"#)
            try await server.dispatcher.runDueJobs()
            #expect(try await api.notification(perDevice)["counts.sent"] == .number(3))
            #expect(try await api.notification(broadcast)["counts.sent"] == .number(1))
            var direct = 0
            for arn in arns { direct += try await moto.messages(endpointARN: arn).count }
            #expect(direct == 3, "the per-device notification only")

            guard
                case .array(let topics)? = try await moto.modelData().objectValue?["sns"]?.objectValue?["Topic"],
                let stored = topics.first(where: { $0.objectValue?["arn"] == .string(topic) }),
                case .array(let sent)? = stored.objectValue?["sent_notifications"], sent.count == 1,
                case .array(let fields)? = sent.first, fields.count > 1, case .string(let text) = fields[1]
            else { throw TestFailure("moto recorded no single topic message") }
            let message = try #require(try JSONValue.parse(Array(text.utf8)).objectValue)
            #expect(Set(message.keys) == ["default", "APNS", "APNS_SANDBOX", "GCM"])
            #expect(message["default"] == .string("Everyone"))
            for key in ["APNS", "APNS_SANDBOX", "GCM"] {
                guard case .string(let payload)? = message[key] else {
                    Issue.record("\(key) is not a JSON string")
                    continue
                }
                let parsed = try JSONValue.parse(Array(payload.utf8))
                let title =
                    key == "GCM"
                    ? parsed.objectValue?["fcmV1Message"]?.objectValue?["message"]?.objectValue?["notification"]?
                        .objectValue?["title"]
                    : parsed.objectValue?["aps"]?.objectValue?["alert"]?.objectValue?["title"]
                #expect(title == .string("Gate open"), "\(key)")
                let subtitle = parsed.objectValue?["aps"]?.objectValue?["alert"]?.objectValue?["subtitle"]
                let expected: [String: JSONValue?] = [
                    "APNS": .string("production"), "APNS_SANDBOX": .string("development"), "GCM": nil,
                ]
                #expect(subtitle == expected[key] ?? nil, "\(key)")
            }

            #expect(try await api.call(.delete, "/v1/installations/\(ids[0])").status == .noContent)
            #expect(try await subscribed() == Set(arns.dropFirst()))
        }
        await transports.shutdown()
    }

    @Test("An account deletion and the clean-up job delete the SNS endpoints of the installations they remove")
    func bulkRemovalsDeleteEndpoints() async throws {
        let moto = try await MotoServer.start()
        defer { moto.stop() }
        let (client, transports, server) = try await Self.gcmApp(moto)
        /// Whether SNS still has the endpoint.
        @Sendable func exists(_ arn: String) async throws -> Bool {
            do {
                _ = try await client.getEndpointAttributes(endpointARN: arn)
                return true
            } catch  where error.awsCode == "NotFound" {
                return false
            }
        }
        try await server.run { api in
            var arns: [String: String] = [:]
            for user in ["bob", "bob", "cat"] {
                let token = "fcm-token:\(UUID().uuidString)"
                let id = try await api.register(
                    #"{"platform":"android","service":"sns","token":"\#(token)","user_id":"\#(user)"}"#)
                arns[id] = try #require(try await api.call(.get, "/v1/installations/\(id)").string("sns_endpoint_arn"))
                if user == "cat" {
                    // SNS disables the endpoint; the next send invalidates the installation.
                    try await client.setEndpointAttributes(
                        endpointARN: arns[id]!, SNSEndpointAttributes(token: token, enabled: false))
                }
            }
            let bob = try await api.call(.delete, "/v1/users/bob/installations")
            #expect(bob["deleted"] == .number(2))
            let sent = try await api.send(#"{"target":{"user_ids":["cat"]},"payload":{"title":"Hi"}}"#)
            try await server.dispatcher.runDueJobs()
            #expect(try await api.notification(sent)["counts.invalid"] == .number(1))
            var remaining: Set<String> = []
            for arn in arns.values where try await exists(arn) { remaining.insert(arn) }
            #expect(remaining.count == 1, "bob's two endpoints are gone, cat's (disabled) is not yet")

            server.clock.advance(by: .seconds(CleanupPolicy().invalidAfter.timeInterval + 60))
            try await server.store.scheduleJob(kind: .cleanup, reference: "registry", runAt: server.clock.date)
            let job = try #require(
                try await server.store.claimJob(
                    kinds: [.cleanup], owner: "test", now: server.clock.date,
                    lockedUntil: server.clock.date.addingTimeInterval(60)))
            try await server.dispatcher.process(job, owner: "test", isStopping: { false })
            for arn in remaining { #expect(try await exists(arn) == false, "the clean-up deleted \(arn)") }
        }
        await transports.shutdown()
    }
}

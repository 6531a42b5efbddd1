import Foundation
import HTTPTypes
import HeraldCore
import HeraldEngine
import HeraldProviderMocks
import HeraldSNS
import HeraldServer
import HeraldServerTestSupport
import HeraldSigV4
import HeraldTestSupport
import Testing

@testable import HeraldAOVIS
@testable import HeraldAPI

/// The AOVIS guide's own backend path (`seeds/000` §2 and §7) with `app.<id>.aovis.delivery: sns`,
/// end to end against moto with its SigV4 check on: the register call creates the platform endpoint
/// and back-fills its ARN, a camera event publishes §6's payloads with `MessageStructure=json` under
/// the key of each device's platform and environment, a token change updates the endpoint, and
/// logging out (deleting the token) deletes it.
@Suite(
    "AOVIS through SNS (moto)", .serialized)
struct SNSAOVISDeliveryTests {
    /// The `CustomUserData` moto keeps with an endpoint.
    static func customUserData(_ moto: MotoServer, arn: String) async throws -> String? {
        guard
            case .array(let endpoints)? = try await moto.modelData().objectValue?["sns"]?.objectValue?[
                "PlatformEndpoint"],
            let endpoint = endpoints.first(where: { $0.objectValue?["arn"] == .string(arn) })?.objectValue
        else { return nil }
        return endpoint["custom_user_data"]?.stringValue
    }

    /// The one message moto recorded for an endpoint, parsed: `default` and the platform key, whose
    /// value must be a JSON string (never an object), parsed too.
    static func message(_ moto: MotoServer, arn: String) async throws -> [String: JSONValue] {
        let texts = try await moto.messages(endpointARN: arn)
        #expect(texts.count == 1, "one message to \(arn)")
        let text = try #require(texts.values.first)
        let message = try #require(try JSONValue.parse(Array(text.utf8)).objectValue)
        var parsed: [String: JSONValue] = [:]
        for (key, value) in message {
            if key == "default" {
                parsed[key] = value
                continue
            }
            guard case .string(let payload) = value else {
                Issue.record("\(key) holds \(value), not a JSON string")
                continue
            }
            parsed[key] = try JSONValue.parse(Array(payload.utf8))
        }
        return parsed
    }

    @Test(
        "Register creates and back-fills the endpoint, an event publishes §6's payloads, a new token updates it, logout deletes it",
        arguments: [PushEnvironment.production, .sandbox])
    func endToEnd(environment: PushEnvironment) async throws {
        let moto = try await MotoServer.start()
        defer { moto.stop() }
        let client = try await SNSFixtures.client(moto)
        let applications = try await SNSFixtures.applications(client)
        let transports = AppTransports([
            SNSTransport(client: client, applications: applications, topic: EngineHarness.topic)
        ])
        var dialects = DialectSettings()
        dialects.aovis = ["demo": AOVISConfiguration(apnsEnvironment: environment, deliverThroughSNS: true)]
        let server = try await ServerHarness(transports: ["demo": transports], dialects: dialects)
        let ann = try await server.userToken("ann")
        let appleKey = environment == .production ? "APNS" : "APNS_SANDBOX"
        try await server.run { api in
            try await AOVISFixtures.camera(api, id: "cam-drive", alias: "aovis-n4k-3f9a2c", owners: ["ann"])
            let apnsToken = Fixtures.apnsToken()
            let fcmToken = Fixtures.fcmToken()
            let ios = try await AOVISFixtures.register(api, "ios", apnsToken, as: ann)
            let android = try await AOVISFixtures.register(api, "android", fcmToken, as: ann)

            // §7 step 4: PushToken.endpointArn is not empty — the installation's sns_endpoint_arn,
            // in the platform application of the token's platform and environment.
            var arns: [String: String] = [:]
            for (id, application, token) in [
                (ios, environment == .production ? applications.apns : applications.apnsSandbox, apnsToken),
                (android, applications.gcm, fcmToken),
            ] {
                let read = try await api.call(.get, "/v1/installations/\(id)", bearer: ann)
                #expect(read.string("service") == "sns")
                let arn = try #require(read.string("sns_endpoint_arn"), "endpointArn back-filled")
                arns[id] = arn
                #expect(try await client.getEndpointAttributes(endpointARN: arn).token == token)
                // SNS names an endpoint after its application: `…:endpoint/<platform>/<name>/<id>`.
                let name = try #require(application?.components(separatedBy: ":app/").last)
                #expect(arn.contains(":endpoint/\(name)/"), "\(arn) in \(name)")
                #expect(try await Self.customUserData(moto, arn: arn) == id)
            }
            // Registering the same token again is the same token record and the same endpoint.
            #expect(try await AOVISFixtures.register(api, "ios", apnsToken, as: ann) == ios)
            #expect(
                try await api.call(.get, "/v1/installations/\(ios)", bearer: ann).string("sns_endpoint_arn")
                    == arns[ios])

            // §7 steps 5–6: a classified event publishes to each endpoint, and pushSent becomes true.
            let accepted = try await AOVISFixtures.event(api, id: "evt-1", device: "aovis-n4k-3f9a2c")
            #expect(accepted.status == .created)
            let eventID = try #require(accepted.string("id"))
            _ = try await server.dispatcher.runDueJobs()
            let read = try await api.call(.get, "/api/internal/events/\(eventID)")
            #expect(read["pushSent"] == .bool(true))
            let summary = "A dark SUV entered the driveway"

            let apple = try await Self.message(moto, arn: try #require(arns[ios]))
            #expect(Set(apple.keys) == ["default", appleKey])
            #expect(apple["default"] == .string(summary))
            // §6's iOS structure, key for key.
            #expect(
                apple[appleKey]
                    == .object([
                        "aps": .object([
                            "alert": .object(["title": .string("Vehicle detected"), "body": .string(summary)]),
                            "sound": .string("default"), "mutable-content": .number(1),
                        ]),
                        "deepLink": .string("aovis://event/\(eventID)"), "cloudEventId": .string(eventID),
                        "deviceId": .string("aovis-n4k-3f9a2c"), "eventType": .string("vehicle"),
                    ]))

            let google = try await Self.message(moto, arn: try #require(arns[android]))
            #expect(Set(google.keys) == ["default", "GCM"])
            #expect(google["default"] == .string(summary))
            // §6's Android structure: fcmV1Message.message with notification and string data; SNS adds
            // the token, and the Android options Herald renders (priority, sound) ride beside them.
            let message = try #require(
                google["GCM"]?.objectValue?["fcmV1Message"]?.objectValue?["message"]?.objectValue)
            #expect(
                message["notification"] == .object(["title": .string("Vehicle detected"), "body": .string(summary)]))
            #expect(
                message["data"]
                    == .object([
                        "deepLink": .string("aovis://event/\(eventID)"), "cloudEventId": .string(eventID),
                        "deviceId": .string("aovis-n4k-3f9a2c"), "eventType": .string("vehicle"),
                    ]))
            #expect(Set(message.keys).isSubset(of: ["notification", "data", "android"]))
            #expect(message["token"] == nil)

            // A token change (the app's refreshed token on its push_token_id) updates the endpoint in place.
            let renewed = Fixtures.apnsToken()
            let patched = try await api.call(
                .patch, "/v1/installations/\(ios)", bearer: ann, body: #"{"token":"\#(renewed)"}"#)
            #expect(patched.status == .ok)
            #expect(patched.string("sns_endpoint_arn") == arns[ios])
            let attributes = try await client.getEndpointAttributes(endpointARN: try #require(arns[ios]))
            #expect(attributes.token == renewed)
            #expect(attributes.enabled == true)

            // Logging out deletes the token record, and with it the endpoint.
            for id in [ios, android] {
                #expect(try await api.call(.delete, "/v1/installations/\(id)", bearer: ann).status == .noContent)
                let error = await #expect(throws: SNSError.self) {
                    _ = try await client.getEndpointAttributes(endpointARN: arns[id] ?? "")
                }
                #expect(error?.awsCode == "NotFound")
            }
        }
        await transports.shutdown()
    }
}

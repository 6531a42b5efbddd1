import Foundation
import HeraldCore
import HeraldProviderMocks
import HeraldSNS
import HeraldSigV4
import HeraldTestSupport
import Testing

@Suite(
    "SNS client against moto's SNS", .serialized,
    .motoServer)
struct SNSClientMotoTests {
    let server: MotoServer
    let client: SNSClient

    init() throws {
        server = try #require(MotoServer.current)
        client = try SNSClient(
            configuration: .init(
                region: "us-east-1",
                credentials: AWSCredentials(
                    accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
                endpoint: server.endpoint))
    }

    /// A token no other test uses (moto, like SNS, finds endpoints by token across applications).
    func token() -> String {
        (UUID().uuidString + UUID().uuidString).replacingOccurrences(of: "-", with: "").lowercased()
    }

    func application(_ platform: SNSPlatform) async throws -> String {
        try await client.createPlatformApplication(
            name: "herald-\(UUID().uuidString.prefix(8))", platform: platform,
            attributes: ["PlatformCredential": "test-credential"])
    }

    @Test("Platform applications are created for APNS_SANDBOX and GCM, named in their ARNs")
    func platformApplications() async throws {
        let sandbox = try await application(.apns(.sandbox))
        let gcm = try await application(.gcm)
        #expect(sandbox.hasPrefix("arn:aws:sns:us-east-1:\(MotoServer.accountID):app/APNS_SANDBOX/herald-"))
        #expect(gcm.hasPrefix("arn:aws:sns:us-east-1:\(MotoServer.accountID):app/GCM/herald-"))
    }

    @Test("An endpoint is created with custom user data; the same token and data again returns the same ARN")
    func idempotentCreate() async throws {
        let app = try await application(.apns(.sandbox))
        let token = token()
        let first = try await client.createPlatformEndpoint(
            platformApplicationARN: app, token: token, customUserData: "user-1")
        let again = try await client.createPlatformEndpoint(
            platformApplicationARN: app, token: token, customUserData: "user-1")
        #expect(first.hasPrefix("arn:aws:sns:us-east-1:\(MotoServer.accountID):endpoint/APNS_SANDBOX/"))
        #expect(again == first)
        let attributes = try await client.getEndpointAttributes(endpointARN: first)
        #expect(attributes.token == token)
        #expect(attributes.enabled == true)
    }

    @Test("The same token with other attributes is refused with the existing ARN, which is then adopted")
    func adoptExisting() async throws {
        let app = try await application(.gcm)
        let token = token()
        let existing = try await client.createPlatformEndpoint(
            platformApplicationARN: app, token: token, customUserData: "user-1")
        let error = await #expect(throws: SNSError.self) {
            try await client.createPlatformEndpoint(platformApplicationARN: app, token: token, customUserData: "user-2")
        }
        #expect(error?.code == .service)
        #expect(error?.awsCode == "InvalidParameter")
        #expect(error?.status == 400)
        #expect(error?.existingEndpointARN == existing)

        let registration = try await client.createOrAdoptPlatformEndpoint(
            platformApplicationARN: app, token: token, customUserData: "user-2")
        #expect(registration == .init(endpointARN: existing, adopted: true))
        let fresh = try await client.createOrAdoptPlatformEndpoint(
            platformApplicationARN: app, token: self.token(), customUserData: "user-2")
        #expect(!fresh.adopted)
        #expect(fresh.endpointARN != existing)
    }

    @Test("Attributes are set (a new token, Enabled=true) and read back")
    func setAndGetAttributes() async throws {
        let app = try await application(.apns(.production))
        let arn = try await client.createPlatformEndpoint(platformApplicationARN: app, token: token())
        try await client.setEndpointAttributes(endpointARN: arn, SNSEndpointAttributes(enabled: false))
        #expect(try await client.getEndpointAttributes(endpointARN: arn).enabled == false)
        let renewed = token()
        try await client.setEndpointAttributes(endpointARN: arn, SNSEndpointAttributes(token: renewed, enabled: true))
        let attributes = try await client.getEndpointAttributes(endpointARN: arn)
        #expect(attributes.token == renewed)
        #expect(attributes.enabled == true)
    }

    @Test("Publish with MessageStructure=json answers a MessageId, and moto records the message sent")
    func publish() async throws {
        let app = try await application(.apns(.sandbox))
        let arn = try await client.createPlatformEndpoint(platformApplicationARN: app, token: token())
        let message = SNSMessage.apns(
            [
                "aps": .object([
                    "alert": .object(["title": .string("Vehicle detected"), "body": .string("At the gate")])
                ]),
                "cloudEventId": .string("evt_1"),
            ],
            environment: .sandbox, default: "Vehicle detected")
        let messageID = try await client.publish(
            message, to: .endpoint(arn: arn), attributes: [.timeToLive(seconds: 3600, for: .apns(.sandbox))])
        #expect(!messageID.isEmpty)
        #expect(SNSResponseClassifier.outcome(.success(messageID)) == .delivered(providerID: messageID))
        let recorded = try await server.messages(endpointARN: arn)
        #expect(recorded == [messageID: message.text])
    }

    @Test("A disabled endpoint answers EndpointDisabled: an invalid token")
    func disabledEndpoint() async throws {
        let app = try await application(.gcm)
        let arn = try await client.createPlatformEndpoint(platformApplicationARN: app, token: token())
        try await client.setEndpointAttributes(endpointARN: arn, SNSEndpointAttributes(enabled: false))
        let message = SNSMessage.gcm(fcmV1Message: ["data": .object(["k": .string("v")])], default: "d")
        let error = await #expect(throws: SNSError.self) {
            try await client.publish(message, to: .endpoint(arn: arn))
        }
        #expect(error?.awsCode == "EndpointDisabled")
        #expect(error.map(SNSResponseClassifier.outcome(for:)) == .invalidToken(reason: "EndpointDisabled", since: nil))
    }

    @Test("A deleted endpoint is gone (NotFound: an invalid token), and deleting it again succeeds")
    func deleteEndpoint() async throws {
        let app = try await application(.gcm)
        let arn = try await client.createPlatformEndpoint(platformApplicationARN: app, token: token())
        try await client.deleteEndpoint(endpointARN: arn)
        let error = await #expect(throws: SNSError.self) { try await client.getEndpointAttributes(endpointARN: arn) }
        #expect(error?.awsCode == "NotFound")
        #expect(error?.status == 404)
        #expect(error.map(SNSResponseClassifier.outcome(for:)) == .invalidToken(reason: "NotFound", since: nil))
        try await client.deleteEndpoint(endpointARN: arn)
    }
}

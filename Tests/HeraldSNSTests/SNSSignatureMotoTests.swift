import Foundation
import HeraldCore
import HeraldProviderMocks
import HeraldSNS
import HeraldSigV4
import HeraldTestSupport
import Testing

@Suite(
    "SigV4 against moto with IAM authentication on", .serialized, .motoServer)
struct SNSSignatureMotoTests {
    func accessKey(user: String, allowSNS: Bool, on server: MotoServer) async throws -> AWSCredentials {
        try await server.accessKey(user: user, allowSNS: allowSNS)
    }

    func client(_ credentials: AWSCredentials, _ server: MotoServer) throws -> SNSClient {
        try SNSClient(configuration: .init(region: "us-east-1", credentials: credentials, endpoint: server.endpoint))
    }

    @Test("moto verifies SigV4: the right secret passes; a wrong secret, an unknown key or no permission do not")
    func signatures() async throws {
        let server = try #require(MotoServer.current)
        let herald = try await accessKey(user: "herald", allowSNS: true, on: server)
        let nobody = try await accessKey(user: "nobody", allowSNS: false, on: server)
        try await server.enableAuthentication()

        let arn = try await client(herald, server).createPlatformApplication(name: "signed", platform: .gcm)
        #expect(arn.hasSuffix(":app/GCM/signed"))

        var wrongSecret = herald
        wrongSecret.secretAccessKey += "x"
        let cases: [(AWSCredentials, String)] = [
            (wrongSecret, "SignatureDoesNotMatch"),
            (AWSCredentials(accessKeyID: "AKIAUNKNOWNKEY000000", secretAccessKey: "s"), "InvalidClientTokenId"),
            (nobody, "AccessDenied"),
        ]
        for (credentials, code) in cases {
            let error = await #expect(throws: SNSError.self, "\(code)") {
                try await client(credentials, server).createPlatformApplication(name: "refused", platform: .gcm)
            }
            #expect(error?.awsCode == code, "\(server.log.suffix(2000))")
            #expect(error?.status == 403)
            #expect(error.map(SNSResponseClassifier.outcome(for:)) == .configurationFailure(reason: code))
        }
    }
}

import HeraldCore
import HeraldEngine
import HeraldProviderMocks
import HeraldSNS
import HeraldSigV4
import HeraldTestSupport

/// SNS delivery through moto (a real SNS-compatible server), for the tests of the SNS transport and
/// of the dialects that deliver through it.
package enum SNSFixtures {
    /// An SNS client of moto, signing as an IAM user allowed SNS, with moto's SigV4 check on from
    /// here: a request Herald signed wrong fails the test.
    package static func client(_ moto: MotoServer) async throws -> SNSClient {
        let credentials = try await moto.accessKey(user: "herald", allowSNS: true)
        try await moto.enableAuthentication()
        return try SNSClient(
            configuration: .init(region: "us-east-1", credentials: credentials, endpoint: moto.endpoint))
    }

    /// One platform application for each of `APNS`, `APNS_SANDBOX` and `GCM`.
    package static func applications(_ client: SNSClient) async throws -> SNSTransport.Applications {
        func application(_ platform: SNSPlatform) async throws -> String {
            try await client.createPlatformApplication(
                name: "herald-\(platform.key.lowercased())", platform: platform,
                attributes: ["PlatformCredential": "test-credential"])
        }
        return SNSTransport.Applications(
            apns: try await application(.apns(.production)), apnsSandbox: try await application(.apns(.sandbox)),
            gcm: try await application(.gcm))
    }
}

import HeraldCore
import HeraldSNS
import HeraldServer
import HeraldServerTestSupport
import HeraldSigV4
import Testing

@testable import HeraldAPI
@testable import HeraldSNSAPI

@Suite("SNS-compatible API settings")
struct SNSAPIConfigurationTests {
    static let app = [
        "HERALD_APPS": "shop", "HERALD_APP_SHOP_SERVER_KEY": "hsk_shop-server-key-000",
        "HERALD_APP_SHOP_CLIENT_KEY": "hck_shop-client-key-000",
    ]

    @Test("Keys, region and account are read per app; without keys the API is off")
    func settings() async throws {
        let off = try await HeraldConfiguration.load(file: nil, environment: Self.app)
        #expect(off.dialects.snsAPI["shop"]?.credentials == nil)
        #expect(off.dialects.snsAPI["shop"]?.region == "us-east-1")
        #expect(off.dialects.snsAPI["shop"]?.accountID == "123456789012")
        let on = try await HeraldConfiguration.load(
            file: nil,
            environment: Self.app.merging([
                "HERALD_APP_SHOP_SNS_API_ACCESS_KEY_ID": "AKIDSHOP",
                "HERALD_APP_SHOP_SNS_API_SECRET_ACCESS_KEY": "shop-secret-access-key-0123",
                "HERALD_APP_SHOP_SNS_API_REGION": "eu-west-1", "HERALD_APP_SHOP_SNS_API_ACCOUNT_ID": "000011112222",
            ]) { $1 })
        let settings = try #require(on.dialects.snsAPI["shop"])
        #expect(settings.credentials?.accessKeyID == "AKIDSHOP")
        #expect(settings.region == "eu-west-1")
        #expect(settings.accountID == "000011112222")
    }

    @Test(
        "Bad SNS settings are refused naming the key",
        arguments: [
            (["HERALD_APP_SHOP_SNS_API_ACCESS_KEY_ID": "AKIDSHOP"], "app.shop.sns_api.secret_access_key"),
            (
                ["HERALD_APP_SHOP_SNS_API_SECRET_ACCESS_KEY": "shop-secret-access-key-0123"],
                "app.shop.sns_api.access_key_id"
            ),
            (
                [
                    "HERALD_APP_SHOP_SNS_API_ACCESS_KEY_ID": "AKIDSHOP",
                    "HERALD_APP_SHOP_SNS_API_SECRET_ACCESS_KEY": "short",
                ],
                "app.shop.sns_api.secret_access_key"
            ),
            (["HERALD_APP_SHOP_SNS_API_ACCOUNT_ID": "12345"], "app.shop.sns_api.account_id"),
            (["HERALD_APP_SHOP_SNS_API_REGION": "us east"], "app.shop.sns_api.region"),
        ])
    func invalid(environment: [String: String], key: String) async throws {
        let error = await #expect(throws: HeraldError.self) {
            try await HeraldConfiguration.load(file: nil, environment: Self.app.merging(environment) { $1 })
        }
        #expect(error?.code == "invalid_configuration")
        #expect(error?.field == key)
    }
}

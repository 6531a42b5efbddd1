import Configuration
import Foundation
import HeraldCore
import HeraldEngine
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import HeraldWebPush
import Logging
import Testing

@testable import HeraldAPI

@Suite("Configuration")
struct ConfigurationTests {
    @Test("Defaults with no configuration at all")
    func defaults() async throws {
        let configuration = try await HeraldConfiguration.load(file: nil, environment: [:])
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 8080)
        #expect(configuration.database == .sqlite(path: "./herald.sqlite"))
        #expect(configuration.resolvedSecretKeyFile == "./herald.sqlite.key")
        #expect(configuration.maxBodyBytes == 65536)
        #expect(configuration.apps.isEmpty)
        #expect(configuration.logLevel == .info)
    }

    @Test("Engine pages and pipeline: defaults, settings, and a depth never above the page")
    func enginePipeline() async throws {
        let defaults = try await HeraldConfiguration.load(file: nil, environment: [:]).engine
        #expect(defaults.pageSize == 2000)
        #expect(defaults.pipelineDepth == 4)
        #expect(defaults.batchSize == 500)
        let set = try await HeraldConfiguration.load(
            file: nil, environment: ["HERALD_ENGINE_PAGE_SIZE": "2000", "HERALD_ENGINE_PIPELINE_DEPTH": "8"]
        ).engine
        #expect(set.pipelineDepth == 8)
        #expect(set.batchSize == 250)
        let tiny = try await HeraldConfiguration.load(
            file: nil, environment: ["HERALD_ENGINE_PAGE_SIZE": "2", "HERALD_ENGINE_PIPELINE_DEPTH": "8"]
        ).engine
        #expect(tiny.pipelineDepth == 2)
        #expect(tiny.batchSize == 1)
    }

    @Test("Clean-up rules: \"not seen\" and \"not delivered to\" are off by default, each set on its own")
    func cleanupRules() async throws {
        let defaults = try await HeraldConfiguration.load(file: nil, environment: [:]).engine.cleanupPolicy
        #expect(defaults.unseenAfter == nil)
        #expect(defaults.undeliveredAfter == nil)
        let set = try await HeraldConfiguration.load(
            file: nil, environment: ["HERALD_ENGINE_CLEANUP_UNDELIVERED_DAYS": "90"]
        ).engine.cleanupPolicy
        #expect(set.undeliveredAfter == .seconds(90 * 86_400))
        #expect(set.unseenAfter == nil)
    }

    @Test("Unusable provider credentials stop start-up naming the key, in the configuration's words")
    func unusableCredentials() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let notAKey = directory.file("AuthKey.p8")
        try "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n".write(
            toFile: notAKey, atomically: false, encoding: .utf8)
        let account = directory.file("account.json")
        try #"{"project_id":"demo"}"#.write(toFile: account, atomically: false, encoding: .utf8)
        for (environment, key) in [
            (
                [
                    "HERALD_APP_DEFAULT_APNS_KEY_FILE": notAKey, "HERALD_APP_DEFAULT_APNS_KEY_ID": "ABC123DEFG",
                    "HERALD_APP_DEFAULT_APNS_TEAM_ID": "TEAM123456",
                ],
                "app.default.apns.key_file"
            ),
            (["HERALD_APP_DEFAULT_FCM_SERVICE_ACCOUNT_FILE": account], "app.default.fcm.service_account_file"),
        ] {
            let configuration = try await HeraldConfiguration.load(file: nil, environment: environment)
            let error = #expect(throws: HeraldError.self) { try TransportFactory.make(configuration.providers) }
            #expect(error?.code == "invalid_configuration")
            #expect(error?.field == key)
        }
        // Without credentials every app still gets its transports: payloads are checked, sends fail.
        let bare = try TransportFactory.make(try await HeraldConfiguration.load(file: nil, environment: [:]).providers)
        #expect(bare["default"]?.services == [.apns, .fcm, .webpush, .sns])
    }

    @Test("app.<id>.webpush: a VAPID key file and a subject; a bad key or a missing subject names the key")
    func webPushSettings() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let key = VAPIDKey.generate()
        let file = directory.file("vapid.pem")
        try key.pemRepresentation.write(toFile: file, atomically: false, encoding: .utf8)
        let configured = try await HeraldConfiguration.load(
            file: nil,
            environment: [
                "HERALD_APP_DEFAULT_WEBPUSH_VAPID_PRIVATE_KEY_FILE": file,
                "HERALD_APP_DEFAULT_WEBPUSH_SUBJECT": "mailto:ops@example.com",
            ])
        #expect(configured.providers["default"]?.webPush?.key.publicKeyBase64URL == key.publicKeyBase64URL)
        let transports = try TransportFactory.make(configured.providers)
        #expect(transports["default"]?.services.contains(.webpush) == true)
        for app in transports.values { await app.shutdown() }
        let notAKey = directory.file("nope.pem")
        try "nope".write(toFile: notAKey, atomically: false, encoding: .utf8)
        for (environment, field) in [
            (["HERALD_APP_DEFAULT_WEBPUSH_VAPID_PRIVATE_KEY_FILE": file], "app.default.webpush.subject"),
            (
                [
                    "HERALD_APP_DEFAULT_WEBPUSH_VAPID_PRIVATE_KEY_FILE": notAKey,
                    "HERALD_APP_DEFAULT_WEBPUSH_SUBJECT": "mailto:ops@example.com",
                ], "app.default.webpush.vapid_private_key_file"
            ),
        ] {
            let error = await #expect(throws: HeraldError.self) {
                _ = try await HeraldConfiguration.load(file: nil, environment: environment)
            }
            #expect(error?.field == field)
        }
    }

    @Test("Environment overrides the file; flags override both")
    func layering() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("herald.json")
        try #"""
        {"server": {"host": "0.0.0.0", "port": 9000}, "database": "sqlite:///var/lib/herald/db.sqlite",
         "apps": ["shop"],
         "app": {"shop": {"server_key": "hsk_shop-server-key-000", "client_key": "hck_shop-client-key-000",
                          "jwt": {"hs256_secret": "0123456789abcdef0123456789abcdef", "issuer": "https://id"}}}}
        """#.write(toFile: file, atomically: false, encoding: .utf8)
        let configuration = try await HeraldConfiguration.load(
            file: file, overrides: ["server.host": .init(.string("::1"), isSecret: false)],
            environment: ["HERALD_SERVER_PORT": "9100", "HERALD_APP_SHOP_JWT_LEEWAY_SECONDS": "5"])
        #expect(configuration.host == "::1")
        #expect(configuration.port == 9100)
        #expect(configuration.database == .sqlite(path: "/var/lib/herald/db.sqlite"))
        let app = try #require(configuration.apps.first)
        #expect(app.id == "shop")
        #expect(app.serverKey == "hsk_shop-server-key-000")
        #expect(app.userTokens.issuer == "https://id")
        #expect(app.userTokens.leewaySeconds == 5)
        #expect(app.userTokens.isEnabled)
    }

    @Test("A config file holding secrets is refused while its group or others may read it")
    func secretFilePermissions() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let secrets = directory.file("secrets.yaml")
        try """
        apps: [shop]
        app:
          shop: {server_key: hsk_shop-server-key-000, client_key: hck_shop-client-key-000}
        """.write(toFile: secrets, atomically: false, encoding: .utf8)
        let plain = directory.file("plain.yaml")
        try "server: {port: 9000}\nhttp: {header_timeout_seconds: 5}\n".write(
            toFile: plain, atomically: false, encoding: .utf8)
        for mode in [0o644, 0o640, 0o604, 0o620] {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: secrets)
            let error = await #expect(throws: HeraldError.self) {
                try await HeraldConfiguration.load(file: secrets, environment: [:])
            }
            #expect(error?.code == "invalid_configuration")
            #expect(error?.field == "config")
            #expect(error?.message.contains("chmod 600") == true, "\(error?.message ?? "")")
            #expect(error?.message.contains("hsk_shop") == false, "the secret itself is never named")
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secrets)
        #expect(try await HeraldConfiguration.load(file: secrets, environment: [:]).apps.first?.id == "shop")
        // Without secrets a file may be world-readable; secrets may come from the environment.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: plain)
        let configuration = try await HeraldConfiguration.load(
            file: plain,
            environment: [
                "HERALD_APPS": "shop", "HERALD_APP_SHOP_SERVER_KEY": "hsk_shop-server-key-000",
                "HERALD_APP_SHOP_CLIENT_KEY": "hck_shop-client-key-000",
            ])
        #expect(configuration.port == 9000)
        #expect(configuration.http.headerTimeoutSeconds == 5)
        #expect(configuration.apps.first?.serverKey == "hsk_shop-server-key-000")
    }

    @Test(
        "Bad settings are refused naming the key",
        arguments: [
            (["HERALD_SERVER_PORT": "eighty"], "server.port"),
            (["HERALD_SERVER_PORT": "70000"], "server.port"),
            (["HERALD_LOG_LEVEL": "loud"], "log.level"),
            (["HERALD_DATABASE": "mysql://db"], "database"),
            (["HERALD_APPS": "shop"], "app.shop.server_key"),
            (["HERALD_APPS": "Bad.Id"], "apps"),
            (["HERALD_APP_DEFAULT_JWT_HS256_SECRET": "short"], "app.default.jwt.hs256_secret"),
            (
                ["HERALD_APP_DEFAULT_APNS_KEY_FILE": "/etc/AuthKey.p8", "HERALD_APP_DEFAULT_APNS_CONNECTIONS": "0"],
                "app.default.apns.connections"
            ),
            (
                [
                    "HERALD_APP_DEFAULT_FCM_SERVICE_ACCOUNT_FILE": "/etc/fcm.json",
                    "HERALD_APP_DEFAULT_FCM_CONNECTIONS": "65",
                ], "app.default.fcm.connections"
            ),
            (["HERALD_ENGINE_PIPELINE_DEPTH": "0"], "engine.pipeline_depth"),
            (["HERALD_HTTP_HEADER_TIMEOUT_SECONDS": "0"], "http.header_timeout_seconds"),
            (["HERALD_HTTP_BODY_TIMEOUT_SECONDS": "soon"], "http.body_timeout_seconds"),
            (["HERALD_HTTP_MAX_HEADER_BYTES": "100"], "http.max_header_bytes"),
            (["HERALD_ENGINE_PIPELINE_DEPTH": "deep"], "engine.pipeline_depth"),
            (["HERALD_ENGINE_PAGE_SIZE": "20000"], "engine.page_size"),
            (["HERALD_ENGINE_CLEANUP_UNDELIVERED_DAYS": "-1"], "engine.cleanup.undelivered_days"),
            (["HERALD_ENGINE_CHANNEL_CONFIRM_MS": "10"], "engine.channel.confirm_ms"),
            (["HERALD_APP_DEFAULT_SNS_GCM_APPLICATION_ARN": "gcm"], "app.default.sns.gcm_application_arn"),
            (
                [
                    "HERALD_APP_DEFAULT_SNS_GCM_APPLICATION_ARN": "arn:aws:sns:us-east-1:123456789012:app/GCM/a",
                    "HERALD_APP_DEFAULT_SNS_BROADCAST_TOPIC_ARN": "arn:aws:sns:us-east-1:123456789012:app/GCM/a",
                ], "app.default.sns.broadcast_topic_arn"
            ),
        ])
    func invalid(environment: [String: String], key: String) async throws {
        let error = await #expect(throws: HeraldError.self) {
            try await HeraldConfiguration.load(file: nil, environment: environment)
        }
        #expect(error?.code == "invalid_configuration")
        #expect(error?.field == key)
    }
}

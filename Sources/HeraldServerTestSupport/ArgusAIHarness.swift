import Foundation
import HTTPTypes
import HeraldAPI
import HeraldArgusAI
import HeraldCore
import HeraldServer
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting

/// The server (and, for events, the mock providers) with the ArgusAI settings of the app `demo`.
package struct ArgusAIHarness {
    /// The document's example device id.
    package static let deviceID = "550e8400-e29b-41d4-a716-446655440000"
    /// The document's example token is elided (`1234567890abcdef...`): the same digits, to 64.
    package static let deviceToken = String(repeating: "1234567890abcdef", count: 4)

    package let server: ServerHarness
    package let engine: EngineHarness?
    package let settings: ArgusAIConfiguration

    /// Just the server.
    package init(settings: ArgusAIConfiguration = ArgusAIConfiguration()) async throws {
        server = try await ServerHarness()
        engine = nil
        self.settings = settings
    }

    /// The server with real provider clients against the mock APNs and FCM.
    package init(engine: EngineHarness, settings: ArgusAIConfiguration) {
        server = engine.server
        self.engine = engine
        self.settings = settings
    }

    /// Runs `test` against the router built with the ArgusAI settings, then stops any mocks.
    package func run(_ test: @Sendable (API) async throws -> Void) async throws {
        var configuration = server.configuration
        configuration.dialects.argus = ["demo": settings]
        let clock = server.clock
        let app = Application(
            router: try HeraldApplication.router(
                configuration: configuration, store: server.store, apps: server.apps, dispatcher: server.dispatcher,
                now: { clock.date }
            ).router)
        do {
            try await app.test(.router) { client in try await test(API(client: client)) }
        } catch {
            await engine?.stop()
            throw error
        }
        await engine?.stop()
    }

    /// The document's example registration request, with another device id, token, platform,
    /// service or bundle id when a test needs one.
    package static func registration(
        deviceID: String = deviceID, token: String = deviceToken, platform: String = "ios",
        service: String = "apns", bundleID: String = "com.argusai.app"
    ) -> String {
        """
        {
          "device_token": "\(token)",
          "platform": "\(platform)",
          "push_service": "\(service)",
          "token_type": "production",
          "device_id": "\(deviceID)",
          "device_model": "iPhone15,3",
          "os_version": "iOS 18.0",
          "app_version": "1.0.0",
          "app_bundle_id": "\(bundleID)"
        }
        """
    }
}

extension API {
    /// Registers a device through the dialect as `user` and returns its id.
    package func argusRegister(_ body: String, as user: String) async throws -> String {
        let response = try await call(.post, "/api/v1/push/mobile/register", bearer: user, body: body)
        guard response.status == .created, let id = response.string("id") else {
            throw TestFailure("registration failed: \(response.status) \(String(describing: response.json))")
        }
        return id
    }
}

extension JSONValue {
    /// Parses a JSON literal of a test.
    package static func literal(_ text: String) throws -> JSONValue { try JSONValue.parse(Array(text.utf8)) }
}

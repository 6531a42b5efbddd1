import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine
import HeraldHomeAssistant
import HeraldSQLite
import HeraldServer
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore

/// Calls the Home Assistant push relay as Home Assistant's `mobile_app` notify platform does
/// (`homeassistant/components/mobile_app/notify.py`): the shared aiohttp session's `json=` body —
/// Home Assistant's orjson encoder, compact, keys in the order the platform builds them (message,
/// title, data, push_token, registration_info {app_id, app_version, webhook_id, os_version}) —
/// with `Content-Type: application/json` and no credential.
package struct HomeAssistantCaller {
    package static let iOSAppID = "io.robbie.HomeAssistant"
    package static let androidAppID = "io.homeassistant.companion.android"
    package static let webhookID = "5f1b8c0c2b4e4d7c9a3f"

    package let client: any TestClientProtocol

    package init(client: any TestClientProtocol) {
        self.client = client
    }

    /// The relay settings of the harness's `demo` app.
    package static func dialects(
        maximumPerDay: Int = HomeAssistantRelayConfiguration.defaultMaximumPerDay
    ) -> DialectSettings {
        var settings = DialectSettings()
        settings.homeAssistant = ["demo": HomeAssistantRelayConfiguration(relay: true, maximumPerDay: maximumPerDay)]
        return settings
    }

    /// The body Home Assistant sends, byte for byte as its encoder writes it (`data` as given).
    package static func body(
        message: String, title: String? = nil, data: String? = nil, token: String, appID: String = androidAppID,
        osVersion: String? = "14", webhookID: String = webhookID
    ) -> String {
        var parts = [#""message":\#(quoted(message))"#]
        if let title { parts.append(#""title":\#(quoted(title))"#) }
        if let data { parts.append(#""data":\#(data)"#) }
        parts.append(#""push_token":\#(quoted(token))"#)
        var info = [
            #""app_id":\#(quoted(appID))"#, #""app_version":"2024.3.3""#, #""webhook_id":\#(quoted(webhookID))"#,
        ]
        if let osVersion { info.append(#""os_version":\#(quoted(osVersion))"#) }
        parts.append(#""registration_info":{\#(info.joined(separator: ","))}"#)
        return "{" + parts.joined(separator: ",") + "}"
    }

    private static func quoted(_ text: String) -> String {
        String(decoding: JSONValue.string(text).serialized(), as: UTF8.self)
    }

    /// POSTs a raw body to the relay.
    package func post(_ path: String = "/ha/push", body: String) async throws -> CallResponse {
        let response = try await client.executeRequest(
            uri: path, method: .post,
            headers: [
                .contentType: "application/json", .userAgent: "HomeAssistant/2024.3.3 aiohttp/3.9.3 Python/3.11",
            ],
            body: ByteBuffer(string: body))
        let bytes = Array(response.body.readableBytesView)
        return CallResponse(status: response.status, headers: response.headers, json: try? JSONValue.parse(bytes))
    }

    /// Sends a notification as Home Assistant does.
    package func send(
        _ message: String, title: String? = nil, data: String? = nil, token: String, appID: String = androidAppID,
        webhookID: String = webhookID
    ) async throws -> CallResponse {
        try await post(
            body: Self.body(
                message: message, title: title, data: data, token: token, appID: appID, webhookID: webhookID)
        )
    }

    /// The token's rate limits, sending nothing.
    package func rateLimits(token: String) async throws -> CallResponse {
        try await post("/ha/push/rate_limits", body: #"{"push_token": \#(Self.quoted(token))}"#)
    }
}

extension ServerHarness {
    /// Runs `test` against an application rebuilt on the harness's database file, as after a
    /// restart: a new store, app directory and engine over the same SQLite file.
    package func restarted(
        transports: [String: AppTransports], _ test: @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let store = try SQLiteStore(path: directory.file("herald.sqlite"), cipher: cipher)
        try await store.migrate()
        let clock = self.clock
        let apps = try await AppDirectory(configuration: configuration, store: store, now: { clock.date })
        let dispatcher = Dispatcher(store: store, transports: transports, now: { clock.date })
        let router = try HeraldApplication.router(
            configuration: configuration, store: store, apps: apps, dispatcher: dispatcher, now: { clock.date }
        ).router
        try await Application(router: router).test(.router) { client in try await test(client) }
    }
}

extension CallResponse {
    /// The `rateLimits` counters as (successful, errors, total, maximum, remaining).
    package var rateLimitCounts: [Int?] {
        ["successful", "errors", "total", "maximum", "remaining"].map { int("rateLimits.\($0)") }
    }

    /// Whether the answer is declared as JSON.
    package var isJSON: Bool { headers[.contentType]?.hasPrefix("application/json") == true }
}

import Crypto
import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldLeanCloud
import HeraldServer
import HeraldTestSupport
import HummingbirdTesting
import NIOCore

/// Calls the LeanCloud dialect as the SDKs and the REST guide do, with one of their credentials.
package struct LeanCloudClient {
    package static let appID = "lc-demo-app-id"
    package static let appKey = "lc-demo-app-key-0123"
    package static let masterKey = "lc-demo-master-key-4567"

    /// How a call authenticates.
    package enum Auth {
        /// `X-LC-Id` + `X-LC-Key: <app key>`.
        case appKey
        /// `X-LC-Id` + `X-LC-Key: <master key>,master`.
        case masterKey
        /// `X-LC-Id` + `X-LC-Sign` at `date` (the Python SDK's only form).
        case signed(master: Bool, at: Date)
        /// The REST guide's `X-AVOSCloud-Application-Id` / `-Key` (the app key).
        case legacy
        /// Headers as given.
        case headers(HTTPFields)
    }

    package let client: any TestClientProtocol
    /// The clock the signatures use.
    package let now: @Sendable () -> Date

    package init(client: any TestClientProtocol, now: @escaping @Sendable () -> Date) {
        self.client = client
        self.now = now
    }

    /// The demo app's LeanCloud settings.
    package static func dialects(clientPush: Bool = false) -> DialectSettings {
        var settings = DialectSettings()
        settings.leanCloud = [
            "demo": LeanCloudConfiguration(
                appID: appID, appKey: appKey, masterKey: masterKey, clientPush: clientPush)
        ]
        return settings
    }

    /// `X-LC-Sign` for `key` at `date`: `md5(timestamp + key),timestamp[,master]`.
    package static func sign(_ key: String, at date: Date, master: Bool) -> String {
        let timestamp = String(Int64(date.timeIntervalSince1970 * 1000))
        let digest = Insecure.MD5.hash(data: Array((timestamp + key).utf8)).map { String(format: "%02x", $0) }
        return digest.joined() + "," + timestamp + (master ? ",master" : "")
    }

    package func headers(_ auth: Auth) -> HTTPFields {
        switch auth {
        case .appKey: [HTTPField.Name("X-LC-Id")!: Self.appID, HTTPField.Name("X-LC-Key")!: Self.appKey]
        case .masterKey:
            [HTTPField.Name("X-LC-Id")!: Self.appID, HTTPField.Name("X-LC-Key")!: Self.masterKey + ",master"]
        case .signed(let master, let date):
            [
                HTTPField.Name("X-LC-Id")!: Self.appID,
                HTTPField.Name("X-LC-Sign")!: Self.sign(
                    master ? Self.masterKey : Self.appKey, at: date, master: master),
            ]
        case .legacy:
            [
                HTTPField.Name("X-AVOSCloud-Application-Id")!: Self.appID,
                HTTPField.Name("X-AVOSCloud-Application-Key")!: Self.appKey,
            ]
        case .headers(let fields): fields
        }
    }

    /// One call; the body is sent as given.
    package func call(
        _ method: HTTPRequest.Method, _ uri: String, auth: Auth = .masterKey, body: String? = nil
    ) async throws -> CallResponse {
        var fields = headers(auth)
        fields[.contentType] = "application/json;charset=utf-8"
        let response = try await client.executeRequest(
            uri: uri, method: method, headers: fields, body: body.map { ByteBuffer(string: $0) })
        let bytes = Array(response.body.readableBytesView)
        return CallResponse(status: response.status, headers: response.headers, json: try? JSONValue.parse(bytes))
    }

    /// Saves an installation and returns its objectId.
    package func save(_ body: String, auth: Auth = .appKey) async throws -> String {
        let response = try await call(.post, "/1.1/classes/_Installation?fetchWhenSave=false", auth: auth, body: body)
        guard let id = response.string("objectId") else {
            throw TestFailure("save failed: \(response.status) \(String(describing: response.json))")
        }
        return id
    }

    /// Pushes and returns the notification's objectId.
    package func push(_ body: String, auth: Auth = .masterKey) async throws -> String {
        let response = try await call(.post, "/1.1/push", auth: auth, body: body)
        guard response.status == .ok, let id = response.string("objectId") else {
            throw TestFailure("push failed: \(response.status) \(String(describing: response.json))")
        }
        return id
    }
}

extension CallResponse {
    /// LeanCloud's error code.
    package var leanCloudCode: Int? { int("code") }
}

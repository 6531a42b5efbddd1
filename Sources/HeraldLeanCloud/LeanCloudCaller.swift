import Crypto
import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore

/// Who is calling the LeanCloud API: the app named by `X-LC-Id`, and whether with the master key.
///
/// The SDKs authenticate in one of three ways, all accepted (the newer `X-LC-*` names and the
/// older `X-AVOSCloud-*` names alike):
/// - `X-LC-Id` + `X-LC-Key: <app key>` or `X-LC-Key: <master key>,master`;
/// - `X-LC-Id` + `X-LC-Sign: <md5(timestamp + key) hex>,<timestamp ms>[,master]` (the key is the
///   master key when `,master` follows), the timestamp within the app's skew of Herald's clock;
/// - `X-AVOSCloud-Application-Id` + `X-AVOSCloud-Application-Key` (or `X-AVOSCloud-Master-Key`),
///   or `X-AVOSCloud-Request-Sign` in the signature form.
package struct LeanCloudCaller: Sendable {
    /// The Herald app.
    package var appID: String
    package var settings: LeanCloudConfiguration
    /// Whether the caller proved the master key.
    package var master: Bool
    /// The client's address (the TCP peer), which an app key's registrations count against.
    package var address = "unknown"

    package static let id = HTTPField.Name("X-LC-Id")!
    package static let key = HTTPField.Name("X-LC-Key")!
    package static let sign = HTTPField.Name("X-LC-Sign")!
    package static let legacyID = HTTPField.Name("X-AVOSCloud-Application-Id")!
    package static let legacyKey = HTTPField.Name("X-AVOSCloud-Application-Key")!
    package static let legacyMasterKey = HTTPField.Name("X-AVOSCloud-Master-Key")!
    package static let legacySign = HTTPField.Name("X-AVOSCloud-Request-Sign")!

    /// Authenticates a request's headers against the apps that serve the dialect.
    /// - Throws: `LeanCloudFailure.unauthorized` for a missing or unknown app id, a wrong key, or a
    ///   signature that does not verify or is outside the skew.
    package static func authenticate(
        _ headers: HTTPFields, apps: [String: (appID: String, settings: LeanCloudConfiguration)], now: Date
    ) throws(LeanCloudFailure) -> LeanCloudCaller {
        guard let id = headers[Self.id] ?? headers[Self.legacyID], let app = apps[id] else {
            throw .unauthorized()
        }
        let settings = app.settings
        if let sign = headers[Self.sign] ?? headers[Self.legacySign] {
            let master = try verify(signature: sign, settings: settings, now: now)
            return LeanCloudCaller(appID: app.appID, settings: settings, master: master)
        }
        if let masterKey = headers[Self.legacyMasterKey] {
            guard let expected = settings.masterKey, constantTimeEqual(masterKey, expected) else {
                throw .unauthorized()
            }
            return LeanCloudCaller(appID: app.appID, settings: settings, master: true)
        }
        guard let key = headers[Self.key] ?? headers[Self.legacyKey] else { throw .unauthorized() }
        if key.hasSuffix(",master") {
            guard let expected = settings.masterKey, constantTimeEqual(String(key.dropLast(7)), expected) else {
                throw .unauthorized()
            }
            return LeanCloudCaller(appID: app.appID, settings: settings, master: true)
        }
        guard let expected = settings.appKey, constantTimeEqual(key, expected) else { throw .unauthorized() }
        return LeanCloudCaller(appID: app.appID, settings: settings, master: false)
    }

    /// Checks `<md5 hex>,<timestamp>[,master]`; returns whether it is signed with the master key.
    private static func verify(
        signature: String, settings: LeanCloudConfiguration, now: Date
    ) throws(LeanCloudFailure) -> Bool {
        let parts = signature.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 || (parts.count == 3 && parts[2] == "master"),
            let milliseconds = Int64(parts[1]), parts[1].count <= 16
        else { throw .unauthorized() }
        let master = parts.count == 3
        guard let key = master ? settings.masterKey : settings.appKey else { throw .unauthorized() }
        let skew = Double(settings.maxSignatureSkew.components.seconds)
        guard abs(Double(milliseconds) / 1000 - now.timeIntervalSince1970) <= skew else {
            throw .unauthorized("Request signature expired.")
        }
        guard constantTimeEqual(parts[0].lowercased(), md5Hex(parts[1] + key)) else { throw .unauthorized() }
        return master
    }

    /// The lowercase hex MD5 of `text`'s UTF-8 (LeanCloud's request signature).
    package static func md5Hex(_ text: String) -> String {
        Insecure.MD5.hash(data: Array(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Compares two secrets without stopping at the first difference.
    private static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8)
        let right = Array(rhs.utf8)
        guard left.count == right.count else { return false }
        return zip(left, right).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// Refuses a caller without the master key.
    /// - Throws: `LeanCloudFailure.forbidden`.
    package func requireMaster() throws(LeanCloudFailure) {
        guard master else { throw .forbidden() }
    }

    /// Refuses a push from a caller without the master key unless the app allows client push.
    /// - Throws: `LeanCloudFailure.forbidden` (119), whose message names the setting that allows it
    ///   (the guide's own curl examples push with the app key).
    package func requirePush() throws(LeanCloudFailure) {
        guard master || settings.clientPush else {
            throw .forbidden(
                "Client push is off for this app, so the app key cannot push: set "
                    + "app.\(appID).\(LeanCloudRoutes.settingsKey).client_push to true in Herald's settings "
                    + "(LeanCloud's \"allow client push\"), or push with the master key.")
        }
    }
}

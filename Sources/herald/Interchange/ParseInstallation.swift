import Foundation
import HeraldCore

/// Parse's and LeanCloud's `_Installation` class, as their data exports hold it (`{"results":
/// [...]}` or one object per line): what `herald import --format parse` reads and `herald export
/// --format parse` writes.
///
/// Mapping (import):
/// - `deviceType` `ios`, `osx`/`macos`, `tvos`, `watchos`: an APNs installation of that platform, token
///   `deviceToken` (lower-cased).
/// - `deviceType` `android` (or Parse's `fcm`): FCM with `deviceToken` (Parse, `pushType` `gcm`) or
///   `registrationId` (LeanCloud, `vendor` `fcm`); with neither, LeanCloud's own socket push:
///   a `direct` installation reached over Herald's WebSocket channel, token `installationId`.
///   Other LeanCloud vendors (`hms`, `mi`, …) and `deviceType` `winphone`/`wp`/`winrt`/`dotnet`/`web`/
///   `embedded` are refused.
/// - `installationId` → `device_id`, `channels`, `badge`, `timeZone` → `timezone`, `localeIdentifier` →
///   `locale` (`en-US` read as `en_US`), `appIdentifier` (or LeanCloud's `apnsTopic`) → `bundle_id`,
///   `appVersion`, `user` (a `_User` pointer, or a string) → `user_id`.
/// - Dropped: `objectId`, `createdAt`, `updatedAt`, `ACL`, `appName`, `parseVersion`, `pushType`,
///   `GCMSenderId`, `vendor`, `deviceProfile`, `apnsTeamId`, `valid` and every `_`-prefixed field
///   (MongoDB dumps' internals). Every other field is kept as an attribute.
/// - Parse keeps no APNs environment: installations import as `production`.
public enum ParseInstallation {
    /// Fields read into the installation's own columns, or dropped.
    public static let builtIn: Set<String> = [
        "objectId", "createdAt", "updatedAt", "ACL", "deviceType", "deviceToken", "registrationId", "installationId",
        "channels", "badge", "timeZone", "localeIdentifier", "appIdentifier", "apnsTopic", "appVersion", "user",
        "appName", "parseVersion", "pushType", "GCMSenderId", "vendor", "deviceProfile", "apnsTeamId", "valid",
    ]

    /// Whether a parsed value is a whole export (`{"results": [...]}`) rather than one installation.
    public static func isDocument(_ value: JSONValue) -> Bool {
        if case .array? = value.objectValue?["results"] { return true }
        return false
    }

    /// One `_Installation` object as a registration body (`POST /v1/installations`), for
    /// `InstallationRegistration(json:)` to validate.
    /// - Throws: `HeraldError` naming the field at fault: `invalid_type`, `missing_field`,
    ///   `unsupported_device_type` (a platform Herald does not deliver to).
    public static func registrationBody(_ value: JSONValue) throws(HeraldError) -> JSONValue {
        guard let object = value.objectValue else { throw .invalidType("_Installation", expected: "an object") }
        func string(_ key: String) throws(HeraldError) -> String? {
            switch object[key] {
            case nil, .null?: return nil
            case .string(let text)?: return text
            default: throw .invalidType(key, expected: "a string")
            }
        }
        guard let deviceType = try string("deviceType") else { throw .missingField("deviceType") }
        var body: [String: JSONValue] = [:]
        let installationID = try string("installationId")
        switch deviceType {
        case "ios", "osx", "macos", "tvos", "watchos":
            let platforms = ["ios": "ios", "osx": "macos", "macos": "macos", "tvos": "tvos", "watchos": "watchos"]
            body["platform"] = .string(platforms[deviceType]!)
            body["service"] = .string("apns")
            guard let token = try string("deviceToken") else { throw .missingField("deviceToken") }
            body["token"] = .string(token.lowercased())
        case "android", "fcm":
            body["platform"] = .string("android")
            if let vendor = try string("vendor"), vendor != "fcm" {
                throw .invalidValue(
                    "vendor", code: "unsupported_device_type",
                    "LeanCloud's '\(vendor)' vendor push is not a Herald service; only 'fcm' installations import.")
            }
            var token = try string("registrationId")
            if token == nil { token = try string("deviceToken") }
            if let token {
                body["service"] = .string("fcm")
                body["token"] = .string(token)
            } else if let installationID {
                // LeanCloud's Android SDK kept its own socket: Herald's direct channel takes its place.
                body["service"] = .string("direct")
                body["token"] = .string(installationID)
            } else {
                throw .missingField("deviceToken")
            }
        default:
            throw .invalidValue(
                "deviceType", code: "unsupported_device_type",
                "deviceType '\(deviceType)' has no Herald service (use ios, osx, tvos, watchos or android).")
        }
        body["device_id"] = installationID.map(JSONValue.string)
        if let channels = object["channels"], channels != .null { body["channels"] = channels }
        if let badge = object["badge"], badge != .null { body["badge"] = badge }
        body["timezone"] = try string("timeZone").map(JSONValue.string)
        body["locale"] = try string("localeIdentifier").map { .string($0.replacingOccurrences(of: "-", with: "_")) }
        var bundleID = try string("appIdentifier")
        if bundleID == nil { bundleID = try string("apnsTopic") }
        body["bundle_id"] = bundleID.map(JSONValue.string)
        body["app_version"] = try string("appVersion").map(JSONValue.string)
        switch object["user"] {
        case nil, .null?: break
        case .string(let id)?: body["user_id"] = .string(id)
        case .object(let pointer)?:
            guard case .string(let id)? = pointer["objectId"] else {
                throw .invalidType("user", expected: "a _User pointer with an objectId")
            }
            body["user_id"] = .string(id)
        default: throw .invalidType("user", expected: "a _User pointer")
        }
        let attributes = object.filter { !builtIn.contains($0.key) && !$0.key.hasPrefix("_") }
        if !attributes.isEmpty { body["attributes"] = .object(attributes) }
        return .object(body)
    }

    /// The installation as a Parse `_Installation` object, its token in clear; nil for one Parse
    /// cannot hold (Web Push, SNS).
    public static func object(_ installation: Installation, token: PushToken) -> JSONValue? {
        var object = installation.attributes.filter { !builtIn.contains($0.key) }
        object["objectId"] = .string(installation.id)
        switch (installation.service, token) {
        case (.apns, .device(let device)):
            let types: [Platform: String] = [.macos: "osx", .tvos: "tvos", .watchos: "watchos"]
            object["deviceType"] = .string(types[installation.platform] ?? "ios")
            object["deviceToken"] = .string(device)
        case (.fcm, .device(let device)) where installation.platform == .android:
            object["deviceType"] = .string("android")
            object["deviceToken"] = .string(device)
            object["pushType"] = .string("gcm")
        case (.direct, .device) where installation.platform == .android && installation.deviceID != nil:
            object["deviceType"] = .string("android")
        default:
            return nil
        }
        if let deviceID = installation.deviceID { object["installationId"] = .string(deviceID) }
        object["channels"] = .array(installation.channels.map(JSONValue.string))
        object["badge"] = .number(JSONNumber(installation.badge))
        object["timeZone"] = installation.timezone.map(JSONValue.string)
        object["localeIdentifier"] = installation.locale.map { .string($0.replacingOccurrences(of: "_", with: "-")) }
        object["appIdentifier"] = installation.bundleID.map(JSONValue.string)
        object["appVersion"] = installation.appVersion.map(JSONValue.string)
        if let userID = installation.userID {
            object["user"] = .object([
                "__type": .string("Pointer"), "className": .string("_User"), "objectId": .string(userID),
            ])
        }
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        object["createdAt"] = .string(installation.createdAt.formatted(style))
        object["updatedAt"] = .string(installation.updatedAt.formatted(style))
        return .object(object)
    }
}

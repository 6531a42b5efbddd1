import Foundation
import HeraldAPI
import HeraldCore

/// A `POST /api/v1/push/mobile/register` body, validated and mapped onto a native registration:
/// `device_id`, `platform`, `push_service` (service), `token_type` (environment), `device_token`,
/// `device_model`, `os_version`, `app_version`, `app_bundle_id` (bundle id), and `device_name`.
package struct ArgusAIRegistration: Sendable {
    /// The platforms the document lists (its whitelist), and macOS.
    package static let platforms: [Platform] = [.ios, .ipados, .watchos, .tvos, .android, .macos]
    /// The push services the document names.
    package static let services: [PushService] = [.apns, .fcm]

    package var registration: InstallationRegistration
    /// The client's id for the device (a UUID, as sent).
    package var deviceID: String
    /// The name the user gave the device, if the app sends one.
    package var deviceName: String?

    /// Parses the body for `userID`. Members the document does not name are ignored, so clients that
    /// send more keep working.
    /// - Throws: `HeraldError` naming the first field at fault.
    package init(json: JSONValue, userID: String) throws(HeraldError) {
        let body = try JSONObjectReader(json)
        deviceID = try Self.deviceID(try body.requiredString("device_id"))
        guard let platformName = try body.string("platform") else { throw .missingField("platform") }
        guard let platform = Platform(rawValue: platformName), Self.platforms.contains(platform) else {
            throw .invalidValue(
                "platform",
                "Field 'platform' must be one of: \(Self.platforms.map(\.rawValue).joined(separator: ", ")).")
        }
        let service: PushService
        if let name = try body.string("push_service") {
            guard let named = PushService(rawValue: name), Self.services.contains(named) else {
                throw .invalidValue("push_service", "Field 'push_service' must be apns or fcm.")
            }
            service = named
        } else {
            service = InstallationRules.defaultService(for: platform)
        }
        do throws(HeraldError) {
            try InstallationRules.validate(platform: platform, service: service)
        } catch {
            throw HeraldError(kind: error.kind, code: error.code, message: error.message, field: "push_service")
        }
        let environment = try body.enumeration("token_type", as: PushEnvironment.self) ?? .production
        let token = try body.requiredString("device_token")
        try Self.validateTokenCharacters(token)
        try InstallationRules.validateDeviceToken(token, service: service, platform: platform, field: "device_token")
        let short = InstallationRules.maxShortText
        registration = InstallationRegistration(
            platform: platform, service: service, environment: environment, token: .device(token),
            profile: InstallationProfile(
                userID: userID, deviceID: deviceID, appVersion: try body.string("app_version", maxLength: short),
                osVersion: try body.string("os_version", maxLength: short),
                deviceModel: try body.string("device_model", maxLength: short),
                bundleID: try body.string("app_bundle_id", maxLength: short),
                // The document deletes a token on APNs 410 / FCM UNREGISTERED.
                deleteWhenInvalid: true))
        deviceName = try body.string("device_name", maxLength: ArgusAIDeviceView.maxNameLength)
    }

    /// Checks that a device id is a UUID (the document's security section), as the client sent it.
    /// - Throws: `HeraldError` `invalid_device_id` naming `field`.
    package static func deviceID(_ text: String, field: String = "device_id") throws(HeraldError) -> String {
        guard text.utf8.count == 36, UUID(uuidString: text) != nil else {
            throw .invalidValue(
                field, code: "invalid_device_id",
                "Field '\(field)' must be a UUID like 550e8400-e29b-41d4-a716-446655440000.")
        }
        return text
    }

    /// The document's token sanitizing: hex or base64 (either alphabet, `=` padding at the end) only.
    /// FCM registration tokens are `<instance id>:<token>`, so one colon may join two such parts.
    /// - Throws: `HeraldError` `invalid_token` naming `device_token`.
    package static func validateTokenCharacters(_ token: String) throws(HeraldError) {
        let parts = token.utf8.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        let valid =
            parts.count <= 2
            && parts.allSatisfy { part in
                let body = part.reversed().drop(while: { $0 == UInt8(ascii: "=") })
                return !body.isEmpty && part.count - body.count <= 2 && body.allSatisfy(Self.isBase64Character)
            }
        guard valid else {
            throw .invalidValue(
                "device_token", code: "invalid_token",
                "Field 'device_token' may hold hex or base64 characters only (and one ':' in an FCM token).")
        }
    }

    private static func isBase64Character(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "-"),
            UInt8(ascii: "_"):
            true
        default: false
        }
    }
}

import HeraldAPI
import HeraldCore

/// The body of `POST /api/internal/push/register` (§4 of the AOVIS guide), mapped to a native
/// registration: `ios` → APNs, `android` → FCM; `locale` defaults to `en`, `timezone` to
/// `America/New_York`. Members the guide does not name are ignored, as AOVIS's own server does.
package struct AOVISRegistration: Sendable {
    /// Tokens are at most this many characters (the guide: "1..2048 chars").
    package static let maxTokenLength = 2048
    package static let defaultLocale = "en"
    package static let defaultTimeZone = "America/New_York"

    /// The native registration, without its user.
    package var registration: InstallationRegistration
    /// The camera named by `deviceId` (its id or alias), when the request names one.
    package var deviceReference: String?

    /// Validates the body with the native installation rules plus the guide's token length.
    /// - Throws: `HeraldError` naming the field at fault (the route answers `invalid_body` for any).
    /// - Parameter throughSNS: Register the token for delivery through AWS SNS (the guide's §7: a
    ///   platform endpoint per token) instead of straight to APNs or FCM.
    package init(json: JSONValue, apnsEnvironment: PushEnvironment, throughSNS: Bool = false) throws(HeraldError) {
        let body = try JSONObjectReader(json)
        let platform: Platform
        let service: PushService
        let environment: PushEnvironment
        switch try body.string("platform") {
        case "ios"?: (platform, service, environment) = (.ios, .apns, apnsEnvironment)
        case "android"?: (platform, service, environment) = (.android, .fcm, .production)
        case nil: throw .missingField("platform")
        default: throw .invalidValue("platform", "platform must be ios or android.")
        }
        guard let token = try body.string("token", maxLength: Self.maxTokenLength) else {
            throw .missingField("token")
        }
        try InstallationRules.validateDeviceToken(token, service: service, platform: platform)
        let locale = try InstallationRules.normalizeLocale(
            try body.string("locale", maxLength: 64) ?? Self.defaultLocale)
        let timezone = try body.string("timezone", maxLength: 64) ?? Self.defaultTimeZone
        try InstallationRules.validateTimeZone(timezone)
        registration = InstallationRegistration(
            platform: platform, service: throughSNS ? .sns : service, environment: environment, token: .device(token),
            profile: InstallationProfile(locale: locale, timezone: timezone))
        deviceReference = try body.string("deviceId", maxLength: SourceDevice.maxReferenceLength)
    }
}

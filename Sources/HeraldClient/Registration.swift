import Foundation

/// What a device registers: its token and profile, sent as the body of `POST /v1/installations`.
/// Kept with the installation id in an ``InstallationStore``, so a later token refresh, or a
/// registration the server lost, sends the same profile.
public struct Registration: Sendable, Equatable, Codable {
    /// The push token: APNs tokens as lowercase hex, FCM registration tokens as they are.
    public var token: String
    public var platform: Platform
    public var service: Service
    /// APNs only; nil lets Herald assume production.
    public var environment: Environment?
    /// The app's user; with a user token the server takes the token's user.
    public var userID: String?
    /// The app's own stable id for the device: with one, re-registering a new token keeps the
    /// installation whatever the token.
    public var deviceID: String?
    public var channels: [String]?
    public var locale: String?
    public var timeZone: String?
    public var badge: Int?
    public var appVersion: String?
    public var bundleID: String?
    public var attributes: [String: HeraldJSON]?

    /// Creates a registration.
    public init(
        token: String, platform: Platform, service: Service, environment: Environment? = nil, userID: String? = nil,
        deviceID: String? = nil, channels: [String]? = nil, locale: String? = nil, timeZone: String? = nil,
        badge: Int? = nil, appVersion: String? = nil, bundleID: String? = nil, attributes: [String: HeraldJSON]? = nil
    ) {
        self.token = token
        self.platform = platform
        self.service = service
        self.environment = environment
        self.userID = userID
        self.deviceID = deviceID
        self.channels = channels
        self.locale = locale
        self.timeZone = timeZone
        self.badge = badge
        self.appVersion = appVersion
        self.bundleID = bundleID
        self.attributes = attributes
    }

    enum CodingKeys: String, CodingKey {
        case token, platform, service, environment, channels, locale, badge, attributes
        case userID = "user_id"
        case deviceID = "device_id"
        case timeZone = "timezone"
        case appVersion = "app_version"
        case bundleID = "bundle_id"
    }
}

/// The installation this device registered: Herald's id and what was registered.
public struct RegisteredInstallation: Sendable, Equatable, Codable {
    /// Herald's installation id.
    public var id: String
    /// The registration as last sent.
    public var registration: Registration

    /// Creates a record.
    public init(id: String, registration: Registration) {
        self.id = id
        self.registration = registration
    }
}

/// Device tokens as Herald takes them.
public enum DeviceToken {
    /// An APNs token (`didRegisterForRemoteNotificationsWithDeviceToken`) as lowercase hex.
    public static func hex(_ token: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(token.count * 2)
        for byte in token {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

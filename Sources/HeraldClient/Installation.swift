import Foundation

/// The kind of device, as Herald names it (`ios`, `ipados`, `watchos`, `tvos`, `macos`, `android`).
public struct Platform: RawRepresentable, Sendable, Hashable, Codable {
    public var rawValue: String
    /// Creates a platform from Herald's name for it.
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let iOS = Self(rawValue: "ios")
    public static let iPadOS = Self(rawValue: "ipados")
    public static let watchOS = Self(rawValue: "watchos")
    public static let tvOS = Self(rawValue: "tvos")
    public static let macOS = Self(rawValue: "macos")
    public static let android = Self(rawValue: "android")

    /// The platform this code runs on; nil where Herald has no name for it (Linux).
    public static var current: Platform? {
        #if os(iOS)
            return .iOS
        #elseif os(watchOS)
            return .watchOS
        #elseif os(tvOS)
            return .tvOS
        #elseif os(macOS) || targetEnvironment(macCatalyst)
            return .macOS
        #else
            return nil
        #endif
    }
}

/// The push service that delivers to the device: `apns` (Apple), `fcm` (Firebase), `sns` (AWS SNS).
public struct Service: RawRepresentable, Sendable, Hashable, Codable {
    public var rawValue: String
    /// Creates a service from Herald's name for it.
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let apns = Self(rawValue: "apns")
    public static let fcm = Self(rawValue: "fcm")
    public static let sns = Self(rawValue: "sns")
}

/// Which APNs environment issued the token: `sandbox` (development builds) or `production`.
public struct Environment: RawRepresentable, Sendable, Hashable, Codable {
    public var rawValue: String
    /// Creates an environment from Herald's name for it.
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let sandbox = Self(rawValue: "sandbox")
    public static let production = Self(rawValue: "production")
}

/// A device registered with Herald, as the server returned it.
public struct Installation: Sendable, Equatable, Decodable {
    /// Herald's id for the installation: what opens and preferences name.
    public var id: String
    public var appID: String
    public var userID: String?
    public var deviceID: String?
    public var platform: Platform
    public var service: Service
    public var environment: Environment
    /// The token's last eight characters.
    public var tokenSuffix: String
    public var channels: [String]
    /// BCP 47 (`en-US`).
    public var locale: String?
    /// IANA time zone name (`Europe/Paris`).
    public var timeZone: String?
    public var badge: Int
    public var appVersion: String?
    public var bundleID: String?
    public var attributes: [String: HeraldJSON]
    /// False once a provider called the token invalid (registering it again makes it valid).
    public var valid: Bool

    enum CodingKeys: String, CodingKey {
        case id, platform, service, environment, channels, locale, badge, attributes, valid
        case appID = "app_id"
        case userID = "user_id"
        case deviceID = "device_id"
        case tokenSuffix = "token_suffix"
        case timeZone = "timezone"
        case appVersion = "app_version"
        case bundleID = "bundle_id"
    }
}

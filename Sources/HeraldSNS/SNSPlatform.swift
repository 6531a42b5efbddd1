import HeraldCore

/// The push service behind an SNS platform application, with the APNs environment made part of the
/// type: a sandbox token can only ever be addressed as `APNS_SANDBOX` (the SNS notes' first
/// mistake, a sandbox device getting the `default` text, cannot be written).
public enum SNSPlatform: Sendable, Hashable, CustomStringConvertible {
    /// Apple Push Notification service, in its sandbox (development) or production environment.
    case apns(PushEnvironment)
    /// Firebase Cloud Messaging, which SNS still names `GCM`.
    case gcm

    /// Every platform.
    public static let all: [SNSPlatform] = [.apns(.production), .apns(.sandbox), .gcm]

    /// The platform's name in SNS: the key in a `MessageStructure=json` message and the `Platform`
    /// of a platform application (`APNS`, `APNS_SANDBOX`, `GCM`).
    public var key: String {
        switch self {
        case .apns(.production): "APNS"
        case .apns(.sandbox): "APNS_SANDBOX"
        case .gcm: "GCM"
        }
    }

    /// The platform SNS names so; nil for names Herald does not send to (ADM, BAIDU, WNS…).
    public init?(key: String) {
        guard let platform = Self.all.first(where: { $0.key == key }) else { return nil }
        self = platform
    }

    /// The message attribute that sets a time to live for this platform ("Using the Amazon SNS time
    /// to live message attribute for mobile push notifications"): `AWS.SNS.MOBILE.APNS.TTL`,
    /// `AWS.SNS.MOBILE.APNS_SANDBOX.TTL`, `AWS.SNS.MOBILE.FCM.TTL`.
    public var ttlAttributeName: String {
        switch self {
        case .apns: "AWS.SNS.MOBILE.\(key).TTL"
        case .gcm: "AWS.SNS.MOBILE.FCM.TTL"
        }
    }

    /// The SNS name.
    public var description: String { key }
}
